package eventlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Step feeds one recorded event to the machine being replayed and returns
// the actions it performed, in order (JSON, whole: Replay reduces them as
// the session's header says; none when it ignored or rejected the event),
// and whether it rejected the event. An error means the event could not
// be replayed at all (it does not decode, say).
type Step func(event json.RawMessage) (actions []json.RawMessage, rejected bool, err error)

// Start builds a fresh machine for the session h starts and returns how to
// feed it events.
type Start func(h Header) (Step, error)

// Report is what a replay found.
type Report struct {
	// Sessions counts the sessions replayed.
	Sessions int
	// Events counts the events replayed identically.
	Events int
	// Diff is the first difference, or nil when every line chained and
	// every action and rejection was identical.
	Diff *Diff
	// Torn is the number of a last line cut short, with no newline (the
	// program stopped while writing it), which was not replayed; 0 for
	// none.
	Torn int
	// Noted is the line whose chain value is the one [ReplayAgainst] was
	// given (see [Summary.Noted]); 0 when none was given.
	Noted int
}

// Diff is a difference between a log and its replay, or a line of the log
// that does not follow from the lines before it.
type Diff struct {
	// Line is the line of the log, from 1.
	Line int
	// Seq is the event's sequence number; 0 for a session header or a
	// line that could not be read.
	Seq int64
	// Event is the event as recorded, when the line could be read.
	Event json.RawMessage
	// What names what differs: "action" (the actions the machine
	// performed), "rejection", "chain" (the line does not chain: it was
	// edited after it was written, or a line before it was removed, added
	// or moved), "record" (the line chains but is out of order) or "end"
	// (no line has the chain value noted for the log, see
	// [ErrNotedChain]: Line is the log's last).
	What string
	// Action is the number, from 1, of the first action that differs when
	// the machine performed as many actions as recorded; 0 otherwise. Kind
	// is that action's kind, and Path the dotted path of its first member
	// that differs ("" for the whole action).
	Action int
	Kind   string
	Path   string
	// Reason says, for "chain", "record" and "end", what is wrong with the
	// line.
	Reason string
	// Want is what the log recorded; Got is what the replay gave (for
	// "chain", the chain value the line holds and the one the lines
	// before it give; for "end", the chain value noted and the one of the
	// log's last line). A value recorded by reference is shown as its
	// count, size and digest.
	Want, Got string
}

// String describes the difference for a person.
func (d *Diff) String() string {
	var b strings.Builder
	if d.Seq > 0 {
		fmt.Fprintf(&b, "event %d (line %d) %s: ", d.Seq, d.Line, kindOf(d.Event))
	} else {
		fmt.Fprintf(&b, "line %d: ", d.Line)
	}
	switch d.What {
	case "end":
		fmt.Fprintf(&b, "the log %s\n  noted:     %s\n  last line: %s", d.Reason, d.Want, d.Got)
		return b.String()
	case "chain", "record":
		fmt.Fprintf(&b, "the line %s", d.Reason)
		if d.Want == "" && d.Got == "" {
			return b.String()
		}
	case "action":
		b.WriteString("action differs")
		if d.Action > 0 {
			fmt.Fprintf(&b, ": action %d (%s)", d.Action, d.Kind)
			if d.Path != "" {
				fmt.Fprintf(&b, " at %s", d.Path)
			}
		}
	default:
		fmt.Fprintf(&b, "%s differs", d.What)
	}
	want, got := excerpt(d.Want, d.Got)
	if d.What == "chain" {
		fmt.Fprintf(&b, "\n  recorded: %s\n  computed: %s", want, got)
		return b.String()
	}
	fmt.Fprintf(&b, "\n  expected: %s\n  got:      %s", want, got)
	return b.String()
}

// kindOf returns the "kind" of a JSON object, or "?".
func kindOf(data json.RawMessage) string {
	var head struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(data, &head) != nil || head.Kind == "" {
		return "?"
	}
	return head.Kind
}

// excerptRadius is how much of two long texts around their first
// difference a Diff shows.
const excerptRadius = 120

// excerpt shortens a and b to the neighbourhood of their first difference.
func excerpt(a, b string) (string, string) {
	if len(a) <= 2*excerptRadius && len(b) <= 2*excerptRadius {
		return a, b
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	cut := func(s string) string {
		from, to := max(0, i-excerptRadius), min(len(s), i+excerptRadius)
		out := s[from:to]
		if from > 0 {
			out = "…" + out
		}
		if to < len(s) {
			out += "…"
		}
		return out
	}
	return cut(a), cut(b)
}

// Replay reads a log from r and feeds the events of each session to a
// fresh machine built by start from the session's header. It stops at the
// first line that does not chain or is out of order, or whose event gives
// other actions or another rejection than recorded, and returns it in
// Report.Diff. A last line cut short is not replayed (Report.Torn). An
// error means the log could not be read or a machine not built: the file
// is not an event log of this format (the error wraps ErrNotEventLog or
// ErrFormat; a directory is not one either), or a line holds what the
// machine cannot take.
//
// A log cut after a whole line, or rewritten from an edit onwards with
// its chain recomputed, replays; [ReplayAgainst] tells both, given a chain
// value noted elsewhere.
func Replay(r io.Reader, start Start) (Report, error) { return ReplayAgainst(r, start, "") }

// ReplayAgainst is [Replay], and also checks that a line of the log has
// the chain value noted, a value [Writer.Chain] returned while the log
// was written (kept with a thread, say). When none has (lines were
// removed from the log's end, or rewritten with the chain recomputed,
// since the value was noted), Report.Diff says so, with What "end", once
// every line has replayed. Report.Noted is the line that has it. An empty
// noted value checks nothing more than Replay; one that is not a chain
// value is an error.
func ReplayAgainst(r io.Reader, start Start, noted string) (Report, error) {
	var rep Report
	if err := checkNoted(noted); err != nil {
		return rep, err
	}
	w := newWalker(r)
	w.noted = noted
	var step Step
	var refs RefPolicy
	for {
		e, err := w.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if le := (*LineError)(nil); errors.As(err, &le) {
			rep.Diff = lineDiff(le, e.raw)
			return rep, nil
		}
		if re := (*readError)(nil); errors.As(err, &re) {
			return rep, err // it says where
		}
		if err != nil {
			return rep, fmt.Errorf("line %d: %w", w.line, err)
		}
		switch e.head.Type {
		case TypeSession:
			var h Header
			if err := json.Unmarshal(e.raw, &h); err != nil {
				return rep, fmt.Errorf("line %d: bad session header: %w", e.line, err)
			}
			if err := h.Refs.check(); err != nil {
				return rep, fmt.Errorf("line %d: bad session header: refs: %w", e.line, err)
			}
			s, err := start(h)
			if err != nil {
				return rep, fmt.Errorf("line %d: start the machine: %w", e.line, err)
			}
			step, refs = s, h.Refs
			rep.Sessions++
		case TypeEvent:
			var rec Record
			if err := json.Unmarshal(e.raw, &rec); err != nil {
				return rep, fmt.Errorf("line %d: bad event record: %w", e.line, err)
			}
			acts, rejected, err := step(rec.Event)
			if err != nil {
				return rep, fmt.Errorf("line %d (event %d): %w", e.line, rec.Seq, err)
			}
			if rejected != rec.Rejected {
				rep.Diff = &Diff{Line: e.line, Seq: rec.Seq, Event: rec.Event, What: "rejection",
					Want: fmt.Sprintf("rejected=%t", rec.Rejected), Got: fmt.Sprintf("rejected=%t", rejected)}
				return rep, nil
			}
			got := make([]json.RawMessage, len(acts))
			for i, a := range acts {
				if got[i], err = refs.Reduce(a); err != nil {
					return rep, fmt.Errorf("line %d (event %d): action %d the machine performed: %w", e.line, rec.Seq, i+1, err)
				}
			}
			if d := compareActions(rec.Actions, got); d != nil {
				d.Line, d.Seq, d.Event = e.line, rec.Seq, rec.Event
				rep.Diff = d
				return rep, nil
			}
			rep.Events++
		}
	}
	rep.Torn, rep.Noted = w.torn, w.notedLine
	if rep.Sessions == 0 {
		if w.torn != 0 {
			return rep, errors.New("the log's only line was cut short while it was written: it has no session to replay")
		}
		return rep, fmt.Errorf("the log is empty: %w", ErrNotEventLog)
	}
	if noted != "" && rep.Noted == 0 {
		last := w.summary()
		rep.Diff = &Diff{Line: last.Lines, What: "end",
			Reason: "has no line with the chain value noted for it: lines were removed from its end, or rewritten, since the value was noted",
			Want:   "chain value " + short(noted), Got: fmt.Sprintf("chain value %s (line %d)", short(last.Chain), last.Lines)}
	}
	return rep, nil
}

// lineDiff returns the Diff for a line that does not follow from the
// lines before it.
func lineDiff(le *LineError, raw []byte) *Diff {
	d := &Diff{Line: le.Line, Seq: le.Seq, What: "record", Reason: le.Reason}
	if le.Chain {
		d.What = "chain"
		if le.Recorded != "" {
			d.Want = "chain value " + short(le.Recorded)
			d.Got = "chain value " + short(le.Computed) + " (from the lines before it)"
		}
	}
	if d.Seq > 0 {
		var rec struct {
			Event json.RawMessage `json:"event"`
		}
		if json.Unmarshal(raw, &rec) == nil {
			d.Event = rec.Event
		}
	}
	return d
}

// compareActions returns where the actions the replay gave differ from
// the recorded ones (both reduced), or nil when they are identical.
func compareActions(want, got []json.RawMessage) *Diff {
	w, g := compactAll(want), compactAll(got)
	if len(w) != len(g) {
		return &Diff{What: "action", Want: list(w), Got: list(g)}
	}
	for i := range w {
		if bytes.Equal(w[i], g[i]) {
			continue
		}
		path, wv, gv := firstDiff(w[i], g[i])
		kind := "?"
		if k, ok := kindMember(w[i]); ok {
			kind = unquote(k)
		}
		return &Diff{What: "action", Action: i + 1, Kind: kind, Path: path, Want: describe(wv), Got: describe(gv)}
	}
	return nil
}

// compactAll returns the compact forms of vs; "null" for an empty one.
func compactAll(vs []json.RawMessage) [][]byte {
	out := make([][]byte, len(vs))
	for i, v := range vs {
		var b bytes.Buffer
		if err := json.Compact(&b, v); err != nil || b.Len() == 0 {
			out[i] = []byte("null")
			continue
		}
		out[i] = b.Bytes()
	}
	return out
}

// list renders JSON values as a JSON array.
func list(vs [][]byte) string {
	return "[" + string(bytes.Join(vs, []byte(","))) + "]"
}
