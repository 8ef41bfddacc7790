package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
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

	"github.com/fsmgen/fsmgen/agent/chat"
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
// or to the workspace's .git, and checks that nothing there was read (from
// outside), created or changed, and that every refusal says why in words.
func TestFileToolsRace(t *testing.T) {
	t.Parallel()
	const (
		workers = 4
		rounds  = 500 // per worker; each round is a create, a replace and a read
	)
	tests := []struct {
		name string
		// setup prepares root/d (and whatever swap needs) and returns the
		// swap, run in a loop until the workers are done, and the
		// directory the tools must not write in (outside or root/.git).
		setup func(t *testing.T, root, outside string) (swap func() error, protected string)
		// readable: reading the protected directory through the link is
		// allowed (read_file reads .git).
		readable bool
	}{
		{
			name: "directory exchanged with a link to outside",
			setup: func(t *testing.T, root, outside string) (func() error, string) {
				return exchanger(t, root, outside), outside
			},
		},
		{
			// The reviewer's scenario: edit_file checked the path for
			// .git, then the directory became a link to .git.
			name: "directory exchanged with a link to .git",
			setup: func(t *testing.T, root, _ string) (func() error, string) {
				git := filepath.Join(root, ".git")
				require.NoError(t, os.Mkdir(git, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(git, "config"), []byte("[core]\n\tbare = false\n"), 0o644))
				return exchanger(t, root, ".git"), git
			},
			readable: true,
		},
		{
			name: "link retargeted between inside and outside",
			setup: func(t *testing.T, root, outside string) (func() error, string) {
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
				}, outside
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
			swap, protected := tt.setup(t, root, outside)
			protectedFiles := map[string]string{}
			for w := range workers {
				name := fmt.Sprintf("f%d.txt", w)
				protectedFiles[name] = "OUTSIDE TOKEN\n"
				require.NoError(t, os.WriteFile(filepath.Join(protected, name), []byte(protectedFiles[name]), 0o644))
			}
			protectedFiles = readDir(t, protected)
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
			var ok, refused, leaked, unclear atomic.Int64
			var sample sync.Map // a refusal message of each kind
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
							if strings.Contains(out, "OUTSIDE") && !tt.readable {
								leaked.Add(1)
							}
							if !strings.Contains(out, "OUTSIDE") && !strings.HasPrefix(out, "inside") && !strings.HasPrefix(out, "edited ") && !strings.HasPrefix(out, "created ") {
								sample.LoadOrStore(quoted.ReplaceAllString(out, `"…"`), out)
							}
							if systemWords(out) {
								unclear.Add(1)
							}
						}
					}
				})
			}
			wg.Wait()
			stop()
			require.NoError(t, <-swapped)

			assert.Equal(t, protectedFiles, readDir(t, protected), "files were created or changed in %s", protected)
			assert.Zero(t, leaked.Load(), "contents from outside the workspace were returned")
			sample.Range(func(_, msg any) bool {
				t.Logf("refusal: %s", msg)
				return true
			})
			assert.Zero(t, unclear.Load(), "refusals in the system's words, not the tool's (see the log)")
			// The race was run: calls went through and calls were refused.
			assert.Positive(t, swaps.Load())
			assert.Positive(t, ok.Load(), "no call succeeded")
			assert.Positive(t, refused.Load(), "no call met the link to outside")
			t.Logf("%d swaps, %d calls succeeded, %d refused", swaps.Load(), ok.Load(), refused.Load())
		})
	}
}

// systemWords reports whether a tool's message ends in the text of a
// system error, which says what failed but not why nor what to do.
func systemWords(msg string) bool {
	for _, errno := range []syscall.Errno{syscall.EINVAL, syscall.ENOTDIR, syscall.ELOOP, syscall.ENOENT, syscall.EEXIST, syscall.EISDIR, syscall.EBADF} {
		if strings.HasSuffix(msg, ": "+errno.Error()) {
			return true
		}
	}
	return false
}

// quoted matches the quoted paths of a tool's messages.
var quoted = regexp.MustCompile(`"[^"]*"`)

// exchanger makes root/d a directory and root/away a symbolic link to
// target, and returns a swap that exchanges them atomically. It skips the
// test where the system cannot.
func exchanger(t *testing.T, root, target string) func() error {
	t.Helper()
	require.NoError(t, os.Mkdir(filepath.Join(root, "d"), 0o755))
	require.NoError(t, os.Symlink(target, filepath.Join(root, "away")))
	swap := func() error { return exchange(filepath.Join(root, "d"), filepath.Join(root, "away")) }
	if err := swap(); err != nil {
		t.Skipf("renameat2(RENAME_EXCHANGE) is not available: %v", err)
	}
	require.NoError(t, swap()) // back: d is the directory
	return swap
}

// readDir returns the files of the directory dir and their contents,
// recursively, by path relative to dir.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files[rel] = string(data)
		return err
	}))
	return files
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
	t.Parallel()
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
	t.Parallel()
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
		{"an atomic write's temporary file's name", obj{"path": "sub/.t1.json.fsmgen-tmp-42", "old_str": "", "new_str": "x"}, "temporary files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
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
			assert.NoFileExists(t, filepath.Join(root, "sub", ".t1.json.fsmgen-tmp-42"))
		})
	}
}

func TestResolveAbsoluteLinkInside(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	require.NoError(t, os.Symlink(filepath.Join(f.root, "sub"), filepath.Join(f.root, "abssub")))
	got, err := f.ws.resolve(t.Context(), "abssub/b.txt")
	require.NoError(t, err)
	assert.Equal(t, "sub/b.txt", got)
	out := call(t, Default(f.ws, Options{}), "read_file", obj{"path": "abssub/b.txt"})
	assert.False(t, out.IsError, out.Content)
	assert.Equal(t, "b\n", out.Content)
}

func TestClosedWorkspace(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644))
	// A socket: a path short enough for a Unix socket's address.
	sockDir, err := os.MkdirTemp("", "sock")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	l, err := net.Listen("unix", filepath.Join(sockDir, "s"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	require.NoError(t, os.Rename(filepath.Join(sockDir, "s"), filepath.Join(root, "sock")))
	// A device (/dev/null's numbers): only root may make one.
	haveDevice := syscall.Mknod(filepath.Join(root, "null"), syscall.S_IFCHR|0o666, 1<<8|3) == nil
	ws, err := NewWorkspace(root)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	s := Default(ws, Options{Timeout: 10 * time.Second}) // a tool blocked on the FIFO would time out
	tests := []struct {
		name, tool string
		args       obj
		wantErr    string
		device     bool // needs the device
	}{
		{"read a FIFO", "read_file", obj{"path": "pipe"}, `"pipe" is a named pipe (FIFO), not a regular file; only regular files can be read`, false},
		{"edit a FIFO", "edit_file", obj{"path": "pipe", "old_str": "x", "new_str": "y"}, `"pipe" is a named pipe (FIFO), not a regular file; only regular files can be edited`, false},
		{"create over a FIFO", "edit_file", obj{"path": "pipe", "old_str": "", "new_str": "y"}, "already exists", false},
		{"read a socket", "read_file", obj{"path": "sock"}, `"sock" is a socket, not a regular file; only regular files can be read`, false},
		{"edit a socket", "edit_file", obj{"path": "sock", "old_str": "x", "new_str": "y"}, `"sock" is a socket, not a regular file; only regular files can be edited`, false},
		{"read a device", "read_file", obj{"path": "null"}, `"null" is a device, not a regular file; only regular files can be read`, true},
		{"edit a device", "edit_file", obj{"path": "null", "old_str": "x", "new_str": "y"}, `"null" is a device, not a regular file; only regular files can be edited`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.device && !haveDevice {
				t.Skip("making a device needs root")
			}
			out := call(t, s, tt.tool, tt.args)
			assert.True(t, out.IsError, out.Content)
			assert.Contains(t, out.Content, tt.wantErr)
		})
	}
}
