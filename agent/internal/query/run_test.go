package query_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/query"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// TestRun runs each kind of query against a real workspace with the
// agent's tools.
func TestRun(t *testing.T) {
	root := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":      "module example.com/app\n\ngo 1.26\n",
		"src/main.rs": "fn main() {}\n",
		"Makefile":    "all:\n",
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(content), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "HEAD"), []byte("ref: refs/heads/feature/x\n"), 0o644))
	ws, err := tools.NewWorkspace(root)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	set := tools.Default(ws, tools.Options{Search: true})
	facts := query.Facts{Workspace: ws.Root(), Tools: set,
		Environ:  func() []string { return []string{"HOME=/home/u", "SHELL=/bin/zsh"} },
		LookPath: func(string) (string, error) { return "", errors.New("not found") }}

	tests := []struct {
		q       chat.Query
		want    []string
		isError bool
	}{
		{chat.Query{Kind: chat.QueryRead, Path: "src/main.rs"}, []string{"fn main() {}"}, false},
		{chat.Query{Kind: chat.QueryRead, Path: "../etc/passwd"}, []string{"outside the workspace"}, true},
		{chat.Query{Kind: chat.QueryList, Path: "."}, []string{"src/main.rs", "go.mod"}, false},
		{chat.Query{Kind: chat.QuerySearch, Pattern: "main", Path: "src"}, []string{"src/main.rs:1: fn main() {}"}, false},
		{chat.Query{Kind: chat.QueryEnvironment}, []string{"shell: /bin/zsh", "go: not found", "names only", "HOME, SHELL"}, false},
		{chat.Query{Kind: chat.QueryProject}, []string{"git branch: feature/x", "Go module (go.mod): module example.com/app, go 1.26", "make (Makefile)", "src/"}, false},
		{chat.Query{Kind: "delete"}, []string{"unknown query"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.q.String(), func(t *testing.T) {
			out := query.Run(context.Background(), set, facts, tt.q, "q1", nil)
			require.Equal(t, tt.isError, out.IsError, out.Content)
			for _, w := range tt.want {
				assert.Contains(t, out.Content, w)
			}
		})
	}
}

// TestEnvironmentHidesSecrets plants a key in the environment, under a
// secret-looking name and under an innocent one: the environment query
// shows names only, and leaves out the secret-looking ones.
func TestEnvironmentHidesSecrets(t *testing.T) {
	const key = "sk-ant-PLANTED-0123456789abcdef"
	facts := query.Facts{Workspace: "/ws",
		Environ: func() []string {
			return []string{"ANTHROPIC_API_KEY=" + key, "GITHUB_TOKEN=" + key, "INNOCENT=" + key, "PATH=/usr/bin", "DB_PASSWORD=x"}
		},
		LookPath: func(string) (string, error) { return "", errors.New("not found") }}
	out := facts.Environment(context.Background())
	assert.NotContains(t, out, key)
	assert.NotContains(t, out, "ANTHROPIC_API_KEY")
	assert.NotContains(t, out, "GITHUB_TOKEN")
	assert.NotContains(t, out, "DB_PASSWORD")
	assert.Contains(t, out, "3 that look secret are left out): INNOCENT, PATH")
}

// TestCall maps the file queries to the tools' calls.
func TestCall(t *testing.T) {
	tests := []struct {
		q       chat.Query
		name    string
		args    string
		hasCall bool
	}{
		{chat.Query{Kind: chat.QueryRead, Path: "a.go"}, "read_file", `{"path":"a.go"}`, true},
		{chat.Query{Kind: chat.QueryList}, "list_files", `{}`, true},
		{chat.Query{Kind: chat.QuerySearch, Pattern: "x", Path: "d"}, "search_files", `{"path":"d","pattern":"x"}`, true},
		{chat.Query{Kind: chat.QueryEnvironment}, "", "", false},
	}
	for _, tt := range tests {
		c, ok := query.Call(tt.q, "id")
		require.Equal(t, tt.hasCall, ok)
		if ok {
			assert.Equal(t, tt.name, c.Name)
			assert.JSONEq(t, tt.args, string(c.Arguments))
			assert.Equal(t, "id", c.ID)
		}
	}
}
