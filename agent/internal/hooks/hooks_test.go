package hooks

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		yaml    string
		want    []Hook
		wantErr string
	}{
		{name: "empty", yaml: "\n"},
		{
			name: "every event",
			yaml: "pre_tool:\n  - tools: [bash]\n    command: ./check\n    timeout: 5s\npost_tool:\n  - tools: [edit_file, \"mcp__*\"]\n    command: gofmt -l -w .\nturn_end:\n  - command: go vet ./...\n",
			want: []Hook{
				{Event: PreTool, Command: "./check", Tools: []string{"bash"}, Timeout: 5 * time.Second, Source: "h.yaml:2"},
				{Event: PostTool, Command: "gofmt -l -w .", Tools: []string{"edit_file", "mcp__*"}, Timeout: DefaultTimeout, Source: "h.yaml:6"},
				{Event: TurnEnd, Command: "go vet ./...", Timeout: DefaultTimeout, Source: "h.yaml:9"},
			},
		},
		{name: "unknown event", yaml: "pre_tools:\n  - command: x\n", wantErr: "h.yaml: yaml: unmarshal errors:\n  line 1: field pre_tools not found"},
		{name: "unknown key", yaml: "turn_end:\n  - command: x\n    comand: y\n", wantErr: `h.yaml:3:5: turn_end hook: unknown key "comand" (allowed: command, tools, timeout)`},
		{name: "duplicate key", yaml: "turn_end:\n  - command: x\n    command: y\n", wantErr: `mapping key "command" already defined`},
		{name: "no command", yaml: "post_tool:\n  - tools: [bash]\n", wantErr: "h.yaml:2:5: post_tool hook has no command"},
		{name: "not a mapping", yaml: "turn_end:\n  - go vet\n", wantErr: "h.yaml:2:5: a turn_end hook is a mapping"},
		{name: "tools at turn end", yaml: "turn_end:\n  - command: x\n    tools: [bash]\n", wantErr: "h.yaml:2:5: a turn_end hook runs for no tool"},
		{name: "bad pattern", yaml: "pre_tool:\n  - command: x\n    tools: [\"[\"]\n", wantErr: `h.yaml:2:5: pre_tool hook: tools: "[" is no tool name or pattern`},
		{name: "bad timeout", yaml: "pre_tool:\n  - command: x\n    timeout: soon\n", wantErr: `h.yaml:2:5: pre_tool hook: timeout "soon" is no positive duration`},
		{name: "negative timeout", yaml: "pre_tool:\n  - command: x\n    timeout: -1s\n", wantErr: "is no positive duration"},
		{
			name:    "every error at once",
			yaml:    "pre_tool:\n  - tools: [bash]\npost_tool:\n  - command: x\n    timeout: x\n",
			wantErr: "h.yaml:2:5: pre_tool hook has no command; give the shell command to run, e.g. command: gofmt -l -w .\nh.yaml:4:5: post_tool hook: timeout \"x\"",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse([]byte(tt.yaml), "h.yaml", false)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestMatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tools []string
		name  string
		want  bool
	}{
		{nil, "bash", true},
		{[]string{"bash"}, "bash", true},
		{[]string{"bash"}, "bash2", false},
		{[]string{"edit_file", "bash"}, "bash", true},
		{[]string{"mcp__files__*"}, "mcp__files__read", true},
		{[]string{"mcp__files__*"}, "mcp__docs__read", false},
		{[]string{"read_*"}, "read_file", true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Hook{Tools: tt.tools}.Matches(tt.name), "%v %s", tt.tools, tt.name)
	}
}

// TestLoad reads the user's file, then the project's, through the
// workspace's handle: a link leading out of the workspace is refused, a
// missing file holds nothing, a parse error names the file.
func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	user := filepath.Join(dir, "hooks.yaml")
	require.NoError(t, os.WriteFile(user, []byte("turn_end:\n  - command: mine\n"), 0o644))
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".agent"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ProjectFile), []byte("pre_tool:\n  - command: theirs\n"), 0o644))
	ws, err := tools.NewWorkspace(root)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	ctx := context.Background()

	hs, err := Load(ctx, ws, user, "~/hooks.yaml", true)
	require.NoError(t, err)
	require.Len(t, hs, 2)
	assert.Equal(t, Hook{Event: TurnEnd, Command: "mine", Timeout: DefaultTimeout, Source: "~/hooks.yaml:2"}, hs[0])
	assert.Equal(t, Hook{Event: PreTool, Command: "theirs", Timeout: DefaultTimeout, Source: ".agent/hooks.yaml:2", Project: true}, hs[1])

	hs, err = Load(ctx, ws, user, "~/hooks.yaml", false)
	require.NoError(t, err)
	assert.Len(t, hs, 1, "the project's are not read")

	hs, err = Load(ctx, ws, filepath.Join(dir, "none.yaml"), "none", false)
	require.NoError(t, err)
	assert.Empty(t, hs)

	require.NoError(t, os.WriteFile(user, []byte("turn_end: [1]\n"), 0o644))
	_, err = Load(ctx, ws, user, "~/hooks.yaml", false)
	assert.ErrorContains(t, err, "~/hooks.yaml:1:12: a turn_end hook is a mapping")

	outside := filepath.Join(dir, "evil.yaml")
	require.NoError(t, os.WriteFile(outside, []byte("pre_tool:\n  - command: evil\n"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(root, ProjectFile)))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, ProjectFile)))
	_, err = Load(ctx, ws, "", "", true)
	assert.ErrorContains(t, err, "hooks file .agent/hooks.yaml: ")
	assert.ErrorContains(t, err, "leads outside the workspace")
}
