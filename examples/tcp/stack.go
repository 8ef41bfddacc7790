package tcp

import "time"

// MSL is the maximum segment lifetime RFC 793 takes (section 3.3): how
// long a segment may wander the network before it is gone for sure.
const MSL = 2 * time.Minute

// Stack is the connection's Behavior, written by hand: its one setting is
// the maximum segment lifetime, which sets how long TIME-WAIT lasts. Like
// every Behavior it is pure.
type Stack struct {
	// MSL is the maximum segment lifetime; TIME-WAIT lasts twice as long.
	// RFC 793 takes the constant MSL; tests use much less.
	MSL time.Duration
}

var _ Behavior = Stack{}

// Passive reports whether the connection is passive (opened to listen).
func (Stack) Passive(passive bool) bool { return passive }

// Activate turns a listening connection into an active one: a SEND in
// LISTEN makes the connection active (RFC 793 section 3.9, SEND call), so
// a reset in SYN-RECEIVED then closes it instead of listening again.
func (Stack) Activate() bool { return false }

// TwoMSL returns how long TIME-WAIT lasts, twice the maximum segment
// lifetime.
func (s Stack) TwoMSL() time.Duration { return 2 * s.MSL }
