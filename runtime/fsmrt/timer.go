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
