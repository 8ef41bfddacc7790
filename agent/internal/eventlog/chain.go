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
	"io/fs"
	"syscall"
)

// chainMember starts the member that ends every line: the line's chain
// value, 64 hex digits, then `"}`.
const chainMember = `,"chain":"`

// chainHexLen is the length of a chain value.
const chainHexLen = 2 * sha256.Size

// chainTail is the length of what follows a line's body, less its closing
// brace: the chain member and its closing `"}`.
const chainTail = len(chainMember) + chainHexLen + 2

// magic starts the first line of every log of this format.
const magic = `{"type":"` + TypeSession + `","format":"` + Format + `"`

// familyMagic starts the first line of a log of any format of the family.
const familyMagic = `{"type":"` + TypeSession + `","format":"fsmgen-eventlog/`

// IsLog reports whether head, the start of a file, is that of an event
// log of this family, whatever its format version: its first line starts
// as every header does. The agent masks such files from its tools (they
// hold the conversation, and its tool results).
func IsLog(head []byte) bool { return bytes.HasPrefix(head, []byte(familyMagic)) }

// chainOf returns the chain value of a line whose body (its JSON without
// the chain member) is the concatenation of parts, after a line whose
// chain value is prev ("" for the first line of the log).
func chainOf(prev string, parts ...[]byte) string {
	h := sha256.New()
	h.Write([]byte(prev))
	h.Write([]byte{'\n'})
	for _, p := range parts {
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// seal returns the line for body, a JSON object, after a line whose chain
// value is prev: body with the chain member added last, and a newline.
func seal(prev string, body []byte) (line []byte, chain string) {
	chain = chainOf(prev, body)
	line = make([]byte, 0, len(body)+chainTail+1)
	line = append(line, body[:len(body)-1]...)
	line = append(line, chainMember...)
	line = append(line, chain...)
	return append(line, '"', '}', '\n'), chain
}

// unseal splits a line (without its newline) into the two parts of its
// body — the body is head followed by "}" — and its chain value; ok is
// false when the line does not end with a chain member.
func unseal(line []byte) (head []byte, chain string, ok bool) {
	n := len(line) - chainTail
	if n < 1 || line[0] != '{' || !bytes.HasPrefix(line[n:], []byte(chainMember)) || !bytes.HasSuffix(line, []byte(`"}`)) {
		return nil, "", false
	}
	v := line[n+len(chainMember) : len(line)-2]
	for _, c := range v {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return nil, "", false
		}
	}
	return line[:n], string(v), true
}

// ErrNotEventLog is wrapped by the errors for a file that is not an event
// log of this family (its first line is not a session header).
var ErrNotEventLog = errors.New("not an fsmgen event log")

// ErrFormat is wrapped by the errors for an event log of another format
// than [Format].
var ErrFormat = errors.New("an event log of another format")

// LineError is the first line of a log that does not follow from the
// lines before it: it does not chain (it was edited after it was written,
// or a line before it was removed, added or moved), or it chains but is
// not in order (an event numbered out of turn, before any session header,
// of an unknown type). Such a log was changed by something other than
// this package.
type LineError struct {
	// Line is the line of the log, from 1.
	Line int
	// Seq is the line's event number, when it could be read; 0 for a
	// session header.
	Seq int64
	// Chain is true when the line does not chain, false when it chains
	// but is out of order.
	Chain bool
	// Reason says what is wrong, for a person.
	Reason string
	// Recorded and Computed are, for a line that does not chain, the chain
	// value the line holds ("" for none) and the one the lines before it
	// give.
	Recorded, Computed string
}

// Error implements error.
func (e *LineError) Error() string {
	return fmt.Sprintf("line %d %s", e.Line, e.Reason)
}

// head is what every line says about itself.
type head struct {
	Type   string `json:"type"`
	Format string `json:"format"`
	Seq    int64  `json:"seq"`
}

// entry is one line of a log, checked.
type entry struct {
	line int    // its number, from 1
	raw  []byte // the line, without its newline
	head head
}

// walker reads a log line by line, checking that each line chains to the
// one before it and is in order.
type walker struct {
	br       *bufio.Reader
	line     int    // lines read
	end      int64  // offset just past the last complete line
	prev     string // chain value of the last line
	seq      int64  // number of the last event
	sessions int
	events   int
	// torn is the number of a last line cut short (no newline) and
	// tornSize its length; 0 for none.
	torn     int
	tornSize int
	// noted is a chain value noted for the log, "" for none, and
	// notedLine the line that has it, 0 until one does.
	noted     string
	notedLine int
}

// newWalker reads a log from r.
func newWalker(r io.Reader) *walker {
	return &walker{br: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line of the log. It returns io.EOF at the end of
// the log, also when the last line was cut short (w.torn is then set); a
// *LineError for a line that does not chain or is out of order; an error
// wrapping ErrNotEventLog or ErrFormat when the first line is not the
// header of a log of this format.
func (w *walker) next() (entry, error) {
	raw, err := w.br.ReadBytes('\n')
	switch {
	case len(raw) > 0 && raw[len(raw)-1] == '\n':
		raw = raw[:len(raw)-1]
	case errors.Is(err, io.EOF) && len(raw) == 0:
		return entry{}, io.EOF
	case errors.Is(err, io.EOF):
		w.line++
		// A first line cut short is ours only if it got as far as saying
		// so: a file is never cut on a guess.
		if w.line == 1 && !bytes.HasPrefix(raw, []byte(magic)) {
			return entry{}, w.notOurs(raw)
		}
		w.torn, w.tornSize = w.line, len(raw)
		return entry{}, io.EOF
	default:
		return entry{}, &readError{line: w.line + 1, err: err}
	}
	w.line++
	if w.line == 1 && !bytes.HasPrefix(raw, []byte(magic)) {
		return entry{}, w.notOurs(raw)
	}
	e := entry{line: w.line, raw: raw}
	body, chain, ok := unseal(raw)
	if !ok {
		return e, &LineError{Line: w.line, Seq: seqOf(raw), Chain: true,
			Reason:   "does not chain: it has no chain value at its end; it was edited, or added by another program",
			Computed: "(none)"}
	}
	if want := chainOf(w.prev, body, []byte("}")); chain != want {
		return e, &LineError{Line: w.line, Seq: seqOf(raw), Chain: true,
			Reason:   "does not chain: it was edited after it was written, or a line before it was removed, added or moved",
			Recorded: chain, Computed: want}
	}
	w.prev = chain
	w.end += int64(len(raw)) + 1
	if w.noted != "" && chain == w.noted && w.notedLine == 0 {
		w.notedLine = w.line
	}
	if err := json.Unmarshal(raw, &e.head); err != nil {
		return e, &LineError{Line: w.line, Reason: fmt.Sprintf("is not a line of this format: %v", err)}
	}
	switch e.head.Type {
	case TypeSession:
		if e.head.Format != Format {
			return e, &LineError{Line: w.line, Reason: fmt.Sprintf("starts a session of format %q in a log of format %q", e.head.Format, Format)}
		}
		w.sessions++
	case TypeEvent:
		switch {
		case w.sessions == 0:
			return e, &LineError{Line: w.line, Seq: e.head.Seq, Reason: "is an event before any session header"}
		case e.head.Seq != w.seq+1:
			return e, &LineError{Line: w.line, Seq: e.head.Seq,
				Reason: fmt.Sprintf("is event number %d where %d should come", e.head.Seq, w.seq+1)}
		}
		w.seq = e.head.Seq
		w.events++
	default:
		return e, &LineError{Line: w.line, Reason: fmt.Sprintf("has the unknown line type %q", e.head.Type)}
	}
	return e, nil
}

// readError is a failure to read the log itself rather than a line of it.
type readError struct {
	// line is the line being read, from 1.
	line int
	err  error
}

// Error says what failed, and for a directory what to give instead.
func (e *readError) Error() string {
	if errors.Is(e.err, syscall.EISDIR) {
		name := "the log"
		if pe := (*fs.PathError)(nil); errors.As(e.err, &pe) {
			name = pe.Path
		}
		return name + " is a directory, not an fsmgen event log; give the event log file"
	}
	return fmt.Sprintf("read the log at line %d: %v", e.line, e.err)
}

// Unwrap returns the read's error, and ErrNotEventLog for a directory.
func (e *readError) Unwrap() []error {
	if errors.Is(e.err, syscall.EISDIR) {
		return []error{ErrNotEventLog, e.err}
	}
	return []error{e.err}
}

// notOurs returns the error for a first line that is not the header of a
// log of this format.
func (w *walker) notOurs(line []byte) error {
	if bytes.HasPrefix(line, []byte(familyMagic)) {
		var h head
		if json.Unmarshal(line, &h) == nil && h.Format != "" {
			return fmt.Errorf("%w (%q, not %q)", ErrFormat, h.Format, Format)
		}
	}
	return ErrNotEventLog
}

// seqOf returns the event number a line holds, or 0.
func seqOf(line []byte) int64 {
	var h head
	if json.Unmarshal(line, &h) != nil || h.Type != TypeEvent {
		return 0
	}
	return h.Seq
}

// Summary is what [Verify] found in a log.
type Summary struct {
	// Lines counts the complete lines, Sessions the session headers and
	// Events the events.
	Lines, Sessions, Events int
	// Torn is the number of a last line cut short, with no newline (the
	// program stopped while writing it), which is not part of the log; 0
	// for none.
	Torn int
	// Chain is the chain value of the last complete line (see
	// [Writer.Chain]).
	Chain string
	// Noted is the line whose chain value is the one [VerifyAgainst] was
	// given: it and the lines before it are as they were when the value
	// was noted; the lines after it were written since. 0 when no value
	// was given.
	Noted int
}

// ErrNotedChain is wrapped by the error of [VerifyAgainst], and named by
// the Diff of [ReplayAgainst], when no line of the log has the chain value
// noted for it: lines were removed from its end, or rewritten, since the
// value was noted.
var ErrNotedChain = errors.New("no line of the log has the chain value noted for it")

// Verify reads a log and checks that every line chains to the one before
// it and is in order, without replaying it. It returns a *LineError for
// the first line that does not; an error wrapping ErrNotEventLog or
// ErrFormat for a file that is not a log of this format (a directory
// included). A last line cut short is not an error: Summary.Torn tells.
//
// A log cut after a whole line, or rewritten from an edit onwards with
// its chain recomputed, passes; [VerifyAgainst] tells both, given a chain
// value noted elsewhere.
func Verify(r io.Reader) (Summary, error) { return VerifyAgainst(r, "") }

// VerifyAgainst is [Verify], and also checks that a line of the log has
// the chain value noted, a value [Writer.Chain] returned while the log
// was written (kept with a thread, say): a log cut after a whole line, or
// rewritten from an edit onwards with its chain recomputed, no longer
// reaches it, and the error wraps [ErrNotedChain]. Summary.Noted is the
// line that has it. An empty noted value checks nothing more than Verify.
func VerifyAgainst(r io.Reader, noted string) (Summary, error) {
	if err := checkNoted(noted); err != nil {
		return Summary{}, err
	}
	w := newWalker(r)
	w.noted = noted
	for {
		_, err := w.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return w.summary(), err
		}
	}
	s := w.summary()
	if s.Sessions == 0 && s.Torn == 0 {
		return s, fmt.Errorf("the log is empty: %w", ErrNotEventLog)
	}
	if noted != "" && s.Noted == 0 {
		return s, fmt.Errorf("%w (%s); lines were removed from its end, or rewritten, since the value was noted (its last line, %d, has %s)",
			ErrNotedChain, short(noted), s.Lines, short(s.Chain))
	}
	return s, nil
}

// checkNoted reports a noted chain value that is not one: 64 lower-case
// hex digits, or empty for none.
func checkNoted(noted string) error {
	if noted == "" {
		return nil
	}
	ok := len(noted) == chainHexLen
	for _, c := range []byte(noted) {
		ok = ok && (c >= '0' && c <= '9' || c >= 'a' && c <= 'f')
	}
	if !ok {
		return fmt.Errorf("the chain value noted for the log, %.80q, is not one (64 hex digits); it was damaged where it was kept", noted)
	}
	return nil
}

// summary returns what w has read so far.
func (w *walker) summary() Summary {
	lines := w.line
	if w.torn != 0 {
		lines--
	}
	return Summary{Lines: lines, Sessions: w.sessions, Events: w.events, Torn: w.torn, Chain: w.prev, Noted: w.notedLine}
}
