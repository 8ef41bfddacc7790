// Package cpuclock reads the processor time the process has used, for
// the benchmarks of this module: on a machine shared with other work a
// runnable goroutine waits for a CPU, and the wall clock, which Go's
// benchmarks time, counts the wait. With the load at ten on two CPUs the
// wait is most of what they report; the processor time is what the code
// measured costs. docs/performance.md says what each measures.
package cpuclock

import "time"

// Timer adds up the processor time of the stretches between Start and
// Stop.
type Timer struct {
	total, start time.Duration
	broken       bool
}

// Start starts a stretch.
func (t *Timer) Start() {
	now, ok := Process()
	t.start, t.broken = now, t.broken || !ok
}

// Stop ends a stretch and adds it to the total.
func (t *Timer) Stop() {
	now, ok := Process()
	t.total += now - t.start
	t.broken = t.broken || !ok
}

// Total returns the processor time of the stretches, and false when it
// could not be read (see Process).
func (t *Timer) Total() (time.Duration, bool) { return t.total, !t.broken }
