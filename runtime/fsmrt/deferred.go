package fsmrt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// ErrDeferLimit is wrapped by the error of an event a state defers when
// the machine already holds as many deferred events as its spec allows
// (defer_limit): the event is refused, and nothing changes.
var ErrDeferLimit = errors.New("too many deferred events")

// ErrRecalled is wrapped by a *RecalledError: a deferred event, handled
// once the machine reached a state that does not defer it, failed.
var ErrRecalled = errors.New("a recalled deferred event failed")

// RecalledError reports a deferred event that failed when the machine
// recalled it, in a step of HandleEvent that otherwise succeeded: the
// event HandleEvent was given was taken (its actions were handed out), and
// the recalled event was dropped. Err is the event's own error, usually a
// *RejectedError. It wraps ErrRecalled, and not Err: errors.Is(err,
// ErrRejected) stays true only of an event HandleEvent itself refused.
type RecalledError[S, E Kind] struct {
	// State is the state the machine was in when it recalled the event,
	// and Event the event's kind.
	State S
	Event E
	Err   error
	pkg   string
}

// Error says which event failed, in which state, and why.
func (e *RecalledError[S, E]) Error() string {
	return fmt.Sprintf("%s: the deferred event %s, recalled in state %s, failed: %v", e.pkg, e.Event, e.State, e.Err)
}

// Unwrap returns ErrRecalled.
func (*RecalledError[S, E]) Unwrap() error { return ErrRecalled }

// Defer takes rule i, which defers its event: it tells the observer, as
// for an ignored event. The generated code has queued the event.
func (c *Core[S, E, A]) Defer(i int) error {
	c.Start(i, c.State)
	return c.Finish()
}

// Full returns the error of rule i's event, which the machine cannot
// defer: it holds c.desc.DeferLimit deferred events already.
func (c *Core[S, E, A]) Full(i int) error {
	r := &c.desc.Rules[i]
	return fmt.Errorf("%s: %s defers %s, and the machine holds %d deferred events, its limit (defer_limit): handle fewer events ahead of the state that takes them, or raise defer_limit: %w", c.pkg(), c.State, r.Event, c.desc.DeferLimit, ErrDeferLimit)
}

// Recalled returns the *RecalledError of event e, which failed with err
// when the machine recalled it.
func (c *Core[S, E, A]) Recalled(e E, err error) error {
	return &RecalledError[S, E]{State: c.State, Event: e, Err: err, pkg: c.pkg()}
}

// CopyEvent returns a copy of ev made through its JSON form (as Save
// writes it), which shares nothing with ev: a machine keeps the copy of a
// deferred event, so that the caller may reuse ev. A nil event, or one
// whose fields do not encode, is an error.
func CopyEvent[V any, S, E, A Kind](d *Desc[S, E, A], ev V, decode func([]byte) (V, error)) (V, error) {
	var zero V
	data, err := json.Marshal(ev)
	if err != nil {
		return zero, fmt.Errorf("%s: defer %T: %w", d.Package, ev, err)
	}
	if bytes.Equal(data, []byte("null")) {
		return zero, fmt.Errorf("%s: defer a nil %T: an event must point to a value", d.Package, ev)
	}
	c, err := decode(data)
	if err != nil {
		return zero, fmt.Errorf("%s: defer %T: its JSON does not read back: %w", d.Package, ev, err)
	}
	return c, nil
}

// SaveDeferred adds the deferred events a machine holds, oldest first, to
// data, what Save saved of it, as the member "deferred" (none when queue
// is empty):
//
//	"deferred": [{"kind": "send", "payload": "hello"}]
func SaveDeferred[V any, S, E, A Kind](d *Desc[S, E, A], data []byte, queue []V) ([]byte, error) {
	if len(queue) == 0 {
		return data, nil
	}
	out := append(data[:len(data)-1:len(data)-1], `,"deferred":[`...)
	for i, ev := range queue {
		b, err := json.Marshal(ev)
		if err != nil {
			return nil, fmt.Errorf("%s: save deferred event %d (%T): %w", d.Package, i+1, ev, err)
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, b...)
	}
	return append(out, ']', '}'), nil
}

// LoadDeferred reads the deferred events of a saved machine, strictly,
// oldest first, each with decode (the generated UnmarshalEvent): an event
// of an unknown kind or with unknown fields, or more events than
// d.DeferLimit, is refused. Whether the loaded state defers each event,
// the generated Load checks.
func LoadDeferred[V any, S, E, A Kind](d *Desc[S, E, A], data []byte, decode func([]byte) (V, error)) ([]V, error) {
	s, err := d.open(data)
	if err != nil {
		return nil, err
	}
	if len(s.Deferred) > d.DeferLimit {
		return nil, fmt.Errorf("%s: load a saved machine: it holds %d deferred events, more than this revision's defer_limit of %d", d.Package, len(s.Deferred), d.DeferLimit)
	}
	var q []V
	for i, raw := range s.Deferred {
		ev, err := decode(raw)
		if err != nil {
			return nil, d.reshaped(s.Shape, fmt.Errorf("%s: load a saved machine: deferred event %d: %w", d.Package, i+1, err))
		}
		q = append(q, ev)
	}
	return q, nil
}

// NotDeferred returns the error of a saved machine in state s that holds
// a deferred event of kind e, which s does not defer in this revision.
func (d *Desc[S, E, A]) NotDeferred(s S, e E) error {
	return fmt.Errorf("%s: load a saved machine: it holds a deferred %s, which state %s does not defer in this revision (a deferral removed breaks the machines saved with the event waiting: fsmgen diff says so)", d.Package, e, s)
}

// Recall handles, oldest first, the events in *queue that the machine's
// current state does not defer (defers says which kinds a state defers),
// each with dispatch as if it had just arrived, and removes them; after a
// step that changes the state it looks again from the oldest, since the
// new state may defer less. An event whose dispatch fails is dropped and
// reported as a *RecalledError; Recall returns them all, joined. The
// generated HandleEvent calls it after a step that changed the state.
func Recall[V interface{ Kind() E }, S, E, A Kind](c *Core[S, E, A], queue *[]V, defers func(S, E) bool, dispatch func(V) error) error {
	var errs []error
	for i := 0; i < len(*queue); {
		ev := (*queue)[i]
		if defers(c.State, ev.Kind()) {
			i++
			continue
		}
		*queue = slices.Delete(*queue, i, i+1)
		from := c.State
		if err := dispatch(ev); err != nil {
			errs = append(errs, c.Recalled(ev.Kind(), err))
		}
		if c.State != from {
			i = 0
		}
	}
	return errors.Join(errs...)
}
