package thread_test

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

	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/internal/proctest"
)

// holdEnv names the environment variable that makes the test binary a
// helper process of TestLockGoesWithTheProcess: the threads directory.
const holdEnv = "FSMGEN_THREAD_TEST_HOLD"

// TestHelperHoldThread is not a test: run by TestLockGoesWithTheProcess
// as a process of its own, it locks the thread "t1" of the directory
// named by holdEnv, starts cat with a copy of each of its descriptors of
// the thread's lock file, as every command the agent starts has from its
// fork until it runs its program, says "locked PID" with cat's PID and
// waits until its standard input closes.
func TestHelperHoldThread(t *testing.T) {
	dir := os.Getenv(holdEnv)
	if dir == "" {
		t.Skip("a helper process of TestLockGoesWithTheProcess")
	}
	fail := func(err error) {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	store, err := thread.NewStore(dir)
	if err != nil {
		fail(err)
	}
	if _, err := store.Lock("t1"); err != nil {
		fail(err)
	}
	cat := exec.Command("cat")
	cat.Stdin = os.Stdin
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		fail(err)
	}
	for _, fd := range fds {
		if target, _ := os.Readlink("/proc/self/fd/" + fd.Name()); target == filepath.Join(dir, "t1.lock") {
			n, _ := strconv.Atoi(fd.Name())
			cat.ExtraFiles = append(cat.ExtraFiles, os.NewFile(uintptr(n), target))
		}
	}
	if len(cat.ExtraFiles) == 0 {
		fail(fmt.Errorf("no descriptor of %s", filepath.Join(dir, "t1.lock")))
	}
	if err := cat.Start(); err != nil {
		fail(err)
	}
	fmt.Println("locked", cat.Process.Pid)
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// TestLockGoesWithTheProcess kills, with SIGKILL, a process that holds a
// thread while a command it started still has a copy of its descriptor of
// the lock file, as a command the agent is starting has until it runs its
// program: the thread can be locked again at once, since no agent holds
// it any more.
func TestLockGoesWithTheProcess(t *testing.T) {
	s := newStore(t)
	in, inW, err := os.Pipe()
	require.NoError(t, err)
	defer inW.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldThread$")
	cmd.Env = append(os.Environ(), holdEnv+"="+s.Dir())
	cmd.Stdin = in
	line := proctest.Start(t, cmd)
	require.NoError(t, in.Close())
	pid, ok := strings.CutPrefix(strings.TrimSpace(line), "locked ")
	require.True(t, ok, "the helper said %q", line)

	_, err = s.Lock("t1")
	require.ErrorIs(t, err, thread.ErrLocked, "held by the helper")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, cmd.Wait(), "killed")
	fds, err := os.ReadDir("/proc/" + pid + "/fd")
	require.NoError(t, err, "cat runs")
	held := false
	for _, fd := range fds {
		target, _ := os.Readlink("/proc/" + pid + "/fd/" + fd.Name())
		held = held || target == filepath.Join(s.Dir(), "t1.lock")
	}
	assert.True(t, held, "cat has a copy of the descriptor of the lock file")

	unlock, err := s.Lock("t1")
	require.NoError(t, err, "the thread went with the process that held it")
	unlock()
}
