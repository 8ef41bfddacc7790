package fsmrt

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
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
// It writes the bytes json.Marshal writes of a saved (saveSlow, which
// TestSaveAsMarshal compares it with), without encoding/json's reflection
// over the saved form and its second pass over the state's JSON: a
// server saves every machine a round changes, and each new one at start.
func (d *Desc[S, E, A]) Save(state any, timers []Timer, last TimerID) ([]byte, error) {
	st, err := marshalState(state)
	if err != nil {
		return nil, fmt.Errorf("%s: save the state: %w", d.Package, err)
	}
	out := make([]byte, 0, len(st)+len(d.Machine)+len(d.Shape)+64+len(timers)*96)
	out = append(out, `{"format":`...)
	out = strconv.AppendInt(out, SavedFormat, 10)
	out = append(out, `,"machine":`...)
	out = appendJSONString(out, d.Machine)
	out = append(out, `,"shape":`...)
	out = appendJSONString(out, d.Shape)
	out = append(out, `,"state":`...)
	out = append(out, st...)
	n := 0
	for i, t := range timers {
		if t.ID == 0 {
			continue
		}
		if n == 0 {
			out = append(out, `,"timers":[`...)
		} else {
			out = append(out, ',')
		}
		n++
		out = append(out, `{"state":`...)
		out = appendJSONString(out, d.Timers[i].State)
		out = append(out, `,"id":`...)
		out = strconv.AppendUint(out, uint64(t.ID), 10)
		out = append(out, `,"delay":`...)
		out = appendJSONString(out, t.Delay.String())
		if !t.Deadline.IsZero() {
			out = append(out, `,"deadline":"`...)
			if out, err = t.Deadline.UTC().AppendText(out); err != nil {
				return d.saveSlow(st, timers, last) // encoding/json's error
			}
			out = append(out, '"')
		}
		out = append(out, '}')
	}
	if n > 0 {
		out = append(out, ']')
	}
	if last != 0 {
		out = append(out, `,"last_timer":`...)
		out = strconv.AppendUint(out, uint64(last), 10)
	}
	return append(out, '}'), nil
}

// saveSlow is Save through encoding/json, with the state's JSON st.
func (d *Desc[S, E, A]) saveSlow(st []byte, timers []Timer, last TimerID) ([]byte, error) {
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

// marshalState returns json.Marshal(state). A state that marshals itself
// (a generated state, through MarshalKind) is asked for its JSON, which
// is used as it is when it is what json.Marshal would make of it (valid,
// compact, nothing to escape for HTML): json.Marshal would check and copy
// it all again.
func marshalState(state any) ([]byte, error) {
	m, ok := state.(json.Marshaler)
	if !ok {
		return json.Marshal(state)
	}
	if v := reflect.ValueOf(state); v.Kind() == reflect.Pointer && v.IsNil() {
		return json.Marshal(state)
	}
	b, err := m.MarshalJSON()
	if err != nil || !compactJSON(b) {
		return json.Marshal(state)
	}
	return b, nil
}

// compactJSON reports whether b is one JSON value that json.Marshal would
// write as it is: valid, no space between tokens, no '<', '>' or '&' and
// no U+2028 or U+2029 (which it escapes).
func compactJSON(b []byte) bool {
	s := scanner{data: b}
	if !s.value(0) || s.i != len(b) {
		return false
	}
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			inString = !inString
		case c == '\\':
			i++ // the escaped byte (an escape's other bytes are plain)
		case c == '<' || c == '>' || c == '&':
			return false
		case c == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9):
			return false
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

// appendJSONString appends s as json.Marshal writes a string.
func appendJSONString(out []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x7F || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return append(out, b...)
		}
	}
	out = append(out, '"')
	out = append(out, s...)
	return append(out, '"')
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
	if state, ok := d.loadFast(data, timers, last); ok {
		return state, nil
	}
	return d.loadSlow(data, timers, last)
}

// loadSlow is load through the strict decoding of any saved form, for
// what loadFast does not take.
func (d *Desc[S, E, A]) loadSlow(data []byte, timers []Timer, last *TimerID) (json.RawMessage, error) {
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

// loadFast is load for a saved machine as Save writes it: each member
// read from its JSON directly, the state's JSON returned in place (in
// data), nothing decoded through reflection. It takes nothing it is not
// sure of: anything else (an error, a member of another type, a renamed
// state's timer, more timers than it stages) makes it return false,
// having changed nothing, and load reads the data as before, which
// decides, and says what is wrong.
func (d *Desc[S, E, A]) loadFast(data []byte, timers []Timer, last *TimerID) (json.RawMessage, bool) {
	buf := getMembers()
	ms, err := membersIn(data, *buf)
	defer putMembers(buf, ms)
	if err != nil {
		return nil, false
	}
	var (
		staged    [4]Timer
		state     json.RawMessage
		format    int64
		lastTimer int64
		machine   bool
		n         int
	)
	if len(timers) > len(staged) {
		return nil, false
	}
	for _, m := range ms {
		v := m.value
		switch string(m.key) {
		case "format":
			var ok bool
			if format, _, ok = digits(v); !ok {
				return nil, false
			}
		case "machine":
			machine = len(v) == len(d.Machine)+2 && v[0] == '"' && string(v[1:len(v)-1]) == d.Machine
		case "shape":
			if v[0] != '"' {
				return nil, false
			}
		case "state":
			if v[0] != '{' {
				return nil, false
			}
			state = v
		case "timers":
			if v[0] != '[' {
				return nil, false
			}
			s := scanner{data: v, i: 1}
			s.space()
			for s.peek() != ']' {
				start := s.i
				s.value(0)
				t, slot, ok := d.savedTimer(v[start:s.i])
				if !ok || slot >= len(timers) || staged[slot].ID != 0 {
					return nil, false
				}
				staged[slot] = t
				n++
				s.space()
				if s.peek() == ',' {
					s.i++
					s.space()
				}
			}
		case "last_timer":
			var neg, ok bool
			if lastTimer, neg, ok = digits(v); !ok || neg {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	if format != SavedFormat || !machine || state == nil || (last == nil && (n > 0 || lastTimer != 0)) {
		return nil, false
	}
	for _, t := range staged[:len(timers)] {
		if t.ID > TimerID(lastTimer) {
			return nil, false
		}
	}
	for i, t := range staged[:len(timers)] {
		if t.ID != 0 {
			timers[i] = t
		}
	}
	if last != nil {
		*last = TimerID(lastTimer)
	}
	return state, true
}

// savedTimer reads a timer of a saved machine as Save writes it, for
// loadFast, and returns the slot of its state in d.Timers.
func (d *Desc[S, E, A]) savedTimer(data []byte) (t Timer, slot int, ok bool) {
	if data[0] != '{' {
		return Timer{}, 0, false
	}
	sc := scanner{data: data}
	buf := getMembers()
	ms, dup, valid := sc.document(*buf)
	defer putMembers(buf, ms)
	if !valid || dup >= 0 {
		return Timer{}, 0, false
	}
	slot = -1
	delay := false
	for _, m := range ms {
		v := m.value
		switch string(m.key) {
		case "state":
			for i, of := range d.Timers {
				if len(v) == len(of.State)+2 && v[0] == '"' && string(v[1:len(v)-1]) == of.State {
					slot = i
				}
			}
		case "id":
			id, neg, ok := digits(v)
			if !ok || neg || id == 0 {
				return Timer{}, 0, false
			}
			t.ID = TimerID(id)
		case "delay":
			if v[0] != '"' {
				return Timer{}, 0, false
			}
			var err error
			if t.Delay, err = time.ParseDuration(string(v[1 : len(v)-1])); err != nil {
				return Timer{}, 0, false
			}
			delay = true
		case "deadline":
			if v[0] != '"' || t.Deadline.UnmarshalJSON(v) != nil {
				return Timer{}, 0, false
			}
			t.Deadline = t.Deadline.UTC()
		default:
			return Timer{}, 0, false
		}
	}
	return t, slot, slot >= 0 && t.ID != 0 && delay
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
