package jobs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// RunEnv is the environment variable every process of a command run
// carries, set to the run's id: the processes a run started can be found
// after the server that ran it died.
const RunEnv = "FSMGEN_JOB_RUN"

// killLeftovers kills, with SIGKILL, every process of this machine whose
// environment names run id in RunEnv: what a command run started and left
// behind when the server running it was killed (the command itself dies
// with the server). It reads /proc; a process whose environment it may not
// read (another user's) or that cleared its environment is not found. It
// returns how many processes it killed.
func killLeftovers(runID string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil // no procfs: nothing to look through
	}
	if err != nil {
		return 0, fmt.Errorf("look for the processes of run %s: %w", runID, err)
	}
	want := []byte(RunEnv + "=" + runID)
	self := os.Getpid()
	killed := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue // gone, or not ours to read
		}
		for v := range bytes.SplitSeq(env, []byte{0}) {
			if bytes.Equal(v, want) {
				if syscall.Kill(pid, syscall.SIGKILL) == nil {
					killed++
				}
				break
			}
		}
	}
	return killed, nil
}
