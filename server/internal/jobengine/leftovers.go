package jobengine

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
// environment names one of the runs ids in RunEnv: what command runs
// started and left behind when the server running them was killed (the
// commands themselves die with the server). It reads /proc once, however
// many runs there are; a process whose environment it may not read
// (another user's) or that cleared its environment is not found. It
// returns how many processes it killed of each run.
func killLeftovers(ids []string) (map[string]int, error) {
	entries, err := os.ReadDir("/proc")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // no procfs: nothing to look through
	}
	if err != nil {
		return nil, fmt.Errorf("look for the processes of the interrupted runs: %w", err)
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	prefix := []byte(RunEnv + "=")
	self := os.Getpid()
	killed := map[string]int{}
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
			id, ok := bytes.CutPrefix(v, prefix)
			if !ok {
				continue
			}
			if want[string(id)] && syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed[string(id)]++
			}
			break
		}
	}
	return killed, nil
}
