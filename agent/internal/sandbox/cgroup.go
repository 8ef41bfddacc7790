package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Root is exempt from RLIMIT_NPROC (the kernel does not count the
// processes of uid 0 against it, in any user namespace), so when the
// agent runs as root the process limit is a pids cgroup of the command's
// own, made in the cgroup v1 pids hierarchy the agent belongs to: v1,
// because there root may make cgroups anywhere, where v2 needs a subtree
// delegated to the agent and the agent moved into a leaf of it (not
// done: on cgroup v2, root's commands have no process limit).
//
// A command must be in its cgroup from its very first process on, or a
// fork bomb could outrun the move. cgroup v1 moves single threads (the
// tasks file), and a child starts in the cgroup of the thread that forks
// it: the thread that starts the command (locked to its goroutine, see
// Process.run) joins the cgroup, forks bubblewrap and leaves it again.

// pidsCgroups makes the pids cgroups of commands, as children of the
// agent's own.
type pidsCgroups struct {
	parent string // the agent's pids cgroup, in the mounted hierarchy
}

// cgroupSeq numbers the commands' cgroups of this process, whichever
// sandbox starts them.
var cgroupSeq atomic.Int64

// cgroupPrefix starts the name of a command's cgroup; the agent's pid and
// a sequence number follow.
const cgroupPrefix = "fsmgen-sandbox-"

// findPidsCgroups returns the agent's pids cgroup when it is in a cgroup
// v1 pids hierarchy in which it can make cgroups (it runs as root), or
// says why not. It removes the empty cgroups that agents which died
// left.
func findPidsCgroups() (*pidsCgroups, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("not root")
	}
	rel, err := ownCgroup("/proc/self/cgroup", "pids")
	if err != nil {
		return nil, err
	}
	rel = outsideCommand(rel)
	mount, root, err := cgroupMount("/proc/self/mountinfo", "pids")
	if err != nil {
		return nil, err
	}
	rel = strings.TrimPrefix(rel, root) // the mount shows the hierarchy from its root
	parent := filepath.Join(mount, rel)
	c := &pidsCgroups{parent: parent}
	c.removeStale()
	// Prove it: make one and remove it.
	probe, err := c.create(1)
	if err != nil {
		return nil, fmt.Errorf("in %s: %w", parent, err)
	}
	if err := os.Remove(probe.dir); err != nil {
		return nil, fmt.Errorf("remove the pids cgroup %s: %w", probe.dir, err)
	}
	return c, nil
}

// outsideCommand returns the agent's cgroup given the cgroup
// /proc/self/cgroup shows: that file lists the cgroup of the process's
// main thread, which is a command's own for the moment that thread starts
// a command (cgroup v1 moves threads, see above). A sandbox made at that
// moment must not take the command's cgroup, which is removed when the
// command ends, for the agent's. Only this process's commands' cgroups
// are left: an agent run inside another agent's command stays in it.
func outsideCommand(rel string) string {
	if strings.HasPrefix(filepath.Base(rel), fmt.Sprintf("%s%d-", cgroupPrefix, os.Getpid())) {
		return filepath.Dir(rel)
	}
	return rel
}

// ownCgroup returns this process's cgroup in the v1 hierarchy of
// controller, as /proc/self/cgroup lists it ("4:pids:/user.slice").
func ownCgroup(file, controller string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(data)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) == 3 && parts[0] != "0" && slices.Contains(strings.Split(parts[1], ","), controller) {
			return parts[2], nil
		}
	}
	return "", fmt.Errorf("no cgroup v1 %s controller (the cgroup v2 hierarchy is not used)", controller)
}

// cgroupMount returns where the cgroup v1 hierarchy of controller is
// mounted and the cgroup its mount shows as its root, from
// /proc/self/mountinfo.
func cgroupMount(file, controller string) (mount, root string, err error) {
	f, err := os.Open(file)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
		before, after, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(before), strings.Fields(after)
		if !ok || len(fields) < 5 || len(tail) < 3 || tail[0] != "cgroup" {
			continue
		}
		if slices.Contains(strings.Split(tail[2], ","), controller) {
			return unescapeMountinfo(fields[4]), unescapeMountinfo(fields[3]), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", "", err
	}
	return "", "", fmt.Errorf("the cgroup v1 %s hierarchy is not mounted", controller)
}

// unescapeMountinfo undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeStale removes the cgroups that agents no longer running left
// behind (killed while a command ran): those that are empty.
func (c *pidsCgroups) removeStale() {
	entries, err := os.ReadDir(c.parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		_ = os.Remove(filepath.Join(c.parent, e.Name())) // fails while not empty
	}
}

// commandCgroup is the pids cgroup of one command.
type commandCgroup struct {
	dir    string
	parent string
}

// create makes the cgroup of a command with at most max tasks.
func (c *pidsCgroups) create(max int) (*commandCgroup, error) {
	dir := filepath.Join(c.parent, fmt.Sprintf("%s%d-%d", cgroupPrefix, os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make the command's pids cgroup: %w", err)
	}
	cg := &commandCgroup{dir: dir, parent: c.parent}
	if err := writeCgroup(filepath.Join(dir, "pids.max"), strconv.Itoa(max)); err != nil {
		cg.remove()
		return nil, fmt.Errorf("set the command's process limit: %w", err)
	}
	return cg, nil
}

// enter moves the calling thread into the cgroup; leave moves it back.
// The caller is locked to its thread.
func (cg *commandCgroup) enter() error {
	return writeCgroup(filepath.Join(cg.dir, "tasks"), strconv.Itoa(syscall.Gettid()))
}

// leave moves the calling thread back to the agent's cgroup.
func (cg *commandCgroup) leave() error {
	return writeCgroup(filepath.Join(cg.parent, "tasks"), strconv.Itoa(syscall.Gettid()))
}

// refused returns how many tasks the cgroup refused to make (the "max"
// count of pids.events).
func (cg *commandCgroup) refused() int {
	data, err := os.ReadFile(filepath.Join(cg.dir, "pids.events"))
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(data) {
		if rest, ok := bytes.CutPrefix(line, []byte("max ")); ok {
			n, _ := strconv.Atoi(string(bytes.TrimSpace(rest)))
			return n
		}
	}
	return 0
}

// removeWait is the first wait of remove, doubled up to removeMaxWait,
// for tasks still exiting; removeFor bounds the waits in all.
const (
	removeWait    = 100 * time.Microsecond
	removeMaxWait = 20 * time.Millisecond
	removeFor     = time.Second
)

// remove removes the cgroup, waiting a little for tasks still exiting.
// One that outlives that is left to the next agent's removeStale.
func (cg *commandCgroup) remove() {
	wait := removeWait
	for deadline := time.Now().Add(removeFor); ; wait = min(2*wait, removeMaxWait) {
		err := os.Remove(cg.dir)
		if err == nil || !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return
		}
		time.Sleep(wait)
	}
}

// writeCgroup writes value to a cgroup file.
func writeCgroup(file, value string) error {
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
