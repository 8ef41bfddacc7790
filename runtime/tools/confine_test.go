package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/chat"
)

// exchange swaps the directory entries a and b atomically (renameat2 with
// RENAME_EXCHANGE), so that neither name is ever missing. It returns
// ENOSYS where the test does not know the system call.
func exchange(a, b string) error {
	numbers := map[string]uintptr{"amd64": 316, "arm64": 276, "riscv64": 276, "loong64": 276}
	nr, ok := numbers[runtime.GOARCH]
	if runtime.GOOS != "linux" || !ok {
		return syscall.ENOSYS
	}
	pa, err := syscall.BytePtrFromString(a)
	if err != nil {
		return err
	}
	pb, err := syscall.BytePtrFromString(b)
	if err != nil {
		return err
	}
	const renameExchange = 2
	atFDCWD := -100
	_, _, errno := syscall.Syscall6(nr, uintptr(atFDCWD), uintptr(unsafe.Pointer(pa)), uintptr(atFDCWD), uintptr(unsafe.Pointer(pb)), renameExchange, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// TestFileToolsRace runs read_file and edit_file (create and replace)
// thousands of times on paths through a directory that another goroutine
// keeps swapping for a symbolic link to a directory outside the workspace,
// and checks that nothing outside was read, created or changed.
func TestFileToolsRace(t *testing.T) {
	const (
		workers = 4
		rounds  = 1000 // per worker; each round is a create, a replace and a read
	)
	tests := []struct {
		name string
		// setup prepares root/d (and whatever swap needs) and returns the
		// swap, run in a loop until the workers are done.
		setup func(t *testing.T, root, outside string) (swap func() error)
	}{
		{
			name: "directory exchanged with a link to outside",
			setup: func(t *testing.T, root, outside string) func() error {
				require.NoError(t, os.Mkdir(filepath.Join(root, "d"), 0o755))
				require.NoError(t, os.Symlink(outside, filepath.Join(root, "away")))
				swap := func() error { return exchange(filepath.Join(root, "d"), filepath.Join(root, "away")) }
				if err := swap(); err != nil {
					t.Skipf("renameat2(RENAME_EXCHANGE) is not available: %v", err)
				}
				require.NoError(t, swap()) // back: d is the directory
				return swap
			},
		},
		{
			name: "link retargeted between inside and outside",
			setup: func(t *testing.T, root, outside string) func() error {
				require.NoError(t, os.Mkdir(filepath.Join(root, "real"), 0o755))
				require.NoError(t, os.Symlink("real", filepath.Join(root, "d")))
				in, out := filepath.Join(root, "to-in"), filepath.Join(root, "to-out")
				toOutside := true
				return func() error {
					// A new link renamed over d: d is always a link, to one
					// side or the other.
					tmp, target := out, outside
					if !toOutside {
						tmp, target = in, "real"
					}
					toOutside = !toOutside
					if err := os.Symlink(target, tmp); err != nil {
						return err
					}
					return os.Rename(tmp, filepath.Join(root, "d"))
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			root, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
			require.NoError(t, os.Mkdir(root, 0o755))
			require.NoError(t, os.Mkdir(outside, 0o755))
			outsideFiles := map[string]string{}
			for w := range workers {
				name := fmt.Sprintf("f%d.txt", w)
				outsideFiles[name] = "OUTSIDE TOKEN\n"
				require.NoError(t, os.WriteFile(filepath.Join(outside, name), []byte(outsideFiles[name]), 0o644))
			}
			swap := tt.setup(t, root, outside)
			// The files the workers edit, in the directory d names when it
			// is inside.
			for w := range workers {
				require.NoError(t, os.WriteFile(filepath.Join(root, "d", fmt.Sprintf("f%d.txt", w)), []byte("inside TOKEN\n"), 0o644))
			}
			ws, err := NewWorkspace(root)
			require.NoError(t, err)
			t.Cleanup(func() { _ = ws.Close() })
			s := Default(ws, Options{})

			ctx, stop := context.WithCancel(context.Background())
			var swaps atomic.Int64
			swapped := make(chan error, 1)
			go func() {
				for ctx.Err() == nil {
					if err := swap(); err != nil {
						swapped <- err
						return
					}
					swaps.Add(1)
				}
				swapped <- nil
			}()

			// run is call without require, which must not be used off the
			// test's goroutine.
			run := func(tool string, args obj) chat.ToolOutcome {
				raw, err := json.Marshal(args)
				if err != nil {
					return chat.ToolOutcome{Content: err.Error(), IsError: true}
				}
				return s.Run(context.Background(), chat.ToolCall{ID: "race", Name: tool, Arguments: raw}, nil)
			}
			var ok, refused, leaked atomic.Int64
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					file := fmt.Sprintf("d/f%d.txt", w)
					old, repl := "TOKEN", "TOKEN!"
					for i := range rounds {
						outs := []string{}
						o := run("edit_file", obj{"path": fmt.Sprintf("d/new-%d-%d.txt", w, i), "old_str": "", "new_str": "new\n"})
						outs = append(outs, o.Content)
						count(o.IsError, &ok, &refused)
						o = run("edit_file", obj{"path": file, "old_str": old, "new_str": repl})
						outs = append(outs, o.Content)
						if count(o.IsError, &ok, &refused) {
							old, repl = repl, old
						}
						o = run("read_file", obj{"path": file})
						outs = append(outs, o.Content)
						count(o.IsError, &ok, &refused)
						for _, out := range outs {
							if strings.Contains(out, "OUTSIDE") {
								leaked.Add(1)
							}
						}
					}
				})
			}
			wg.Wait()
			stop()
			require.NoError(t, <-swapped)

			entries, err := os.ReadDir(outside)
			require.NoError(t, err)
			got := map[string]string{}
			for _, e := range entries {
				data, err := os.ReadFile(filepath.Join(outside, e.Name()))
				require.NoError(t, err)
				got[e.Name()] = string(data)
			}
			assert.Equal(t, outsideFiles, got, "files were created or changed outside the workspace")
			assert.Zero(t, leaked.Load(), "contents from outside the workspace were returned")
			// The race was run: calls went through and calls were refused.
			assert.Positive(t, swaps.Load())
			assert.Positive(t, ok.Load(), "no call succeeded")
			assert.Positive(t, refused.Load(), "no call met the link to outside")
			t.Logf("%d swaps, %d calls succeeded, %d refused", swaps.Load(), ok.Load(), refused.Load())
		})
	}
}

// count adds one to ok or refused and reports whether the call succeeded.
func count(isError bool, ok, refused *atomic.Int64) bool {
	if isError {
		refused.Add(1)
		return false
	}
	ok.Add(1)
	return true
}

func TestHardLinksRefused(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, os.Link(f.secret, filepath.Join(f.root, "hardlink")))
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "twin1"), []byte("twin\n"), 0o644))
	require.NoError(t, os.Link(filepath.Join(f.root, "twin1"), filepath.Join(f.root, "twin2")))
	s := Default(f.ws, Options{})
	tests := []struct {
		name, tool string
		args       obj
		wantErr    string
	}{
		{"read a link to outside", "read_file", obj{"path": "hardlink"}, `"hardlink" has 2 hard links; a hard link can point outside the workspace, so it is not read`},
		{"edit a link to outside", "edit_file", obj{"path": "hardlink", "old_str": "SECRET", "new_str": "pwned"}, `"hardlink" has 2 hard links; a hard link can point outside the workspace, so it is not edited`},
		{"create over a link", "edit_file", obj{"path": "hardlink", "old_str": "", "new_str": "pwned"}, "already exists"},
		{"read a link inside", "read_file", obj{"path": "twin2"}, `"twin2" has 2 hard links`},
		{"edit a link inside", "edit_file", obj{"path": "twin1", "old_str": "twin", "new_str": "x"}, `"twin1" has 2 hard links`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := call(t, s, tt.tool, tt.args)
			assert.True(t, out.IsError, out.Content)
			assert.Contains(t, out.Content, tt.wantErr)
			assert.NotContains(t, out.Content, "SECRET")
			f.assertOutsideUntouched(t)
			assert.Equal(t, "twin\n", readString(t, filepath.Join(f.root, "twin1")))
		})
	}
	t.Run("a file with one link is read", func(t *testing.T) {
		out := call(t, s, "read_file", obj{"path": "a.txt"})
		assert.False(t, out.IsError, out.Content)
		assert.Equal(t, "hello\n", out.Content)
	})
}

func TestEditFileRefusesGit(t *testing.T) {
	tests := []struct {
		name    string
		args    obj
		wantErr string
	}{
		{"config", obj{"path": ".git/config", "old_str": "[core]", "new_str": "[core]\n\tfsmonitor = touch pwned"}, "under .git"},
		{"upper case", obj{"path": ".GIT/config", "old_str": "[core]", "new_str": "[core]\n\tfsmonitor = touch pwned"}, "under .git"},
		{"new hook", obj{"path": ".git/hooks/pre-commit", "old_str": "", "new_str": "#!/bin/sh\ntouch pwned\n"}, "under .git"},
		{"a .git file", obj{"path": "sub/.git", "old_str": "", "new_str": "gitdir: ../fake\n"}, "under .git"},
		{"through a link to .git", obj{"path": "gitlink/config", "old_str": "[core]", "new_str": "[core]\n\tfsmonitor = touch pwned"}, "under .git"},
		{"dot-dot into .git", obj{"path": "sub/../.git/config", "old_str": "[core]", "new_str": "x"}, "under .git"},
		{"a temporary file's name", obj{"path": "sub/.fsmgen-edit-42.tmp", "old_str": "", "new_str": "x"}, "temporary files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			config := "[core]\n\tbare = false\n"
			require.NoError(t, os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755))
			require.NoError(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "config"), []byte(config), 0o644))
			require.NoError(t, os.Symlink(".git", filepath.Join(root, "gitlink")))
			ws, err := NewWorkspace(root)
			require.NoError(t, err)
			t.Cleanup(func() { _ = ws.Close() })

			out := call(t, Default(ws, Options{}), "edit_file", tt.args)
			assert.True(t, out.IsError, out.Content)
			assert.Contains(t, out.Content, tt.wantErr)
			if tt.wantErr == "under .git" {
				assert.Contains(t, out.Content, "the agent commits your changes itself")
			}
			assert.Equal(t, config, readString(t, filepath.Join(root, ".git", "config")))
			assert.NoFileExists(t, filepath.Join(root, ".git", "hooks", "pre-commit"))
			assert.NoFileExists(t, filepath.Join(root, "sub", ".git"))
			assert.NoFileExists(t, filepath.Join(root, "sub", ".fsmgen-edit-42.tmp"))
		})
	}
}

func TestResolveAbsoluteLinkInside(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, os.Symlink(filepath.Join(f.root, "sub"), filepath.Join(f.root, "abssub")))
	got, err := f.ws.resolve("abssub/b.txt")
	require.NoError(t, err)
	assert.Equal(t, "sub/b.txt", got)
	out := call(t, Default(f.ws, Options{}), "read_file", obj{"path": "abssub/b.txt"})
	assert.False(t, out.IsError, out.Content)
	assert.Equal(t, "b\n", out.Content)
}

func TestClosedWorkspace(t *testing.T) {
	ws, err := NewWorkspace(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ws.Root(), "a.txt"), []byte("a\n"), 0o644))
	require.NoError(t, ws.Close())
	s := Default(ws, Options{})
	for _, tool := range []string{"read_file", "list_files"} {
		out := call(t, s, tool, obj{"path": "a.txt"})
		assert.True(t, out.IsError, "%s works on a closed workspace: %s", tool, out.Content)
	}
}

// readString returns the content of the file at p.
func readString(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(data)
}

func TestSpecialFilesRefused(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644))
	ws, err := NewWorkspace(root)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	s := Default(ws, Options{Timeout: 10 * time.Second}) // a tool blocked on the FIFO would time out
	tests := []struct {
		name, tool string
		args       obj
		wantErr    string
	}{
		{"read a FIFO", "read_file", obj{"path": "pipe"}, `"pipe" is not a regular file (p---------); only regular files can be read`},
		{"edit a FIFO", "edit_file", obj{"path": "pipe", "old_str": "x", "new_str": "y"}, `"pipe" is not a regular file (p---------); only regular files can be edited`},
		{"create over a FIFO", "edit_file", obj{"path": "pipe", "old_str": "", "new_str": "y"}, "already exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := call(t, s, tt.tool, tt.args)
			assert.True(t, out.IsError, out.Content)
			assert.Contains(t, out.Content, tt.wantErr)
		})
	}
}
