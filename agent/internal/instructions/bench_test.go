package instructions_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/instructions"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// BenchmarkDeepPath measures what one tool call on a deep path costs the
// agent: the call through the tool set and the look for the instructions
// of every directory on its way (what cmd/agent does for read_file,
// list_files and edit_file). The paths are "a/"×n + "x": missing from the
// root (4,096 deep is over tools.MaxPathDepth, and refused; 1,000 deep is
// walked), or missing at the bottom of a tree of 1,000 directories that
// exist (made once; slow on some file systems).
func BenchmarkDeepPath(b *testing.B) {
	cases := []struct {
		name         string
		depth, exist int
	}{
		{"missing-4096", 4096, 0},
		{"missing-1000", 1000, 0},
		{"exist-1000", 1000, 1000},
	}
	for _, c := range cases {
		dir := b.TempDir()
		mkdirDeep(b, dir, c.exist)
		ws, err := tools.NewWorkspace(dir)
		require.NoError(b, err)
		b.Cleanup(func() { ws.Close() })
		set := tools.Default(ws, tools.Options{})
		ins := instructions.Load(ws, instructions.Options{})
		p := strings.Repeat("a/", c.depth) + "x"
		for _, tool := range []string{"read_file", "list_files", "edit_file"} {
			args := map[string]string{"path": p}
			if tool == "edit_file" {
				args["old_str"], args["new_str"] = "a", "b"
			}
			raw, err := json.Marshal(args)
			require.NoError(b, err)
			call := chat.ToolCall{ID: "1", Name: tool, Arguments: raw}
			b.Run(c.name+"/"+tool, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if out := set.Run(b.Context(), call, nil); !out.IsError {
						b.Fatalf("%s on a missing path: %s", tool, out.Content)
					}
					ins.ForPath(b.Context(), p, tool == "list_files")
				}
			})
		}
	}
}

// mkdirDeep makes the directories a/a/.../a, n deep, under root, each
// from its parent's descriptor (by whole paths the kernel would walk
// again for each one, O(n²)), and removes them so when done.
func mkdirDeep(t testing.TB, root string, n int) {
	t.Helper()
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	fds := []int{fd}
	for range n {
		require.NoError(t, unix.Mkdirat(fd, "a", 0o755))
		fd, err = unix.Openat(fd, "a", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		require.NoError(t, err)
		fds = append(fds, fd)
	}
	t.Cleanup(func() {
		for i := len(fds) - 1; i >= 0; i-- {
			if i > 0 {
				_ = unix.Unlinkat(fds[i-1], "a", unix.AT_REMOVEDIR)
			}
			_ = unix.Close(fds[i])
		}
	})
}
