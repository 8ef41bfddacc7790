package sandbox

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"syscall"
)

// close_range(2): its number, the same on every architecture (Linux 5.9),
// and its flag that marks the descriptors close-on-exec instead of closing
// them (Linux 5.11).
const (
	sysCloseRange     = 436
	closeRangeCloexec = 1 << 2
)

// CloseInheritedFDs marks every file descriptor of this process from 3 up
// close-on-exec, so that a command started next gets only its standard
// input, output and error and the descriptors passed to it on purpose
// (exec.Cmd.ExtraFiles, which the child dups without the flag).
//
// Go opens all of its own descriptors close-on-exec, but a process can
// inherit others: `exec 7</home/user` in the shell that starts the agent
// leaves fd 7 open in the agent without the flag, and a command started
// with it could read and write through /proc/self/fd/7 whatever that
// directory holds, outside the sandbox's mounts. This is process-wide: a
// descriptor that something else in the process meant its own children
// to inherit loses that. Start calls it before each command, so that
// descriptors opened since (by cgo or raw system calls) are caught too;
// only one opened without the flag by another goroutine between this call
// and the command's start can still slip through. A program that runs
// other commands too (the agent's git) calls it once when it starts.
func CloseInheritedFDs() error {
	_, _, errno := syscall.Syscall(sysCloseRange, 3, math.MaxUint32, closeRangeCloexec)
	if errno == 0 {
		return nil
	}
	return closeListedFDs() // before Linux 5.11
}

// closeListedFDs does what CloseInheritedFDs does, one descriptor at a
// time, as /proc/self/fd lists them.
func closeListedFDs() error {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("list the agent's open files to keep them from commands: %w; mount /proc", err)
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
		if errno != 0 || flags&syscall.FD_CLOEXEC != 0 {
			continue // closed since it was listed (the listing's own), or marked already
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFD, flags|syscall.FD_CLOEXEC); errno != 0 {
			return fmt.Errorf("keep the agent's file descriptor %d from commands: %w", fd, errno)
		}
	}
	return nil
}
