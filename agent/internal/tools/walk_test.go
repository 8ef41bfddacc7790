package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// deepWorkspace makes a workspace holding the directories a/a/.../a,
// exist deep, and returns it.
func deepWorkspace(t testing.TB, exist int) *Workspace {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	mkdirDeep(t, root, exist)
	ws, err := NewWorkspace(root)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	return ws
}

// mkdirDeep makes the directories a/a/.../a, n deep, under root, and
// removes them when the test ends, each from its parent's descriptor: by
// whole paths (os.MkdirAll, os.RemoveAll) the kernel would walk the path
// again for each, O(n²).
func mkdirDeep(t testing.TB, root string, n int) {
	t.Helper()
	if n == 0 {
		return
	}
	fds := make([]int, 0, n+1)
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	fds = append(fds, fd)
	for range n {
		require.NoError(t, unix.Mkdirat(fd, "a", 0o755))
		fd, err = unix.Openat(fd, "a", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		require.NoError(t, err)
		fds = append(fds, fd)
	}
	t.Cleanup(func() {
		// Whatever the test put in a directory is removed with it.
		for i := len(fds) - 1; i >= 0; i-- {
			var names []string
			if dup, err := unix.Dup(fds[i]); err == nil {
				f := os.NewFile(uintptr(dup), "dir")
				names, _ = f.Readdirnames(-1)
				_ = f.Close()
			}
			for _, name := range names {
				if unix.Unlinkat(fds[i], name, 0) != nil {
					_ = unix.Unlinkat(fds[i], name, unix.AT_REMOVEDIR)
				}
			}
			_ = unix.Close(fds[i])
		}
	})
}

// TestResolveLookups checks that resolving a path costs a number of
// system calls linear in its depth: two for each directory that exists
// (look at it, open it), one for the first component that does not, and
// none below it.
func TestResolveLookups(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		exist, missing int
	}{
		{"missing at the root, 4095 below", 0, 4095},
		{"missing at the root, 1000 below", 0, 1000},
		{"150 directories, then 500 missing", 150, 500},
		{"300 directories, then a missing file", 300, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws := deepWorkspace(t, tt.exist)
			p := strings.Repeat("a/", tt.exist) + strings.Repeat("m/", tt.missing) + "x"
			if strings.Count(p, "/") >= MaxPathDepth {
				_, err := ws.resolve(t.Context(), p)
				require.ErrorContains(t, err, fmt.Sprintf("more than %d components", MaxPathDepth))
				assert.Zero(t, ws.lookups.Load(), "a path over the limit is refused before any lookup")
				return
			}
			got, err := ws.resolve(t.Context(), p)
			require.NoError(t, err)
			assert.Equal(t, p, got)
			assert.LessOrEqual(t, ws.lookups.Load(), int64(2*tt.exist+1))
		})
	}
}

// TestAlongLookups checks that the walk of the instructions files (two
// names looked for in every directory, as agent/internal/instructions does)
// costs a number of system calls linear in the path's depth, and finds
// the files of every directory down to the first that is missing.
func TestAlongLookups(t *testing.T) {
	t.Parallel()
	const exist = 200
	ws := deepWorkspace(t, exist)
	want := map[string]string{}
	for d := 10; d <= exist; d += 10 {
		prefix := strings.TrimSuffix(strings.Repeat("a/", d), "/")
		require.NoError(t, os.WriteFile(filepath.Join(ws.Root(), prefix, "AGENTS.md"), []byte(prefix), 0o644))
		want[prefix] = prefix
	}
	p := strings.Repeat("a/", exist) + strings.Repeat("m/", 600)
	got := map[string]string{}
	visited := 0
	err := ws.Along(t.Context(), p, func(prefix string, d *Dir) bool {
		visited++
		for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
			data, _, err := d.ReadFile(name, 1<<10)
			if err == nil {
				got[prefix] = string(data)
				break
			}
			require.ErrorIs(t, err, os.ErrNotExist)
		}
		return true
	})
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, exist, visited, "the walk ends at the first missing directory")
	// Two lookups per directory, one for the first missing component and
	// two for each name looked for.
	assert.LessOrEqual(t, ws.lookups.Load(), int64(2*exist+1+2*2*exist))
}

// TestResolveLinksPhysically checks that a ".." in a link's target climbs
// from where the link's earlier components led, as the kernel does, and
// that limits hold through links.
func TestResolveLinksPhysically(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sub", "deep", "dir"), 0o755))
	for _, f := range []string{"sub/f", "sub/deep/f"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte(f), 0o644))
	}
	links := map[string]string{
		"sub/ld":   "deep/dir",
		"viald":    "sub/ld/../f",
		"viald2":   "sub/ld/../../f",
		"gone":     "missing/../sub/f",
		"filedot":  "sub/f/../deep/f",
		"absdeep":  filepath.Join(root, "sub", "deep"),
		"climbout": "sub/ld/../../../..",
		"long":     strings.Repeat("b/", MaxPathDepth-2) + "b",
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(root, name)))
	}
	ws, err := NewWorkspace(root)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	tests := []struct {
		path, want, wantErr string
	}{
		{path: "viald", want: "sub/deep/f"},
		{path: "viald2", want: "sub/f"},
		{path: "sub/ld/../f", want: "sub/f"}, // the path given is cleaned as text first
		{path: "gone", want: "sub/f"},
		{path: "filedot", want: "sub/deep/f"},
		{path: "absdeep/dir/new.txt", want: "sub/deep/dir/new.txt"},
		{path: "climbout", wantErr: "outside the workspace"},
		{path: "long/x", want: strings.Repeat("b/", MaxPathDepth-1) + "x"},
		{path: "long/x/y", wantErr: fmt.Sprintf("more than %d components", MaxPathDepth)},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			got, err := ws.resolve(t.Context(), tt.path)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// cancelAfter is a context that is cancelled once its Err has been asked
// n times: it ends a walk in its middle, at a point the test chooses,
// without a clock.
type cancelAfter struct {
	context.Context
	n    atomic.Int64
	once sync.Once
	done chan struct{}
}

// newCancelAfter returns a context cancelled at its nth Err.
func newCancelAfter(n int64) *cancelAfter {
	c := &cancelAfter{Context: context.Background(), done: make(chan struct{})}
	c.n.Store(n)
	return c
}

// Err implements context.Context.
func (c *cancelAfter) Err() error {
	if c.n.Add(-1) < 0 {
		c.once.Do(func() { close(c.done) })
		return context.Canceled
	}
	return nil
}

// Done implements context.Context.
func (c *cancelAfter) Done() <-chan struct{} { return c.done }

// TestResolveHonoursContext checks that a walk stops when its context
// ends in its middle, with the context's error.
func TestResolveHonoursContext(t *testing.T) {
	t.Parallel()
	const exist = 200
	ws := deepWorkspace(t, exist)
	p := strings.Repeat("a/", exist) + "x"
	_, err := ws.resolve(newCancelAfter(50), p)
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, ws.lookups.Load(), int64(2*50+2), "the walk stopped at the cancellation")

	err = ws.Along(newCancelAfter(50), p, func(string, *Dir) bool { return true })
	require.ErrorIs(t, err, context.Canceled)
}

// TestFileToolsDeepPath checks the file tools on a deep path that does
// not exist, through the set the agent runs them with: refused at the
// depth limit, said to be missing below it, and cancelled with their call.
func TestFileToolsDeepPath(t *testing.T) {
	t.Parallel()
	ws := deepWorkspace(t, 0)
	set, err := NewSet(Options{}, ReadFile(ws), ListFiles(ws), EditFile(ws))
	require.NoError(t, err)
	call := func(tool, p string) chat.ToolCall {
		args := map[string]string{"path": p}
		if tool == "edit_file" {
			args["old_str"], args["new_str"] = "a", "b"
		}
		raw, err := json.Marshal(args)
		require.NoError(t, err)
		return chat.ToolCall{ID: "1", Name: tool, Arguments: raw}
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tool := range []string{"read_file", "list_files", "edit_file"} {
		t.Run(tool, func(t *testing.T) {
			t.Parallel()
			out := set.Run(t.Context(), call(tool, strings.Repeat("a/", 4096)+"x"), nil)
			assert.True(t, out.IsError)
			assert.Contains(t, out.Content, fmt.Sprintf("more than %d components", MaxPathDepth))
			assert.Less(t, len(out.Content), 1000, "the message does not quote the whole path")

			out = set.Run(t.Context(), call(tool, strings.Repeat("a/", 1000)+"x"), nil)
			assert.True(t, out.IsError)
			assert.Contains(t, out.Content, "does not exist")

			out = set.Run(cancelled, call(tool, strings.Repeat("a/", 1000)+"x"), nil)
			assert.True(t, out.IsError)
			assert.Contains(t, out.Content, context.Canceled.Error())
		})
	}
}

// BenchmarkResolve measures the resolution of deep paths: n components
// cost O(n) (see TestResolveLookups).
func BenchmarkResolve(b *testing.B) {
	for _, tt := range []struct {
		name           string
		exist, missing int
	}{
		{"missing-1000", 0, 1000},
		{"exist-250", 250, 0},
		{"exist-500", 500, 0},
		{"exist-1000", 1000, 0},
	} {
		b.Run(tt.name, func(b *testing.B) {
			ws := deepWorkspace(b, tt.exist)
			p := strings.Repeat("a/", tt.exist) + strings.Repeat("m/", tt.missing) + "x"
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ws.resolve(b.Context(), p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
