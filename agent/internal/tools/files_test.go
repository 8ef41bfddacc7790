package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/internal/atomicfile"
)

// call runs the named tool of s with args encoded as JSON.
func call(t *testing.T, s *Set, name string, args any) chat.ToolOutcome {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	return s.Run(context.Background(), chat.ToolCall{ID: "call_1", Name: name, Arguments: raw}, nil)
}

// obj is a tool's argument object.
type obj = map[string]any

func TestFileToolsRefuseEscapes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := Default(f.ws, Options{Search: true})
	escapes := []struct {
		name, path, wantErr string
	}{
		{"absolute path", f.secret, "is absolute"},
		{"absolute dir", f.outside, "is absolute"},
		{"parent", "../outside/secret.txt", "outside the workspace"},
		{"new file in parent", "../outside/new.txt", "outside the workspace"},
		{"climbing", "a/../../outside/secret.txt", "outside the workspace"},
		{"climbing from a real dir", "sub/../../outside/secret.txt", "outside the workspace"},
		{"symlink to outside file", "linkfile", "outside the workspace"},
		{"relative symlink to outside file", "rellink", "outside the workspace"},
		{"dangling symlink to outside", "dangling", "outside the workspace"},
		{"symlink to outside dir", "linkdir", "outside the workspace"},
		{"symlinked parent, existing file", "linkdir/secret.txt", "outside the workspace"},
		{"symlinked parent, new file", "linkdir/new.txt", "outside the workspace"},
		{"symlinked parent, new dirs", "linkdir/d/new.txt", "outside the workspace"},
	}
	tools := []struct {
		name string
		tool string
		args func(path string) obj
	}{
		{"read_file", "read_file", func(p string) obj { return obj{"path": p} }},
		{"list_files", "list_files", func(p string) obj { return obj{"path": p} }},
		{"search_files", "search_files", func(p string) obj { return obj{"path": p, "pattern": "SECRET"} }},
		{"edit_file create", "edit_file", func(p string) obj { return obj{"path": p, "old_str": "", "new_str": "pwned\n"} }},
		{"edit_file replace", "edit_file", func(p string) obj { return obj{"path": p, "old_str": "SECRET", "new_str": "pwned"} }},
	}
	for _, tool := range tools {
		for _, esc := range escapes {
			t.Run(tool.name+"/"+esc.name, func(t *testing.T) {
				out := call(t, s, tool.tool, tool.args(esc.path))
				assert.True(t, out.IsError, "escape accepted: %s", out.Content)
				assert.Contains(t, out.Content, esc.wantErr)
				assert.NotContains(t, out.Content, "SECRET", "content from outside leaked")
				assert.NotContains(t, out.Content, "secret.txt\n", "listing from outside leaked")
				f.assertOutsideUntouched(t)
			})
		}
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	big := strings.Repeat("0123456789abcdef\n", MaxReadBytes/17+100)
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "big.txt"), []byte(big), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "bin"), []byte("ab\x00cd"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "empty"), nil, 0o644))
	s := Default(f.ws, Options{})

	tests := []struct {
		name     string
		args     any
		want     string // exact content, when set
		contains []string
		wantErr  bool
	}{
		{name: "file", args: obj{"path": "a.txt"}, want: "hello\n"},
		{name: "nested", args: obj{"path": "sub/b.txt"}, want: "b\n"},
		{name: "symlink inside", args: obj{"path": "inlink"}, want: "hello\n"},
		{name: "empty file", args: obj{"path": "empty"}, want: "(empty file)"},
		{name: "binary", args: obj{"path": "bin"}, contains: []string{"binary file of 5 bytes"}},
		{name: "big file is cut", args: obj{"path": "big.txt"}, contains: []string{"file cut", fmt.Sprintf("of %d bytes", len(big)), "sed -n"}},
		{name: "missing", args: obj{"path": "nope.txt"}, wantErr: true, contains: []string{"does not exist"}},
		{name: "directory", args: obj{"path": "sub"}, wantErr: true, contains: []string{"is a directory", "list_files"}},
		{name: "missing path", args: obj{}, wantErr: true, contains: []string{`missing required field "path"`}},
		{name: "unknown field", args: obj{"path": "a.txt", "lines": 3}, wantErr: true, contains: []string{`unknown field "lines"`}},
		{name: "wrong type", args: obj{"path": 3}, wantErr: true, contains: []string{"invalid arguments"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := call(t, s, "read_file", tt.args)
			assert.Equal(t, tt.wantErr, out.IsError, out.Content)
			if tt.want != "" {
				assert.Equal(t, tt.want, out.Content)
			}
			for _, c := range tt.contains {
				assert.Contains(t, out.Content, c)
			}
		})
	}

	t.Run("cut output stays within the limit and ends on a whole line", func(t *testing.T) {
		out := call(t, s, "read_file", obj{"path": "big.txt"})
		body, _, found := strings.Cut(out.Content, "\n[read_file: file cut")
		require.True(t, found)
		assert.LessOrEqual(t, len(body), MaxReadBytes)
		assert.True(t, strings.HasPrefix(big, body))
		assert.True(t, strings.HasSuffix(body, "\n"))
	})
}

func TestListFiles(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	require.NoError(t, os.MkdirAll(filepath.Join(f.root, ".git", "objects"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.root, ".git", "HEAD"), []byte("ref\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(f.root, "sub", "deep", "er"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "sub", "deep", "c.txt"), nil, 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(f.root, "emptydir"), 0o755))
	s := Default(f.ws, Options{})

	all := strings.Join([]string{
		"a.txt", "dangling", "emptydir/", "inlink", "linkdir", "linkfile", "loop", "rellink",
		"sub/", "sub/b.txt", "sub/deep/", "sub/deep/c.txt", "sub/deep/er/", "subinlink",
	}, "\n")
	tests := []struct {
		name    string
		args    any
		raw     string // raw arguments, instead of args
		want    string
		wantErr string
	}{
		{name: "default is the root", args: obj{}, want: all},
		{name: "no arguments at all", raw: "", want: all},
		{name: "null arguments", raw: "null", want: all},
		{name: "dot", args: obj{"path": "."}, want: all},
		{name: "empty path", args: obj{"path": ""}, want: all},
		{name: "subdirectory", args: obj{"path": "sub"}, want: "sub/b.txt\nsub/deep/\nsub/deep/c.txt\nsub/deep/er/"},
		{name: "symlinked dir inside", args: obj{"path": "subinlink/deep"}, want: "sub/deep/c.txt\nsub/deep/er/"},
		{name: "empty directory", args: obj{"path": "emptydir"}, want: "(empty directory)"},
		{name: "a file", args: obj{"path": "a.txt"}, wantErr: "is a file, not a directory"},
		{name: "missing", args: obj{"path": "nope"}, wantErr: "does not exist"},
		{name: "unknown field", args: obj{"path": ".", "recursive": true}, wantErr: `unknown field "recursive"`},
		{name: "not an object", raw: `["."]`, wantErr: "expected a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out chat.ToolOutcome
			if tt.args == nil {
				out = s.Run(context.Background(), chat.ToolCall{Name: "list_files", Arguments: json.RawMessage(tt.raw)}, nil)
			} else {
				out = call(t, s, "list_files", tt.args)
			}
			if tt.wantErr != "" {
				assert.True(t, out.IsError, out.Content)
				assert.Contains(t, out.Content, tt.wantErr)
				return
			}
			assert.False(t, out.IsError, out.Content)
			assert.Equal(t, tt.want, out.Content)
		})
	}
}

func TestListFilesCap(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir := filepath.Join(f.root, "many")
	require.NoError(t, os.Mkdir(dir, 0o755))
	for i := range MaxListEntries + 10 {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), nil, 0o644))
	}
	out := call(t, Default(f.ws, Options{}), "list_files", obj{"path": "many"})
	require.False(t, out.IsError, out.Content)
	lines := strings.Split(out.Content, "\n")
	assert.Len(t, lines, MaxListEntries+1)
	assert.Contains(t, lines[len(lines)-1], "list cut after")
}

func TestEditFile(t *testing.T) {
	t.Parallel()
	const original = "one\ntwo\ntwo\nthree\n"
	tests := []struct {
		name     string
		args     obj
		wantErr  string
		wantFile string // path checked after the call
		want     string // its expected content
		wantMode os.FileMode
		wantNone string // a path that must not exist after the call
	}{
		{
			name:     "replaces the one occurrence",
			args:     obj{"path": "f.txt", "old_str": "one\n", "new_str": "ONE\nuno\n"},
			wantFile: "f.txt", want: "ONE\nuno\ntwo\ntwo\nthree\n", wantMode: 0o755,
		},
		{
			name:     "deletes with an empty new_str",
			args:     obj{"path": "f.txt", "old_str": "three\n", "new_str": ""},
			wantFile: "f.txt", want: "one\ntwo\ntwo\n", wantMode: 0o755,
		},
		{
			name:     "edits through a symlink inside the workspace",
			args:     obj{"path": "link.txt", "old_str": "three", "new_str": "3"},
			wantFile: "f.txt", want: "one\ntwo\ntwo\n3\n", wantMode: 0o755,
		},
		{
			name:    "refuses zero matches",
			args:    obj{"path": "f.txt", "old_str": "four", "new_str": "4"},
			wantErr: "not found", wantFile: "f.txt", want: original,
		},
		{
			name:    "refuses two matches and says how many",
			args:    obj{"path": "f.txt", "old_str": "two\n", "new_str": "2\n"},
			wantErr: "occurs 2 times", wantFile: "f.txt", want: original,
		},
		{
			name:    "refuses a no-op",
			args:    obj{"path": "f.txt", "old_str": "one", "new_str": "one"},
			wantErr: "are the same", wantFile: "f.txt", want: original,
		},
		{
			name:     "creates a new file",
			args:     obj{"path": "new.txt", "old_str": "", "new_str": "fresh\n"},
			wantFile: "new.txt", want: "fresh\n", wantMode: newFileMode,
		},
		{
			name:     "creates parent directories",
			args:     obj{"path": "a/b/c/new.go", "old_str": "", "new_str": "package c\n"},
			wantFile: "a/b/c/new.go", want: "package c\n", wantMode: newFileMode,
		},
		{
			name:    "refuses to create an existing file",
			args:    obj{"path": "f.txt", "old_str": "", "new_str": "clobbered"},
			wantErr: "already exists", wantFile: "f.txt", want: original,
		},
		{
			name:    "refuses to create over a directory",
			args:    obj{"path": "d", "old_str": "", "new_str": "x"},
			wantErr: "a directory with that name already exists",
		},
		{
			name:     "creates through a symbolic link to a directory",
			args:     obj{"path": "dlink/new.txt", "old_str": "", "new_str": "x\n"},
			wantFile: "d/new.txt", want: "x\n", wantMode: newFileMode,
		},
		{
			name:     "creates a file named like a generic temporary file",
			args:     obj{"path": ".a.tmp-1", "old_str": "", "new_str": "mine\n"},
			wantFile: ".a.tmp-1", want: "mine\n", wantMode: newFileMode,
		},
		{
			name:    "refuses a path ending in a slash",
			args:    obj{"path": "newdir/", "old_str": "", "new_str": "x"},
			wantErr: `path "newdir/" names a directory`, wantNone: "newdir",
		},
		{
			name:    "refuses a path ending in a dot",
			args:    obj{"path": "d/.", "old_str": "", "new_str": "x"},
			wantErr: `path "d/." names a directory`,
		},
		{
			name:    "refuses a path ending in two dots",
			args:    obj{"path": "a/b/..", "old_str": "", "new_str": "x"},
			wantErr: `path "a/b/.." names a directory`, wantNone: "a",
		},
		{
			name:    "refuses to create below a file",
			args:    obj{"path": "f.txt/x", "old_str": "", "new_str": "x"},
			wantErr: "a part of its directory path is a file, not a directory", wantFile: "f.txt", want: original,
		},
		{
			name:    "refuses to replace in a missing file",
			args:    obj{"path": "missing.txt", "old_str": "x", "new_str": "y"},
			wantErr: "does not exist; to create it, give an empty old_str",
		},
		{
			name:    "refuses to edit a directory",
			args:    obj{"path": "d", "old_str": "x", "new_str": "y"},
			wantErr: "is a directory",
		},
		{
			name:    "requires old_str",
			args:    obj{"path": "f.txt", "new_str": "y"},
			wantErr: `missing required field "old_str"`, wantFile: "f.txt", want: original,
		},
		{
			name:    "requires new_str",
			args:    obj{"path": "f.txt", "old_str": "one"},
			wantErr: `missing required field "new_str"`, wantFile: "f.txt", want: original,
		},
		{
			name:    "requires path",
			args:    obj{"old_str": "one", "new_str": "y"},
			wantErr: `missing required field "path"`,
		},
		{
			name:    "refuses unknown fields",
			args:    obj{"path": "f.txt", "old_str": "one", "new_str": "1", "replace_all": true},
			wantErr: `unknown field "replace_all"`, wantFile: "f.txt", want: original,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(root, "f.txt"), []byte(original), 0o644))
			require.NoError(t, os.Chmod(filepath.Join(root, "f.txt"), 0o755))
			require.NoError(t, os.Symlink("f.txt", filepath.Join(root, "link.txt")))
			require.NoError(t, os.Mkdir(filepath.Join(root, "d"), 0o755))
			require.NoError(t, os.Symlink("d", filepath.Join(root, "dlink")))
			ws, err := NewWorkspace(root)
			require.NoError(t, err)
			t.Cleanup(func() { _ = ws.Close() })

			out := call(t, Default(ws, Options{}), "edit_file", tt.args)
			if tt.wantErr != "" {
				assert.True(t, out.IsError, out.Content)
				assert.Contains(t, out.Content, tt.wantErr)
			} else {
				assert.False(t, out.IsError, out.Content)
			}
			if tt.wantFile != "" {
				p := filepath.Join(root, tt.wantFile)
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				assert.Equal(t, tt.want, string(data))
				if tt.wantMode != 0 {
					fi, err := os.Stat(p)
					require.NoError(t, err)
					assert.Equal(t, tt.wantMode, fi.Mode().Perm())
				}
			}
			fi, err := os.Lstat(filepath.Join(root, "link.txt"))
			require.NoError(t, err)
			assert.NotZero(t, fi.Mode()&os.ModeSymlink, "the symlink was replaced by a file")
			if tt.wantNone != "" {
				assert.NoFileExists(t, filepath.Join(root, tt.wantNone))
			}
			fi, err = os.Lstat(filepath.Join(root, "dlink"))
			require.NoError(t, err)
			assert.NotZero(t, fi.Mode()&os.ModeSymlink, "the link to a directory was replaced")
			for _, pattern := range []string{EditTempPattern, atomicfile.TempPattern("*")} {
				leftovers, err := filepath.Glob(filepath.Join(root, pattern))
				require.NoError(t, err)
				assert.Empty(t, leftovers, "temporary files were left behind")
			}
		})
	}
}
