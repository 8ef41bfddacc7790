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
// armed with its delay. A machine with composite states that have a
// history saves what each remembers as "history" (see SaveHistory). Later
// features may add members (a region per parallel state, deferred
// events); what this one writes stays readable.
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
		if name := d.Timers[i].Timer; name != "" {
			out = append(out, `,"timer":`...)
			out = appendJSONString(out, name)
		}
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
		st := savedTimer{State: d.Timers[i].State, Timer: d.Timers[i].Timer, ID: t.ID, Delay: t.Delay.String()}
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

// envelope is a saved machine as load reads it: its timers are read
// strictly, one by one, once its state has decoded.
type envelope struct {
	Format    int               `json:"format"`
	Machine   string            `json:"machine"`
	Shape     string            `json:"shape"`
	State     json.RawMessage   `json:"state"`
	Timers    []json.RawMessage `json:"timers"`
	LastTimer TimerID           `json:"last_timer"`
	History   []json.RawMessage `json:"history"`
	Deferred  []json.RawMessage `json:"deferred"`
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
	case len(s.History) > 0 && len(d.History) == 0:
		return nil, fmt.Errorf("%s: load a saved machine: it remembers a history, and no state of this machine has one (a history removed from the spec breaks saved machines: fsmgen diff says so)", d.Package)
	case len(s.Deferred) > 0 && d.DeferLimit == 0:
		return nil, fmt.Errorf("%s: load a saved machine: it holds deferred events, and no state of this machine defers one (a deferral removed from the spec breaks saved machines: fsmgen diff says so)", d.Package)
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

// loadFast reads a saved machine as Save writes it, as open and
// loadTimers do: each member read from its JSON directly, the state's
// JSON returned in place (in data), nothing decoded through reflection.
// It takes nothing it is not sure of: anything else (an error, a member
// of another type, a renamed state's timer, more timers than it stages)
// makes it return false, having changed nothing, and LoadState reads the
// data the general way, which decides, and says what is wrong.
func (d *Desc[S, E, A]) loadFast(data []byte, timers []Timer, last *TimerID) (json.RawMessage, bool) {
	buf := getMembers()
	ms, err := membersIn(data, *buf)
	defer putMembers(buf, ms)
	if err != nil {
		return nil, false
	}
	var (
		staged    [maxFastTimers]Timer
		state     json.RawMessage
		format    int64
		lastTimer int64
		machine   bool
		n         int
	)
	if len(timers) > maxFastTimers {
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

// maxFastTimers bounds the timers of a machine loadFast reads.
const maxFastTimers = 4

// savedTimer reads a timer of a saved machine as Save writes it, for
// loadFast, and returns the slot of its state (and name) in d.Timers.
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
	var state, name []byte
	delay := false
	for _, m := range ms {
		v := m.value
		switch string(m.key) {
		case "state", "timer":
			if v[0] != '"' {
				return Timer{}, 0, false
			}
			for _, c := range v[1 : len(v)-1] {
				if c == '\\' {
					return Timer{}, 0, false // an escape: read the general way
				}
			}
			if string(m.key) == "state" {
				state = v[1 : len(v)-1]
			} else {
				name = v[1 : len(v)-1]
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
	slot = -1
	for i, of := range d.Timers {
		if state != nil && string(state) == of.State && string(name) == of.Timer {
			slot = i
		}
	}
	return t, slot, slot >= 0 && t.ID != 0 && delay
}

// loadSlow reads a saved machine as LoadState does, but for its state,
// which it returns as it is: open, then loadTimers (what loadFast stands
// in for; FuzzLoad compares them).
func (d *Desc[S, E, A]) loadSlow(data []byte, timers []Timer, last *TimerID) (json.RawMessage, error) {
	s, err := d.open(data)
	if err != nil {
		return nil, err
	}
	if err := d.loadTimers(s, timers, last); err != nil {
		return nil, err
	}
	return s.State, nil
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
//
// A machine as Save writes it is read without the general decoding
// (loadFast), its timers taken once its state has decoded; anything else,
// and a state that does not decode, is read the general way, which says
// what is wrong.
func LoadState[I any, S, E, A Kind](d *Desc[S, E, A], data []byte, timers []Timer, last *TimerID, decode func([]byte) (I, error)) (I, error) {
	var zero I
	if len(timers) <= maxFastTimers {
		var staged [maxFastTimers]Timer
		var stagedLast TimerID
		lastp := &stagedLast
		if last == nil {
			lastp = nil
		}
		if raw, ok := d.loadFast(data, staged[:len(timers)], lastp); ok {
			if state, err := decode(raw); err == nil {
				copy(timers, staged[:len(timers)])
				if last != nil {
					*last = stagedLast
				}
				return state, nil
			}
		}
	}
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
