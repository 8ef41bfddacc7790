package sandbox

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Limits bounds what a confined command may use. A zero field sets no
// limit. See the package doc for how each is enforced, and where it does
// not hold.
type Limits struct {
	// Memory is the memory each process may allocate, in bytes: its data
	// (heap, anonymous and private writable mappings, RLIMIT_DATA), not
	// the address space it reserves, so that Go and Node.js programs,
	// which reserve far more than they use, run under it.
	Memory int64
	// Processes is how many processes and threads the command may have at
	// once, all of them together (a pids cgroup, or RLIMIT_NPROC).
	Processes int
	// CPU is the CPU time each process may use (RLIMIT_CPU), rounded up to
	// whole seconds: SIGXCPU at the limit, SIGKILL a second later.
	CPU time.Duration
	// FileSize is the size of the largest file a process may write, in
	// bytes (RLIMIT_FSIZE): a write past it fails and the process gets
	// SIGXFSZ.
	FileSize int64
	// TmpSize is the size of the private /tmp, in bytes (a tmpfs, in
	// memory: the size option of bubblewrap 0.7 and later).
	TmpSize int64
	// Disk is how much the command may write to the disk, in bytes, in
	// all its files together: the growth of the used space of the file
	// systems of the directories it may write (the workspace, its cache,
	// the writable exposures) while it runs. Past it the command is
	// killed, with everything it started (see diskWatch; Linux only).
	Disk int64
}

// DefaultLimits returns the limits of confined commands unless told
// otherwise: 1 GiB of memory per process, 1024 processes and threads,
// 10 minutes of CPU time per process, files up to 1 GiB, a /tmp of 512
// MiB, 1 GiB written to the disk per command. (Building this repository's tests in the sandbox, `go test -run
// XXX ./...`, peaks at 34 processes and threads and 159 MiB of /tmp, and
// works with 1 GiB per process.)
func DefaultLimits() Limits {
	return Limits{Memory: 1 << 30, Processes: 1024, CPU: 10 * time.Minute, FileSize: 1 << 30, TmpSize: 512 << 20, Disk: 1 << 30}
}

// cpuSeconds returns the CPU limit in whole seconds, rounded up.
func (l Limits) cpuSeconds() int64 {
	return int64((l.CPU + time.Second - 1) / time.Second)
}

// limitsArg0 is the name of the shell that sets the limits, as ps shows
// it.
const limitsArg0 = "fsmgen-limits"

// wrap returns argv run by a shell that first sets the per-process limits
// on itself, which its children inherit, then runs argv in its place. It
// runs inside the sandbox: there, in the sandbox's user namespace,
// RLIMIT_NPROC counts the processes of the sandbox alone (set before
// bubblewrap made the namespace, it would count all of the user's). The
// limits are both soft and hard (a command cannot raise them), but for
// the CPU time, whose hard limit is a second higher so that a process
// first gets SIGXCPU ("CPU time limit exceeded"), then SIGKILL. shell is
// the bash that runs it (an absolute path found on the host: never one
// the model's commands could have planted, which would set no limit).
func (l Limits) wrap(shell string, argv []string) []string {
	var set []string
	if l.Memory > 0 {
		set = append(set, "-d", strconv.FormatInt(max(l.Memory>>10, 1), 10)) // KiB
	}
	if l.Processes > 0 {
		set = append(set, "-u", strconv.Itoa(l.Processes))
	}
	if l.FileSize > 0 {
		set = append(set, "-f", strconv.FormatInt(max(l.FileSize>>10, 1), 10)) // KiB (bash's -f, outside POSIX mode)
	}
	var script []string
	if len(set) > 0 {
		script = append(script, "ulimit -S -H -c 0 "+strings.Join(set, " "))
	}
	if s := l.cpuSeconds(); s > 0 {
		script = append(script, fmt.Sprintf("ulimit -S -t %d", s), fmt.Sprintf("ulimit -H -t %d", s+1))
	}
	if len(script) == 0 {
		return argv
	}
	script = append(script, `exec "$@"`)
	return append([]string{shell, "-c", strings.Join(script, " && "), limitsArg0}, argv...)
}

// Signals of the limits, and the status bubblewrap and shells report for
// a process killed by one (128+N).
const (
	sigXCPU  = syscall.SIGXCPU
	sigXFSZ  = syscall.SIGXFSZ
	exitXCPU = 128 + int(sigXCPU)
	exitXFSZ = 128 + int(sigXFSZ)
)

// LimitNote starts the line a command's result begins with when it
// reached a limit of the sandbox, which names the flag that raises it.
const LimitNote = "sandbox limit "

// outOfMemory are what programs print, in lower case, when an allocation
// fails: the C library's strerror(ENOMEM) and bash ("cannot allocate"),
// Go's runtime, Perl and Node.js ("out of memory"), Python, C++, the JVM.
var outOfMemory = []string{"cannot allocate", "out of memory", "memoryerror", "bad_alloc", "memory exhausted", "outofmemoryerror"}

// forkRefused are what programs print, in lower case, when a fork fails:
// strerror(EAGAIN) (bash, Perl, Python, Go) and dash.
var forkRefused = []string{"resource temporarily unavailable", "cannot fork"}

// LimitNote says, for the model and the user, which limits the command
// reached, as far as can be told from how it ended and from its output (a
// part of it will do), each led by the flag that raises it: "sandbox
// limit -sandbox-memory: a process may have run out of its 1 GiB of
// memory. Use less ...". The pids cgroup counts the processes it refused;
// a process killed by SIGXCPU or SIGXFSZ, or a shell saying so, shows the
// CPU time or the file size; a command stopped for what it wrote shows
// the disk; an allocation that failed, a fork refused or
// a file system full may be the memory, the process limit (without a
// pids cgroup) or /tmp. It returns "" when no limit shows, and before the
// command has ended.
func (p *Process) LimitNote(output []byte) string {
	select {
	case <-p.done:
	default:
		return ""
	}
	if !p.confined {
		return ""
	}
	l := p.limits
	lower := bytes.ToLower(output)
	code := -1
	if p.cmd.ProcessState != nil {
		code = p.cmd.ProcessState.ExitCode()
	}
	var notes []string
	note := func(flag, format string, args ...any) {
		notes = append(notes, fmt.Sprintf("-%s: %s", flag, fmt.Sprintf(format, args...)))
	}
	if l.Processes > 0 {
		switch {
		case p.pidsRefused > 0:
			note(FlagProcesses, "the command reached its limit of %d processes and threads at once (%d refused)", l.Processes, p.pidsRefused)
		case !p.pidsCgroup && containsAny(lower, forkRefused):
			note(FlagProcesses, "the command may have reached its limit of %d processes and threads at once", l.Processes)
		}
	}
	if l.CPU > 0 && (code == exitXCPU || bytes.Contains(output, []byte("CPU time limit exceeded"))) {
		note(FlagCPU, "a process used its %ds of CPU time and was killed", l.cpuSeconds())
	}
	if l.FileSize > 0 && (code == exitXFSZ || bytes.Contains(output, []byte("File size limit exceeded"))) {
		note(FlagFileSize, "a process tried to write a file over %s and was stopped", sizeText(l.FileSize))
	}
	if l.Memory > 0 && containsAny(lower, outOfMemory) {
		note(FlagMemory, "a process may have run out of its %s of memory", sizeText(l.Memory))
	}
	switch {
	case p.disk != nil && p.disk.wrote > 0 && p.disk.ended:
		note(FlagDisk, "the command wrote %s to the disk (the workspace, its cache), over its limit of %s, and ended before it could be stopped", sizeText(p.disk.wrote), sizeText(p.disk.limit))
	case p.disk != nil && p.disk.wrote > 0:
		note(FlagDisk, "the command wrote %s to the disk (the workspace, its cache), over its limit of %s, and was stopped with everything it started", sizeText(p.disk.wrote), sizeText(p.disk.limit))
	}
	if l.TmpSize > 0 && !p.tmpUnlimited && bytes.Contains(output, []byte("No space left on device")) {
		note(FlagTmpSize, "the command may have filled its /tmp of %s (or the disk is full)", sizeText(l.TmpSize))
	}
	if len(notes) == 0 {
		return ""
	}
	return LimitNote + strings.Join(notes, "; ") + ". Use less or split the work; the user can raise a limit with its flag"
}

// containsAny reports whether b contains one of subs.
func containsAny(b []byte, subs []string) bool {
	for _, s := range subs {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// sizeText writes a size for people: "1 GiB", "512 MiB", "1.5 KiB",
// "100 bytes".
func sizeText(n int64) string {
	v, unit := float64(n), "bytes"
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if v < 1024 {
			break
		}
		v, unit = v/1024, u
	}
	return strings.TrimSuffix(strconv.FormatFloat(v, 'f', 1, 64), ".0") + " " + unit
}

// String describes the limits in a few words, for a start-up message.
func (l Limits) String() string {
	var parts []string
	if l.Memory > 0 {
		parts = append(parts, sizeText(l.Memory)+" of memory per process")
	}
	if l.Processes > 0 {
		parts = append(parts, strconv.Itoa(l.Processes)+" processes")
	}
	if l.CPU > 0 {
		parts = append(parts, (time.Duration(l.cpuSeconds())*time.Second).String()+" of CPU per process")
	}
	if l.FileSize > 0 {
		parts = append(parts, "files up to "+sizeText(l.FileSize))
	}
	if l.TmpSize > 0 {
		parts = append(parts, "a /tmp of "+sizeText(l.TmpSize))
	}
	if l.Disk > 0 {
		parts = append(parts, sizeText(l.Disk)+" written to the disk per command")
	}
	if len(parts) == 0 {
		return "no limits"
	}
	return strings.Join(parts, ", ")
}
