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
//	    {"state": "awaiting_payment", "id": 3, "delay": "30m0s", "deadline": "2026-11-26T03:30:00Z"},
//	    {"state": "awaiting_payment", "timer": "reminder", "id": 4, "delay": "10m0s", "deadline": "2026-11-26T03:10:00Z"}
//	  ],
//	  "last_timer": 3                      // the id of the last timer started
//	}
//
// A timer is named by its state and, for one of several timers of a state,
// its id in the spec (absent for a timer without one). A timer's deadline
// is absolute, RFC 3339 in UTC: the time its StartTimer
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
	Timer    string     `json:"timer,omitempty"`
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
		st := savedTimer{State: d.Timers[i].State, Timer: d.Timers[i].Timer, ID: t.ID, Delay: t.Delay.String()}
		if !t.Deadline.IsZero() {
			utc := t.Deadline.UTC()
			st.Deadline = &utc
		}
		out.Timers = append(out.Timers, st)
	}
	return json.Marshal(out)
}

// envelope is a saved machine as load reads it: its timers are read
// strictly, one by one, once its state has decoded.
type envelope struct {
	Format    int               `json:"format"`
	Machine   string            `json:"machine"`
	Shape     string            `json:"shape"`
	State     json.RawMessage   `json:"state"`
	Timers    []json.RawMessage `json:"timers"`
	LastTimer TimerID           `json:"last_timer"`
}

// open decodes a machine Save encoded, strictly: it must be a saved
// machine of this name, in the format this package reads, with a state
// and no unknown, re-cased or repeated member.
func (d *Desc[S, E, A]) open(data []byte) (*envelope, error) {
	var s envelope
	if err := decodeStrict(data, &s, "", nil); err != nil {
		var state struct {
			Kind *string `json:"kind"`
		}
		if json.Unmarshal(data, &state) == nil && state.Kind != nil {
			return nil, fmt.Errorf("%s: load a saved machine: %w: this is a state alone (%q), as MarshalJSON writes it, not what Save saves; restore it with UnmarshalState and Restore", d.Package, err, *state.Kind)
		}
		return nil, fmt.Errorf("%s: load a saved machine: %w", d.Package, err)
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
	return &s, nil
}

// loadTimers reads the timers of a saved machine whose state has decoded,
// strictly: each must be one of the machine's, given once, with an id no
// later than the last. It fills timers (by the timers' states, as Save
// reads them) and *last.
func (d *Desc[S, E, A]) loadTimers(s *envelope, timers []Timer, last *TimerID) error {
	saved := make([]savedTimer, len(s.Timers))
	for i, raw := range s.Timers {
		if err := decodeStrict(raw, &saved[i], "", nil); err != nil {
			return fmt.Errorf("%s: load a saved machine: timer %d: %w", d.Package, i+1, err)
		}
	}
	type key struct{ state, timer string }
	slot := map[key]int{}
	for i, t := range d.Timers {
		slot[key{t.State, t.Timer}] = i
		for _, was := range t.Was {
			slot[key{was, t.Timer}] = i
		}
	}
	for _, t := range saved {
		i, ok := slot[key{t.State, t.Timer}]
		name := fmt.Sprintf("state %q", t.State)
		if t.Timer != "" {
			name = fmt.Sprintf("state %q (timer %q)", t.State, t.Timer)
		}
		switch {
		case !ok && t.Timer != "":
			return d.reshaped(s.Shape, fmt.Errorf("%s: load a saved machine: timer %q of state %q, which is no timer of a state in this revision (a renamed state keeps its old name in renamed_from; a timer keeps its id)", d.Package, t.Timer, t.State))
		case !ok:
			return d.reshaped(s.Shape, fmt.Errorf("%s: load a saved machine: a timer of state %q, which is no state with a timer in this revision (a renamed state keeps its old name in renamed_from)", d.Package, t.State))
		case timers[i].ID != 0:
			return fmt.Errorf("%s: load a saved machine: two timers of %s", d.Package, name)
		case t.ID == 0 || t.ID > s.LastTimer:
			return fmt.Errorf("%s: load a saved machine: timer %d of %s is not one the machine started (the last was %d)", d.Package, t.ID, name, s.LastTimer)
		}
		delay, err := time.ParseDuration(t.Delay)
		if err != nil {
			return fmt.Errorf("%s: load a saved machine: timer %d: %w", d.Package, t.ID, err)
		}
		timers[i] = Timer{ID: t.ID, Delay: delay}
		if t.Deadline != nil {
			timers[i].Deadline = t.Deadline.UTC()
		}
	}
	if last != nil {
		*last = s.LastTimer
	} else if len(saved) > 0 || s.LastTimer != 0 {
		return fmt.Errorf("%s: load a saved machine: it has timers, and this machine none", d.Package)
	}
	return nil
}

// LoadState decodes a machine Save encoded, strictly: first what it is
// (a saved machine of this name, in a format this package reads), then
// its state, with decode, then its timers, filling timers (by the timers'
// states, as Save reads them) and *last: how a generated package's Load
// reads it. A machine whose shape differs from the saved one's still
// loads when its state decodes: renamed states and fields load under
// their new names, added fields as zero values. When it does not, the
// error says that the shapes differ; a state that is no longer one of
// the machine's is named as such, before its timers are looked at.
func LoadState[I any, S, E, A Kind](d *Desc[S, E, A], data []byte, timers []Timer, last *TimerID, decode func([]byte) (I, error)) (I, error) {
	var zero I
	s, err := d.open(data)
	if err != nil {
		return zero, err
	}
	state, err := decode(s.State)
	if err != nil {
		if errors.Is(err, ErrUnknownKind) {
			err = d.gone(s)
		}
		return zero, d.reshaped(s.Shape, err)
	}
	if err := d.loadTimers(s, timers, last); err != nil {
		return zero, err
	}
	return state, nil
}

// gone is the error of a saved machine whose state's kind is no state of
// the machine.
func (d *Desc[S, E, A]) gone(s *envelope) error {
	var state struct {
		Kind string `json:"kind"`
	}
	_ = json.Unmarshal(s.State, &state) // the decoder has read it
	if s.Shape == d.Shape {
		return &kindError{fmt.Sprintf("%s: load a saved machine: state %q is not a state of machine %s", d.Package, state.Kind, d.Machine)}
	}
	return &kindError{fmt.Sprintf("%s: load a saved machine: state %q is no longer a state of machine %s: it was removed in this revision, or renamed without its old name in renamed_from", d.Package, state.Kind, d.Machine)}
}

// reshaped wraps err, an error decoding a saved machine's state or
// timers, with what was saved (shape) and what loads it when their shapes
// differ.
func (d *Desc[S, E, A]) reshaped(shape string, err error) error {
	if shape != d.Shape {
		return fmt.Errorf("%w (saved with shape %s; this revision's is %s: fsmgen diff says what changed)", err, shape, d.Shape)
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
