// Package sandboxtest gives tests a [sandbox.Sandbox] and ways to look at
// the processes it runs.
//
// Tests that need bubblewrap are skipped where it is missing or cannot
// run, unless the environment variable FSMGEN_REQUIRE_SANDBOX is 1 (as
// `make test` sets it), in which case they fail: CI must not pass by
// skipping them.
package sandboxtest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
)

// RequireEnv is the environment variable that, set to 1, turns a missing
// or broken bubblewrap into a test failure instead of a skip.
const RequireEnv = "FSMGEN_REQUIRE_SANDBOX"

// New returns a sandbox for t with opt. With mode off it needs nothing.
// Otherwise it requires bubblewrap (mode auto is taken as bwrap), and
// CacheDir, when empty, is a fresh t.TempDir(); without a working
// bubblewrap the test is skipped, or fails when FSMGEN_REQUIRE_SANDBOX=1.
func New(t testing.TB, opt sandbox.Options) *sandbox.Sandbox {
	t.Helper()
	if opt.Mode == sandbox.Off {
		sb, err := sandbox.New(context.Background(), opt)
		if err != nil {
			t.Fatalf("sandbox off: %v", err)
		}
		return sb
	}
	opt.Mode = sandbox.Bwrap
	if opt.CacheDir == "" {
		opt.CacheDir = t.TempDir()
	}
	sb, err := sandbox.New(context.Background(), opt)
	if err != nil {
		Unavailable(t, err)
	}
	return sb
}

// Unavailable skips t because the sandbox cannot run here (err says why),
// or fails it when FSMGEN_REQUIRE_SANDBOX=1.
func Unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("the sandbox is required (%s=1) but unavailable: %v", RequireEnv, err)
	}
	t.Skipf("the sandbox is unavailable (set %s=1 to fail instead): %v", RequireEnv, err)
}

// Processes returns the ids of the processes of the machine whose command
// line contains marker. A test puts a marker it made up in a command (a
// shell comment does) to find, from outside the sandbox's PID namespace,
// every process the command started.
func Processes(marker string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(marker)) {
			continue
		}
		if zombie(pid) {
			continue // dead, waiting to be reaped
		}
		pids = append(pids, pid)
	}
	return pids
}

// KillAtCleanup kills, when t ends, every process whose command line
// contains marker, so that a test that finds the sandbox broken leaves
// nothing running. (A confined command's bubblewrap holds the command line
// too: killing it, the namespace's init, kills the whole namespace.)
func KillAtCleanup(t testing.TB, marker string) {
	t.Helper()
	t.Cleanup(func() {
		for _, pid := range Processes(marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// zombie reports whether process pid has exited but not been reaped.
func zombie(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true // gone
	}
	// The state follows the command name, which is in parentheses.
	i := bytes.LastIndexByte(data, ')')
	return i >= 0 && i+2 < len(data) && data[i+2] == 'Z'
}
