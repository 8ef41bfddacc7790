package fsmrt

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// SavedFormat is the version of the saved form Save writes and Load reads.
const SavedFormat = 1

// A saved machine is a JSON object:
//
//	{
//	  "format": 1,
//	  "machine": "Order",                  // the spec's machine name
//	  "shape": "sha256:4f1c…",             // the fingerprint of the saved shape (Desc.Shape)
//	  "state": {"kind": "awaiting_payment", "order_id": "O-4"},
//	  "timers": [                          // the running timers, outermost state first
//	    {"state": "awaiting_payment", "id": 3, "delay": "30m0s", "deadline": "2026-11-26T03:30:00Z"}
//	  ],
//	  "last_timer": 3                      // the id of the last timer started
//	}
//
// A timer's deadline is absolute, RFC 3339 in UTC: the time its StartTimer
// returned. It is absent when the machine does not know it (its state was
// put with Restore, which starts the timers afresh): such a timer is
// armed with its delay. A later format may add members (a region per
// parallel state, history, deferred events); what this one writes stays
// readable.
type saved struct {
	Format    int             `json:"format"`
	Machine   string          `json:"machine"`
	Shape     string          `json:"shape"`
	State     json.RawMessage `json:"state"`
	Timers    []savedTimer    `json:"timers,omitempty"`
	LastTimer TimerID         `json:"last_timer,omitempty"`
}

// savedTimer is a running timer of a saved machine.
type savedTimer struct {
	State    string     `json:"state"`
	ID       TimerID    `json:"id"`
	Delay    string     `json:"delay"`
	Deadline *time.Time `json:"deadline,omitempty"`
}

// Save encodes a machine described by d: its state (which marshals itself
// with its kind), its timers (timers[i] is the timer of the state
// d.Timers[i]; a zero ID is none running) and the last timer id it gave.
func (d *Desc[S, E, A]) Save(state any, timers []Timer, last TimerID) ([]byte, error) {
	st, err := json.Marshal(state)
	if err != nil {
		return nil, fmt.Errorf("%s: save the state: %w", d.Package, err)
	}
	out := saved{Format: SavedFormat, Machine: d.Machine, Shape: d.Shape, State: st, LastTimer: last}
	for i, t := range timers {
		if t.ID == 0 {
			continue
		}
		st := savedTimer{State: d.Timers[i].State, ID: t.ID, Delay: t.Delay.String()}
		if !t.Deadline.IsZero() {
			utc := t.Deadline.UTC()
			st.Deadline = &utc
		}
		out.Timers = append(out.Timers, st)
	}
	return json.Marshal(out)
}

// load decodes a machine Save encoded, strictly: it must be a saved
// machine of this name, with no unknown, re-cased or repeated member, and
// each timer must be one of the machine's, given once, with an id no
// later than the last. It fills timers (by the timers' states, as Save
// reads them) and *last, and returns the state's JSON, for the generated
// package's UnmarshalState. A machine whose shape differs from the saved
// one's still loads when its state decodes: renamed states and fields
// load under their new names, added fields as zero values; when it does
// not, the error says that the shapes differ.
func (d *Desc[S, E, A]) load(data []byte, timers []Timer, last *TimerID) (json.RawMessage, error) {
	var s struct { // saved, with the timers read strictly below
		Format    int               `json:"format"`
		Machine   string            `json:"machine"`
		Shape     string            `json:"shape"`
		State     json.RawMessage   `json:"state"`
		Timers    []json.RawMessage `json:"timers"`
		LastTimer TimerID           `json:"last_timer"`
	}
	if err := decodeStrict(data, &s, "", nil); err != nil {
		var state struct {
			Kind *string `json:"kind"`
		}
		if json.Unmarshal(data, &state) == nil && state.Kind != nil {
			return nil, fmt.Errorf("%s: load a saved machine: %w: this is a state alone (%q), as MarshalJSON writes it, not what Save saves; restore it with UnmarshalState and Restore", d.Package, err, *state.Kind)
		}
		return nil, fmt.Errorf("%s: load a saved machine: %w", d.Package, err)
	}
	savedTimers := make([]savedTimer, len(s.Timers))
	for i, raw := range s.Timers {
		if err := decodeStrict(raw, &savedTimers[i], "", nil); err != nil {
			return nil, fmt.Errorf("%s: load a saved machine: timer %d: %w", d.Package, i+1, err)
		}
	}
	switch {
	case s.Format == 0:
		return nil, fmt.Errorf("%s: load a saved machine: no \"format\": this is not what Save saves (a state alone, as MarshalJSON writes it, restores with UnmarshalState and Restore)", d.Package)
	case s.Format != SavedFormat:
		return nil, fmt.Errorf("%s: load a saved machine: format %d, but this version of fsmgen reads format %d", d.Package, s.Format, SavedFormat)
	case s.Machine != d.Machine:
		return nil, fmt.Errorf("%s: load a saved machine: it is a %q machine, not a %q one", d.Package, s.Machine, d.Machine)
	case len(s.State) == 0:
		return nil, fmt.Errorf("%s: load a saved machine: no state", d.Package)
	}
	slot := map[string]int{}
	for i, t := range d.Timers {
		slot[t.State] = i
		for _, was := range t.Was {
			slot[was] = i
		}
	}
	for _, t := range savedTimers {
		i, ok := slot[t.State]
		switch {
		case !ok:
			return nil, d.reshaped(data, fmt.Errorf("%s: load a saved machine: a timer of state %q, which is no state with a timer in this revision (a renamed state keeps its old name in renamed_from)", d.Package, t.State))
		case timers[i].ID != 0:
			return nil, fmt.Errorf("%s: load a saved machine: two timers of state %q", d.Package, t.State)
		case t.ID == 0 || t.ID > s.LastTimer:
			return nil, fmt.Errorf("%s: load a saved machine: timer %d of state %q is not one the machine started (the last was %d)", d.Package, t.ID, t.State, s.LastTimer)
		}
		delay, err := time.ParseDuration(t.Delay)
		if err != nil {
			return nil, fmt.Errorf("%s: load a saved machine: timer %d: %w", d.Package, t.ID, err)
		}
		timers[i] = Timer{ID: t.ID, Delay: delay}
		if t.Deadline != nil {
			timers[i].Deadline = t.Deadline.UTC()
		}
	}
	if last != nil {
		*last = s.LastTimer
	} else if len(savedTimers) > 0 || s.LastTimer != 0 {
		return nil, fmt.Errorf("%s: load a saved machine: it has timers, and this machine none", d.Package)
	}
	return s.State, nil
}

// LoadState decodes a machine Save encoded, as Load does (filling timers
// and *last), and its state with decode: how a generated package's Load
// reads it. A state that does not decode is an error that says, when
// the saved shape differs from this revision's, that they differ.
func LoadState[I any, S, E, A Kind](d *Desc[S, E, A], data []byte, timers []Timer, last *TimerID, decode func([]byte) (I, error)) (I, error) {
	var zero I
	raw, err := d.load(data, timers, last)
	if err != nil {
		return zero, err
	}
	s, err := decode(raw)
	if err != nil {
		return zero, d.reshaped(data, err)
	}
	return s, nil
}

// reshaped wraps err, an error decoding the state of a saved machine, with
// what was saved and what loads it when their shapes differ.
func (d *Desc[S, E, A]) reshaped(data []byte, err error) error {
	var s struct {
		Shape string `json:"shape"`
	}
	if json.Unmarshal(data, &s) == nil && s.Shape != d.Shape {
		return fmt.Errorf("%w (saved with shape %s; this revision's is %s: fsmgen diff says what changed)", err, s.Shape, d.Shape)
	}
	return err
}

// ErrTimerNotRunning is wrapped by the error of Load when a saved timer
// belongs to a state the saved state is not in.
var ErrTimerNotRunning = errors.New("the timer's state is not active")

// CheckTimers checks that each running timer of timers belongs to state s
// or one of its ancestors.
func (d *Desc[S, E, A]) CheckTimers(s S, timers []Timer) error {
	for i, t := range timers {
		if of := d.Timers[i]; t.ID != 0 && (s < of.First || s > of.Last) {
			return fmt.Errorf("%s: load a saved machine: timer %d of state %q runs, but the machine is in %s: %w", d.Package, t.ID, of.State, s, ErrTimerNotRunning)
		}
	}
	return nil
}
