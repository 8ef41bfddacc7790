package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox/sandboxtest"
)

func TestMutating(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t)
	writable := sandboxtest.New(t, sandbox.Options{Mode: sandbox.Bwrap})
	readOnly := sandboxtest.New(t, sandbox.Options{Mode: sandbox.Bwrap, ReadOnlyWorkspace: true})
	tests := []struct {
		name string
		set  *Set
		want []string
	}{
		{"the default tools", Default(ws, Options{Sandbox: writable}), []string{"bash", "edit_file"}},
		{"bash with a read-only workspace", Default(ws, Options{Sandbox: readOnly}), []string{"edit_file"}},
		{"a tool that does not say counts as mutating", mustSet(t, fakeTool{name: "mcp_tool"}), []string{"mcp_tool"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.set.MutatingNames())
			for _, n := range tt.set.Names() {
				assert.Equal(t, slices.Contains(tt.want, n), tt.set.Mutating(n), n)
			}
			assert.False(t, tt.set.Mutating("no_such_tool"))
		})
	}
}

func TestSetRefuse(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t)
	all := Default(ws, Options{Sandbox: sandboxtest.New(t, sandbox.Options{Mode: sandbox.Bwrap})})
	plan := all.Refuse("plan mode: the workspace is read-only", "edit_file", "bash")

	assert.Equal(t, []string{"list_files", "read_file"}, plan.Names())
	var names []string
	for _, s := range plan.Specs() {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"list_files", "read_file"}, names, "refused tools are not offered")
	assert.Equal(t, []string{"bash", "edit_file", "list_files", "read_file"}, all.Names(), "the set refused from is unchanged")
	assert.Empty(t, plan.MutatingNames())

	out := call(t, plan, "edit_file", obj{"path": "new.txt", "old_str": "", "new_str": "x"})
	assert.True(t, out.IsError)
	assert.Equal(t, "edit_file was not run: plan mode: the workspace is read-only", out.Content)
	assert.NoFileExists(t, filepath.Join(ws.Root(), "new.txt"))

	out = call(t, all, "edit_file", obj{"path": "new.txt", "old_str": "", "new_str": "x"})
	require.False(t, out.IsError, out.Content)
	assert.FileExists(t, filepath.Join(ws.Root(), "new.txt"), "the set refused from still runs it")
}

// mustSet returns a set of the tools.
func mustSet(t *testing.T, tools ...Tool) *Set {
	t.Helper()
	s, err := NewSet(Options{}, tools...)
	require.NoError(t, err)
	return s
}

func TestEditLine(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws.Root(), "a.txt"), []byte("one\ntwo\nthree\ntwo\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws.Root(), "big.txt"), []byte("first\n"+strings.Repeat("z", 40)), 0o644))
	tests := []struct {
		name        string
		args        string
		line, found int
	}{
		{"a unique old_str", `{"path": "a.txt", "old_str": "three\n", "new_str": "3\n"}`, 3, 1},
		{"a new file", `{"path": "new.txt", "old_str": "", "new_str": "x"}`, 1, 1},
		{"old_str twice", `{"path": "a.txt", "old_str": "two", "new_str": "2"}`, 0, 2},
		{"old_str missing", `{"path": "a.txt", "old_str": "four", "new_str": "4"}`, 0, 0},
		{"no such file", `{"path": "gone.txt", "old_str": "x", "new_str": "y"}`, 0, 0},
		{"outside the workspace", `{"path": "../a.txt", "old_str": "x", "new_str": "y"}`, 0, 0},
		{"over the limit", `{"path": "big.txt", "old_str": "first", "new_str": "1"}`, 0, 0},
		{"not an edit's arguments", `[]`, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, found := EditLine(context.Background(), ws, json.RawMessage(tt.args), 32)
			assert.Equal(t, tt.line, line, "line")
			assert.Equal(t, tt.found, found, "found")
		})
	}
	line, _ := EditLine(context.Background(), ws, json.RawMessage(`{"path": "big.txt", "old_str": "first", "new_str": "1"}`), 0)
	assert.Equal(t, 1, line, "0 means the default limit")
}
