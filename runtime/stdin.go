package runtime

import (
	"os"
	"syscall"
)

// OpenStdin returns a reader of the process's standard input whose reads
// can be interrupted, so that [Agent.Run] can stop its input task.
//
// A read from os.Stdin on a terminal or a pipe blocks in the kernel and
// cannot be interrupted. When standard input is a terminal or a pipe,
// OpenStdin opens it again (through /dev/stdin, a file description of its
// own, in non-blocking mode so that Go's poller serves it and
// SetReadDeadline works); the flags of the descriptor the shell shares are
// untouched. Anything else (a regular file, whose reads never block), or a
// failure to reopen, gives os.Stdin itself. Close the file returned when it
// is not os.Stdin.
func OpenStdin() *os.File {
	fi, err := os.Stdin.Stat()
	if err != nil || fi.Mode()&(os.ModeCharDevice|os.ModeNamedPipe) == 0 {
		return os.Stdin
	}
	for _, name := range []string{"/dev/stdin", "/proc/self/fd/0"} {
		fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err == nil {
			return os.NewFile(uintptr(fd), name)
		}
	}
	return os.Stdin
}
