package cpuclock

import (
	"syscall"
	"time"
)

// Process returns the processor time the process has used so far, user
// and system, on every thread (the collector's workers included), and
// true. Linux counts it in nanoseconds and reports it in microseconds.
func Process() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
