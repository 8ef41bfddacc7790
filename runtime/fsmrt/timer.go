package fsmrt

import "time"

// TimerID identifies a timer a machine started. A machine numbers its
// timers from 1 as it starts them, so that the TimerFired of a timer
// started before its state was left names no running timer, and changes
// nothing. A generated package names it TimerID.
type TimerID uint64

// Timer is a running timer of a machine's state: its id, and the delay it
// was started with. The zero Timer is no timer: one that fired without
// its state being left is spent, and its record is zeroed.
type Timer struct {
	ID    TimerID
	Delay time.Duration
}
