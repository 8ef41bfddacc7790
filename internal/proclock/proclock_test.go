package proclock_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/proclock"
	"github.com/fsmgen/fsmgen/internal/proctest"
)

// helperEnv names the environment variable that makes the test binary a
// helper process (see TestHelperLock): "ROLE PATH".
const helperEnv = "FSMGEN_PROCLOCK_TEST_HELPER"

// TestHelperLock is not a test: run as a process of its own, it locks the
// file named by helperEnv and, in the role "try", says "locked" or "held"
// and exits; in the role "hold", says "locked" and holds the lock until
// its standard input closes; in the role "copy", also starts cat with a
// copy of the locked descriptor, as every child has from its fork until
// it runs its program, says "locked PID" with cat's PID, and holds the
// lock until its standard input closes.
func TestHelperLock(t *testing.T) {
	role, path, ok := strings.Cut(os.Getenv(helperEnv), " ")
	if !ok {
		t.Skip("a helper process of the other tests")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	release, err := proclock.Lock(f)
	switch {
	case role == "try" && err == nil:
		fmt.Println("locked")
		os.Exit(0)
	case role == "try" && strings.Contains(err.Error(), proclock.ErrHeld.Error()):
		fmt.Println("held")
		os.Exit(0)
	case err != nil:
		fmt.Println("error:", err)
		os.Exit(1)
	}
	defer func() { _ = release() }()
	if role == "copy" {
		cat := exec.Command("cat")
		cat.Stdin = os.Stdin
		cat.ExtraFiles = []*os.File{f}
		if err := cat.Start(); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked", cat.Process.Pid)
	} else {
		fmt.Println("locked")
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// helper runs TestHelperLock in role on path, with stdin as its standard
// input, and returns the command and the first line it printed.
func helper(t *testing.T, role, path string, stdin *os.File) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLock$")
	cmd.Env = append(os.Environ(), helperEnv+"="+role+" "+path)
	cmd.Stdin = stdin
	return cmd, proctest.Start(t, cmd)
}

// holdingInput returns the read end of a pipe for a helper's standard
// input: the helper, and whatever inherits it, holds on until the test
// ends or closes the write end, which is returned too.
func holdingInput(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = r.Close()
		_ = w.Close()
	})
	return r, w
}

// try reports what another process finds when it tries to lock path:
// "locked" or "held". The process has ended when it returns.
func try(t *testing.T, path string) string {
	t.Helper()
	cmd, line := helper(t, "try", path, nil)
	require.NoError(t, cmd.Wait())
	return line
}

// open opens path for Lock.
func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	require.NoError(t, err)
	return f
}

// TestLockAcrossProcesses locks a file another process holds: refused,
// until that process is killed.
func TestLockAcrossProcesses(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	in, _ := holdingInput(t)
	cmd, line := helper(t, "hold", p, in)
	require.Equal(t, "locked", line)

	_, err := proclock.Lock(open(t, p))
	require.ErrorIs(t, err, proclock.ErrHeld)

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, cmd.Wait(), "killed")
	release, err := proclock.Lock(open(t, p))
	require.NoError(t, err, "the lock went with the process")
	assert.Equal(t, "held", try(t, p))
	require.NoError(t, release())
	assert.Equal(t, "locked", try(t, p), "released")
}

// TestLockNotHeldByACopy kills a process that holds a file's lock while a
// child of it has a copy of its locked descriptor, as every child has from
// its fork until it runs its program (a process killed as it starts a
// command leaves such a child): the lock went with the process, so the
// file can be locked again at once. A flock(2) lock, which belongs to the
// descriptor, would be held by the child.
func TestLockNotHeldByACopy(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	in, inW := holdingInput(t)
	cmd, line := helper(t, "copy", p, in)
	pidText, ok := strings.CutPrefix(line, "locked ")
	require.True(t, ok, "the helper said %q", line)
	child, err := strconv.Atoi(pidText)
	require.NoError(t, err)

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, cmd.Wait(), "killed")
	assert.True(t, holds(t, child, p), "the child still has a copy of the locked descriptor")
	release, err := proclock.Lock(open(t, p))
	require.NoError(t, err, "the lock went with the process that took it, whatever its child holds")
	require.NoError(t, release())
	require.NoError(t, inW.Close(), "cat ends")
}

// holds reports whether process pid has a descriptor of path open.
func holds(t *testing.T, pid int, path string) bool {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && target == path {
			return true
		}
	}
	return false
}

// TestLockInOneProcess locks a file twice in one process: the second Lock
// is refused, and refusing it does not release the first (closing a
// descriptor of the file would), until the first is released.
func TestLockInOneProcess(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	release, err := proclock.Lock(open(t, p))
	require.NoError(t, err)
	_, err = proclock.Lock(open(t, p))
	require.ErrorIs(t, err, proclock.ErrHeld)
	assert.Equal(t, "held", try(t, p), "the refused Lock left the first one held")

	require.NoError(t, release())
	require.NoError(t, release(), "a second release does nothing")
	assert.Equal(t, "locked", try(t, p))
	again, err := proclock.Lock(open(t, p))
	require.NoError(t, err, "a released file can be locked again")
	assert.Equal(t, "held", try(t, p))
	require.NoError(t, again())
}
