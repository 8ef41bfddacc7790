package fsmrt

import "time"

// TimerID identifies a timer a machine started. A machine numbers its
// timers from 1 as it starts them, so that the TimerFired of a timer
// started before its state was left names no running timer, and changes
// nothing. A generated package names it TimerID.
type TimerID uint64

// Timer is a running timer of a machine's state: its id, the delay it was
// started with, and its deadline, when the machine knows it. The zero
// Timer is no timer: one that fired without its state being left is
// spent, and its record is zeroed.
type Timer struct {
	ID    TimerID
	Delay time.Duration
	// Deadline is when the timer fires: what the Handler's StartTimer
	// returned, or what Load read; zero for a timer of a state put with
	// Restore, which is armed with its delay.
	Deadline time.Time
}

// Rearm gives a running timer the delay d in place of the one it was
// started with: its deadline, when known, moves to the time the timer
// started (its deadline less its delay) plus d. A timer that is not
// running is left as it is. A generated LoadWith calls it for
// LoadOptions.Rearm.
func (t *Timer) Rearm(d time.Duration) {
	if t.ID == 0 {
		return
	}
	if !t.Deadline.IsZero() {
		t.Deadline = t.Deadline.Add(d - t.Delay)
	}
	t.Delay = d
}

// LoadOptions says how a generated package's LoadWith makes a machine of
// saved data; the zero value loads it as it was saved, as Load does. A
// generated package with timers names it LoadOptions.
type LoadOptions struct {
	// Rearm gives each running timer the delay this revision of the spec
	// gives its state — the duration the spec writes, or what its delay
	// effect computes from the state's fields as they were loaded — in
	// place of the delay it was saved with, and moves its deadline to the
	// time the timer started (its saved deadline less its saved delay)
	// plus the new delay. A deadline moved into the past fires as soon as
	// the timer is armed again. Without Rearm, a timer keeps the deadline
	// it was saved with, whatever the spec now says; fsmgen diff says
	// which delays changed. A timer whose deadline was not saved (its
	// state was put with Restore) takes the new delay, still with no
	// deadline.
	Rearm bool
}
