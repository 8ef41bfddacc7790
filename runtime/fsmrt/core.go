package fsmrt

import (
	"errors"
	"fmt"
)

// ErrRejected is wrapped by every *RejectedError, whatever the machine:
// errors.Is(err, fsmrt.ErrRejected) tells a refused event from other
// errors.
var ErrRejected = errors.New("event rejected")

// ErrReentrant is wrapped by the error HandleEvent returns when it is
// called while the machine hands out the actions of an earlier event:
// from a Handler or observer method, or after one of them panicked.
var ErrReentrant = errors.New("HandleEvent called from a Handler or Observer method (or after one panicked): queue the event and handle it once HandleEvent has returned")

// RejectedError reports that the current state refused an event; the
// machine is unchanged. A generated package names it RejectedError.
type RejectedError[S, E Kind] struct {
	// State is the state that refused the event.
	State S
	// Event is the refused event's kind.
	Event E
	// Reason says why, as the spec gives it.
	Reason string
	// pkg is the generated package's name, the prefix of the message.
	pkg string
}

// Error returns "PACKAGE: STATE rejects EVENT: REASON".
func (e *RejectedError[S, E]) Error() string {
	msg := e.State.String() + " rejects " + e.Event.String() + ": " + e.Reason
	if e.pkg != "" {
		msg = e.pkg + ": " + msg
	}
	return msg
}

// Unwrap returns ErrRejected.
func (*RejectedError[S, E]) Unwrap() error { return ErrRejected }

// Core is what every generated Machine keeps besides its data: the
// current state, whether it is handing out a step, its observer and its
// description. Generated code embeds one in a named field and drives it
// from HandleEvent; a program never uses it directly.
type Core[S, E, A Kind] struct {
	// State is the machine's current state, a leaf; zero for a Machine
	// not made by New or Restore.
	State S
	// Busy is set while the machine hands out the actions of an event.
	Busy bool
	desc *Desc[S, E, A]
	obs  func(Step[S, E])
}

// NewCore returns the core of a machine described by d, in state s.
func NewCore[S, E, A Kind](d *Desc[S, E, A], s S) Core[S, E, A] {
	return Core[S, E, A]{State: s, desc: d}
}

// SetObserver makes the machine call o after every step; nil removes the
// observer.
func (c *Core[S, E, A]) SetObserver(o func(Step[S, E])) { c.obs = o }

// Start begins handing out the step of rule i from state from, the
// machine being in its new state: it tells the observer, if any, and
// refuses calls of HandleEvent until Finish.
func (c *Core[S, E, A]) Start(i int, from S) {
	c.Busy = true
	if c.obs != nil {
		c.observe(i, from)
	}
}

// observe tells the observer of the step Start begins. It is apart from
// Start, and never inlined into it, so that Start, which every step calls,
// is small enough for the compiler to inline where it is called.
//
//go:noinline
func (c *Core[S, E, A]) observe(i int, from S) {
	c.obs(Step[S, E]{From: from, Event: c.desc.Rules[i].Event, Rule: i, To: c.State})
}

// Finish ends the step Start began.
func (c *Core[S, E, A]) Finish() error {
	c.Busy = false
	return nil
}

// Ignore takes rule i, which drops its event.
func (c *Core[S, E, A]) Ignore(i int) error {
	c.Start(i, c.State)
	return c.Finish()
}

// Beside tells the observer of rule i, which a region of a parallel
// state takes in the step of another region's rule and which changes no
// state: an ignore, or a rule without a target beside a rule that leaves
// the parallel state (observed from the state the machine is in then).
// HandleEvent stays busy while the observer runs.
func (c *Core[S, E, A]) Beside(i int) {
	if c.obs != nil {
		busy := c.Busy
		c.Busy = true
		c.observe(i, c.State)
		c.Busy = busy
	}
}

// IgnoreAll takes the ignores the regions of a parallel state picked, in
// document order, when no region took a transition: rules[k] is region
// k's, or -1 where it picked none.
func (c *Core[S, E, A]) IgnoreAll(rules ...int) error {
	for _, i := range rules {
		if i >= 0 {
			c.Beside(i)
		}
	}
	return nil
}

// Reject takes rule i, which refuses its event: it returns the
// *RejectedError HandleEvent returns.
func (c *Core[S, E, A]) Reject(i int) error {
	c.Start(i, c.State)
	c.Busy = false
	r := &c.desc.Rules[i]
	return &RejectedError[S, E]{State: c.State, Event: r.Event, Reason: r.Reason, pkg: c.desc.Package}
}

// Reentrant returns the error of a HandleEvent called while the machine
// is busy.
func (c *Core[S, E, A]) Reentrant() error {
	return fmt.Errorf("%s: %w", c.pkg(), ErrReentrant)
}

// NilEvent returns the error of a nil event pointer, which HandleEvent
// refuses where its rules would read the event.
func (c *Core[S, E, A]) NilEvent(ev any) error {
	return fmt.Errorf("%s: %s cannot handle a nil %T: an event must point to a value", c.pkg(), c.State, ev)
}

// Unhandled explains why HandleEvent found no rule for ev: the machine
// was not made by New or Restore, or ev is not one of its events.
func (c *Core[S, E, A]) Unhandled(ev any) error {
	if c.desc == nil {
		return errors.New("fsmgen: the machine is not initialised: create it with its package's New or Restore")
	}
	return fmt.Errorf("%s: %s cannot handle %T: it is not an event of the %s machine", c.pkg(), c.State, ev, c.desc.Machine)
}

// pkg returns the generated package's name, for messages.
func (c *Core[S, E, A]) pkg() string {
	if c.desc == nil {
		return "fsmgen"
	}
	return c.desc.Package
}

// NoDependency returns the error of New or Restore given a Config whose
// field (Behavior or Handler) is nil.
func (d *Desc[S, E, A]) NoDependency(field string) error {
	return fmt.Errorf("%s: Config.%s is nil: the %s machine needs one", d.Package, field, d.Machine)
}

// Unrestorable returns the error of Restore given a value that is not a
// state of the machine (nil, or another package's).
func (d *Desc[S, E, A]) Unrestorable(s any) error {
	return fmt.Errorf("%s: cannot restore %T: it is not a state of the %s machine", d.Package, s, d.Machine)
}

// Transient returns the error of Restore given a transient state, which
// is left in the step that enters it.
func (d *Desc[S, E, A]) Transient(state string) error {
	return fmt.Errorf("%s: cannot restore the transient state %s: it is never at rest", d.Package, state)
}
