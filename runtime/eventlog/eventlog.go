// Package eventlog records the events a state machine handles, one JSON
// line each, and replays them.
//
// A log is a sequence of sessions. Each session starts with a header line
// that says which machine ran, with which configuration and from which
// state, followed by one line per event handed to the machine: the event,
// the actions the machine performed for it (through its Handler, in
// order; none when it ignored or rejected the event) and whether it
// rejected the event:
//
//	{"type":"session","format":"fsmgen-eventlog/2","machine":"agent","config":{...},"state":{...},...}
//	{"type":"event","seq":1,"event":{"kind":"user_input",...},"actions":[{"kind":"send_llm_request",...}],"rejected":false}
//
// Because a generated machine is deterministic, feeding the events of a
// session to a fresh machine built from its header must give the same
// actions and rejections; [Replay] checks that. It also checks each
// record's checksum and numbering, so that a record edited by hand is
// reported even where the machine would act the same. Nothing secret belongs in a
// log: callers must keep API keys out of the header's config.
package eventlog

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Format identifies the log format in every header. Format 2 records the
// list of actions each event caused ("actions"); format 1, which recorded
// at most one ("action"), is no longer read.
const Format = "fsmgen-eventlog/2"

// The values of the "type" field of a line.
const (
	TypeSession = "session"
	TypeEvent   = "event"
)

// Header starts a session: what replay needs to build the machine again.
type Header struct {
	// Type is TypeSession.
	Type string `json:"type"`
	// Format is Format.
	Format string `json:"format"`
	// Machine names the machine, e.g. "agent".
	Machine string `json:"machine"`
	// Thread names the thread the session worked on, if any.
	Thread string `json:"thread,omitempty"`
	// Started is when the session started.
	Started time.Time `json:"started"`
	// Config is the machine's behaviour configuration (never a secret):
	// for the agent, a behavior.Config.
	Config json.RawMessage `json:"config"`
	// State is the state the machine started the session in.
	State json.RawMessage `json:"state"`
	// Meta holds informative values, such as the provider and the model;
	// replay ignores them.
	Meta map[string]string `json:"meta,omitempty"`
}

// Record is one event handed to the machine.
type Record struct {
	// Type is TypeEvent.
	Type string `json:"type"`
	// Seq numbers the events of the log, from 1, across sessions.
	Seq int64 `json:"seq"`
	// Event is the event as its MarshalJSON writes it.
	Event json.RawMessage `json:"event"`
	// Actions are the actions the machine performed for the event, in
	// order, each as its MarshalJSON writes it; empty for none.
	Actions []json.RawMessage `json:"actions"`
	// Rejected says whether the machine rejected the event.
	Rejected bool `json:"rejected"`
	// Error is the text of the machine's error, if it returned one.
	Error string `json:"error,omitempty"`
	// Sum is a checksum of Seq, Event, Actions and Rejected, so that replay
	// notices a record edited after it was written even when the machine
	// would not (say, the text of a rejected event).
	Sum string `json:"sum,omitempty"`
}

// sum returns the checksum of a record's replayed fields.
func sum(seq int64, event json.RawMessage, actions []json.RawMessage, rejected bool) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\n%s\n%s\n%t", seq, compact(event), compactList(actions), rejected)
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// Writer appends to a log file. It is not safe for concurrent use.
type Writer struct {
	f    *os.File
	path string
	seq  int64
}

// Open opens the log at path for appending, creating it (mode 0600) if
// needed. A last line cut short by a crash is removed, and numbering
// continues after the last event recorded.
func Open(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open event log: %w; pass a writable file with -log", err)
	}
	w := &Writer{f: f, path: path}
	if err := w.recover(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("open event log %s: %w; move the file away or pass another with -log", path, err)
	}
	return w, nil
}

// recover finds the last sequence number and drops a partial last line.
func (w *Writer) recover() error {
	if _, err := w.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(w.f, 64<<10)
	var good int64 // bytes up to the end of the last complete line
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			good += int64(len(line))
			var head struct {
				Type string `json:"type"`
				Seq  int64  `json:"seq"`
			}
			if json.Unmarshal(line, &head) == nil && head.Type == TypeEvent && head.Seq > w.seq {
				w.seq = head.Seq
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	if err := w.f.Truncate(good); err != nil {
		return err
	}
	_, err := w.f.Seek(good, io.SeekStart)
	return err
}

// Path returns the log's file name.
func (w *Writer) Path() string { return w.path }

// WriteHeader starts a session.
func (w *Writer) WriteHeader(h Header) error {
	h.Type, h.Format = TypeSession, Format
	return w.writeLine(h)
}

// Append records one event; it sets r.Type and r.Seq and returns the
// sequence number given.
func (w *Writer) Append(r Record) (int64, error) {
	r.Type = TypeEvent
	r.Seq = w.seq + 1
	if r.Actions == nil {
		r.Actions = []json.RawMessage{}
	}
	r.Sum = sum(r.Seq, r.Event, r.Actions, r.Rejected)
	if err := w.writeLine(r); err != nil {
		return 0, err
	}
	w.seq = r.Seq
	return r.Seq, nil
}

// writeLine writes v as one line, in a single write.
func (w *Writer) writeLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("event log: encode: %w", err)
	}
	b = append(b, '\n')
	if _, err := w.f.Write(b); err != nil {
		return fmt.Errorf("event log %s: %w; check the disk", w.path, err)
	}
	return nil
}

// Close syncs and closes the log.
func (w *Writer) Close() error {
	serr := w.f.Sync()
	cerr := w.f.Close()
	if err := errors.Join(serr, cerr); err != nil {
		return fmt.Errorf("close event log %s: %w", w.path, err)
	}
	return nil
}

// Step feeds one recorded event to the machine being replayed and returns
// the actions it performed, in order (JSON; none when it ignored or
// rejected the event), and whether it rejected the event. An error means
// the event could not be replayed at all (it does not decode, say).
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
	// Diff is the first difference, or nil when every action and
	// rejection was identical.
	Diff *Diff
}

// Diff is a difference between a log and its replay.
type Diff struct {
	// Line is the line of the log, from 1.
	Line int
	// Seq is the event's sequence number.
	Seq int64
	// Event is the event as recorded.
	Event json.RawMessage
	// What names what differs: "action" (the list of actions),
	// "rejection", or "record" when
	// the record was edited after it was written (its checksum or its
	// sequence number is off) though the machine acts the same.
	What string
	// Want is what the log recorded; Got is what the replay gave.
	Want, Got string
}

// String describes the difference for a person.
func (d *Diff) String() string {
	want, got := excerpt(d.Want, d.Got)
	return fmt.Sprintf("event %d (line %d) %s: %s differs\n  expected: %s\n  got:      %s",
		d.Seq, d.Line, kindOf(d.Event), d.What, want, got)
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
// first event whose action or rejection differs from the record and
// returns it in Report.Diff. An error means the log could not be read or a
// machine not built: the log is damaged or from another program.
func Replay(r io.Reader, start Start) (Report, error) {
	var rep Report
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	var step Step
	line := 0
	var lastSeq int64
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return rep, fmt.Errorf("line %d: not a JSON line: %w; the log is damaged", line, err)
		}
		switch head.Type {
		case TypeSession:
			var h Header
			if err := json.Unmarshal(raw, &h); err != nil {
				return rep, fmt.Errorf("line %d: bad session header: %w", line, err)
			}
			if h.Format != Format {
				return rep, fmt.Errorf("line %d: log format %q, want %q; replay it with the program that wrote it", line, h.Format, Format)
			}
			s, err := start(h)
			if err != nil {
				return rep, fmt.Errorf("line %d: start the machine: %w", line, err)
			}
			step = s
			rep.Sessions++
		case TypeEvent:
			if step == nil {
				return rep, fmt.Errorf("line %d: an event before any session header; the log is damaged or cut at the start", line)
			}
			var rec Record
			if err := json.Unmarshal(raw, &rec); err != nil {
				return rep, fmt.Errorf("line %d: bad event record: %w", line, err)
			}
			acts, rejected, err := step(rec.Event)
			if err != nil {
				return rep, fmt.Errorf("line %d (event %d): %w", line, rec.Seq, err)
			}
			if rejected != rec.Rejected {
				rep.Diff = &Diff{Line: line, Seq: rec.Seq, Event: rec.Event, What: "rejection",
					Want: fmt.Sprintf("rejected=%t", rec.Rejected), Got: fmt.Sprintf("rejected=%t", rejected)}
				return rep, nil
			}
			want, got := compactList(rec.Actions), compactList(acts)
			if want != got {
				rep.Diff = &Diff{Line: line, Seq: rec.Seq, Event: rec.Event, What: "action", Want: want, Got: got}
				return rep, nil
			}
			if lastSeq != 0 && rec.Seq != lastSeq+1 {
				rep.Diff = &Diff{Line: line, Seq: rec.Seq, Event: rec.Event, What: "record",
					Want: fmt.Sprintf("event number %d", lastSeq+1), Got: fmt.Sprintf("event number %d (lines were removed, added or moved)", rec.Seq)}
				return rep, nil
			}
			lastSeq = rec.Seq
			if rec.Sum != "" {
				if s := sum(rec.Seq, rec.Event, rec.Actions, rec.Rejected); s != rec.Sum {
					rep.Diff = &Diff{Line: line, Seq: rec.Seq, Event: rec.Event, What: "record",
						Want: "checksum " + rec.Sum, Got: "checksum " + s + " (the record was edited after it was written)"}
					return rep, nil
				}
			}
			rep.Events++
		default:
			return rep, fmt.Errorf("line %d: unknown line type %q; the log is damaged or from another program", line, head.Type)
		}
	}
	if err := sc.Err(); err != nil {
		return rep, fmt.Errorf("read the log: %w", err)
	}
	if rep.Sessions == 0 {
		return rep, errors.New("the log has no session; it is empty or not an event log")
	}
	return rep, nil
}

// compactList returns the compact form of a list of JSON values; "[]" for
// none.
func compactList(vs []json.RawMessage) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(compact(v))
	}
	b.WriteByte(']')
	return b.String()
}

// compact returns the compact form of a JSON value; "null" for none.
func compact(v json.RawMessage) string {
	if len(bytes.TrimSpace(v)) == 0 {
		return "null"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return string(v)
	}
	return b.String()
}
