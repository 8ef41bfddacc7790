// Package eventlog records the events a state machine handles, one JSON
// line each, and replays them.
//
// # Lines
//
// A log is a sequence of sessions. Each session starts with a header line
// that says which machine ran, with which configuration, from which state
// and which parts of its actions are recorded by reference, followed by
// one line per event handed to the machine: the event, the actions the
// machine performed for it (through its Handler, in order; none when it
// ignored or rejected the event) and whether it rejected the event:
//
//	{"type":"session","format":"fsmgen-eventlog/3","machine":"agent","config":{...},"state":{...},"refs":{...},...,"chain":"5e0c…"}
//	{"type":"event","seq":1,"event":{"kind":"user_input",...},"actions":[{"kind":"send_llm_request",...}],"rejected":false,"chain":"91ad…"}
//
// Because a generated machine is deterministic, feeding the events of a
// session to a fresh machine built from its header must give the same
// actions and rejections; [Replay] checks that. Nothing secret belongs in
// a log: callers redact what they record and keep API keys out of the
// header's config.
//
// # Actions by reference
//
// An action can hold far more than the event that caused it: the agent's
// SendLlmRequest carries the whole conversation, so recording it whole
// would make the log grow with the square of the session. The events
// alone rebuild everything the machine holds (the user's messages, the
// LLM's replies and the tool results are all events), so the log needs an
// action only to tell whether the replayed one is the same. A header's
// "refs" ([RefPolicy]) names, for each action kind, the members recorded
// by reference — the agent's are an LLM request's messages, system prompt
// and tools (its model and token limit stay inline) and the round of
// tools a post-tools hook is given — and the longest action recorded
// whole. A reference is an object holding the SHA-256 of
// the value's JSON, its size and, for an array, its count:
//
//	{"kind":"send_llm_request","request":{"model":"m","messages":{"$digest":"sha256:ab12…","bytes":34560,"count":12},...}}
//
// An action longer than "max_bytes" once its members are referred to is
// recorded as {"kind":K,"$digest":…,"bytes":N}. Replay reduces the action
// the fresh machine performs under the same policy (see
// [RefPolicy.Reduce]) and compares: equal digests mean identical values,
// and a difference names the member that differs, e.g. the request's
// messages, with both counts and digests:
//
//	event 41 (line 43) tool_completed: action differs: action 1 (send_llm_request) at request.messages
//	  expected: 12 elements, 34560 bytes, sha256 cd34ab12ef56…
//	  got:      12 elements, 34571 bytes, sha256 ab12cd34ef56…
//
// The digest is that of the JSON the caller hands over, in the form the
// log would hold it (compact, with <, > and & escaped as json.Marshal
// does), so the machine's encoding must be deterministic, as generated
// code is. A value that is a reference already is kept, so reducing is
// idempotent and a log copied line by line through a [Writer] stays the
// same. Callers redact an action before it is digested, so a digest
// never stands for a secret.
//
// # The chain
//
// Every line ends with a "chain" member: the hex SHA-256 of the chain
// value of the line before it (the empty string for the first line of the
// log), a newline, and the line without its chain member. The chain runs
// across sessions.
//
// What the chain detects: a line edited after it was written, and a line
// removed, added or moved anywhere but at the end of the log, by hand, by
// another program or by a writer that broke. The line changed, or the one
// after a line removed, added or moved, no longer chains; [Verify] and
// [Replay] report the first such line with its number ([LineError]). A
// session removed from the middle of a log is noticed too.
//
// What it does not detect: the chain has no key, so it is a checksum of
// the log's history, not a signature. Whoever can write the file can edit
// a line and compute the chain values of it and of every line after it
// again; that log verifies and replays. A log cut after a whole line
// (head -n 5 LOG) is a shorter log whose every line chains, and verifies
// and replays too. Both are told only by a chain value kept elsewhere:
// [Writer.Chain] returns the chain value of the last line written, and a
// caller that keeps it (the agent saves it with its thread) gives it to
// [VerifyAgainst] or [ReplayAgainst], which check that a line of the log
// still has it. A log cut before that line, or rewritten at that line or
// before it, no longer has it ([ErrNotedChain]). The lines written after
// the value was noted are not covered by it, and the value protects the
// log only as far as the place it is kept does: one who can rewrite both
// is not detected.
//
// A last line without its newline was cut short by a crash: [Verify] and
// [Replay] ignore it and say so ([Summary.Torn], [Report.Torn]), and
// [Open] removes it before appending. A line counts as written only with
// its newline.
//
// # Appending
//
// [Open] appends a new session to an existing log once it has checked its
// chain, and holds an exclusive lock on the file (a record lock) until
// [Writer.Close], so that two programs never append to one log and
// interleave their chains. It refuses, leaving the file as it is, a log
// another Writer holds ([ErrInUse]), a path that is neither a regular file
// nor missing ([ErrNotRegular]: a directory, a symbolic link, a named
// pipe, a device such as /dev/null, which would block or lose the lines),
// a file that is not an event log ([ErrNotEventLog]), a log of another
// format ([ErrFormat]) and a log whose chain is broken ([LineError]). The
// lock binds only the programs that take it: one that writes to the file
// by other means is not stopped, but its lines do not chain.
package eventlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/fsmgen/fsmgen/internal/proclock"
)

// Format identifies the log format in every header. Format 3 records
// actions by reference where the header says so and chains its lines;
// format 2 recorded every action whole with a checksum per line, and
// format 1 at most one action per event. Neither is read any more.
const Format = "fsmgen-eventlog/3"

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
	// Deferred are the events the machine held (deferred) when the
	// session started, oldest first, each as it is encoded; none in the
	// logs of machines that defer nothing, and of sessions before it was
	// kept.
	Deferred []json.RawMessage `json:"deferred,omitempty"`
	// Refs says which parts of the session's actions are recorded by
	// reference; the zero value records them whole.
	Refs RefPolicy `json:"refs,omitzero"`
	// Meta holds informative values, such as the provider and the model;
	// replay ignores them.
	Meta map[string]string `json:"meta,omitempty"`
	// Chain is the line's chain value, set by the Writer; what
	// WriteHeader is given is ignored.
	Chain string `json:"chain,omitempty"`
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
	// order, each as its MarshalJSON writes it; empty for none. The log
	// holds them as the session's RefPolicy reduces them.
	Actions []json.RawMessage `json:"actions"`
	// Rejected says whether the machine rejected the event.
	Rejected bool `json:"rejected"`
	// Error is the text of the machine's error, if it returned one.
	Error string `json:"error,omitempty"`
	// Chain is the line's chain value, set by the Writer; what Append is
	// given is ignored.
	Chain string `json:"chain,omitempty"`
}

// Writer appends to a log file. It is not safe for concurrent use.
type Writer struct {
	f       *os.File
	release func() error // releases the lock and closes f
	path    string
	seq     int64     // number of the last event
	chain   string    // chain value of the last line
	end     int64     // offset just past the last line
	refs    RefPolicy // the policy of the current session
	header  bool      // a session was started
	err     error     // a write failed: the writer is unusable
	repair  Repair
}

// Repair describes the last line [Open] cut from a log: a crash stopped
// the program while it wrote the line.
type Repair struct {
	// Line is the line's number, from 1; 0 when nothing was cut.
	Line int
	// Bytes is how much of the line had been written.
	Bytes int
}

// ErrInUse is wrapped by [Open]'s error for a log that another Writer
// holds open, in another process or in this one.
var ErrInUse = errors.New("in use by another agent")

// ErrNotRegular is wrapped by [Open]'s error for a path that is neither a
// regular file nor missing: a directory, a symbolic link, a named pipe, a
// device, a socket.
var ErrNotRegular = errors.New("not a regular file")

// Open opens the log at path for appending, creating it (mode 0600) if
// needed, and takes an exclusive lock on it (a record lock), which
// [Writer.Close] releases, as does the end of the process: a log has one
// writer at a time, or its chain would break. A log another Writer holds
// is refused with [ErrInUse]. path must name a regular file or nothing;
// anything else, a symbolic link included, is refused with
// [ErrNotRegular] without being opened for long, so Open never blocks (on
// a named pipe, say). An existing log must be of this format and chain
// throughout; a last line cut short by a crash is removed (see
// [Writer.Repaired]) and numbering continues after the last event
// recorded. Any other file is refused and left as it is.
func Open(path string) (*Writer, error) {
	if fi, err := os.Lstat(path); err == nil {
		if err := checkRegular(path, fi); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open event log: %w; give -log a readable and writable file", err)
	}
	// O_NOFOLLOW and O_NONBLOCK keep what the path became since it was
	// looked at (a link, a pipe) from being followed or from blocking;
	// the file opened is checked again below.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("event log %s is a symbolic link, %w; give -log the file it points to", path, ErrNotRegular)
		}
		return nil, fmt.Errorf("open event log: %w; give -log a readable and writable file", err)
	}
	release, err := lockLog(f, path)
	if err != nil {
		return nil, err
	}
	w := &Writer{f: f, release: release, path: path}
	if err := w.recover(); err != nil {
		_ = release()
		var le *LineError
		switch {
		case errors.Is(err, ErrNotEventLog):
			return nil, fmt.Errorf("%s is %w; give -log a new file or an existing event log", path, err)
		case errors.Is(err, ErrFormat):
			return nil, fmt.Errorf("%s is %w; another version of the program wrote it: give -log a new file", path, err)
		case errors.As(err, &le):
			return nil, fmt.Errorf("event log %s: %w; nothing is appended to a log changed after it was written: give -log a new file", path, err)
		}
		return nil, fmt.Errorf("open event log %s: %w; move the file away or give -log another", path, err)
	}
	return w, nil
}

// checkRegular returns the error for a log path that is not a regular
// file, saying what it is.
func checkRegular(path string, fi fs.FileInfo) error {
	var what string
	m := fi.Mode()
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeSymlink != 0:
		what = "a symbolic link"
		if to, err := os.Readlink(path); err == nil {
			what += " to " + to
		}
		return fmt.Errorf("event log %s is %s, %w; give -log the file it points to", path, what, ErrNotRegular)
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	default:
		what = "a special file"
	}
	return fmt.Errorf("event log %s is %s, %w; give -log a regular file, or a path where one can be created", path, what, ErrNotRegular)
}

// lockLog checks that f, just opened as the log at path, is a regular
// file, puts it back in blocking mode and takes its exclusive lock, which
// belongs to the process (see internal/proclock): a command the process
// was starting when it was killed, which has a copy of the descriptor
// until it runs its program, does not hold the log. It returns the
// function that releases the lock and closes f; on error, f is taken care
// of.
func lockLog(f *os.File, path string) (release func() error, err error) {
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("open event log %s: %w; give -log a readable and writable file", path, err)
	}
	if err := checkRegular(path, fi); err != nil {
		_ = f.Close()
		return nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("open event log %s: %w", path, err)
	}
	var berr error
	if err := rc.Control(func(fd uintptr) { berr = syscall.SetNonblock(int(fd), false) }); err != nil {
		berr = err
	}
	if berr != nil {
		_ = f.Close()
		return nil, fmt.Errorf("open event log %s: %w", path, berr)
	}
	release, err = proclock.Lock(f)
	switch {
	case errors.Is(err, proclock.ErrHeld):
		return nil, fmt.Errorf("event log %s is %w (it holds the file's lock); stop that agent, or give -log another file", path, ErrInUse)
	case err != nil:
		return nil, fmt.Errorf("lock event log %s: %w; give -log a file on a local file system", path, err)
	}
	return release, nil
}

// recover checks the log's chain, finds the last event number and chain
// value, and removes a partial last line.
func (w *Writer) recover() error {
	walk := newWalker(w.f)
	for {
		_, err := walk.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	w.seq, w.chain, w.end = walk.seq, walk.prev, walk.end
	if walk.torn != 0 {
		if err := w.f.Truncate(w.end); err != nil {
			return fmt.Errorf("remove the partial last line %d: %w", walk.torn, err)
		}
		w.repair = Repair{Line: walk.torn, Bytes: walk.tornSize}
	}
	_, err := w.f.Seek(w.end, io.SeekStart)
	return err
}

// Path returns the log's file name.
func (w *Writer) Path() string { return w.path }

// Repaired tells which partial last line Open removed; its zero value
// means none.
func (w *Writer) Repaired() Repair { return w.repair }

// Chain returns the chain value of the last line of the log ("" for an
// empty log). Kept elsewhere (with a thread, say) and given to
// [VerifyAgainst] or [ReplayAgainst], it tells a log cut after a whole line
// or rewritten with its chain recomputed, which [Verify] and [Replay] do
// not.
func (w *Writer) Chain() string { return w.chain }

// WriteHeader starts a session; its Refs apply to the actions of the
// events appended until the next header.
func (w *Writer) WriteHeader(h Header) error {
	if err := h.Refs.check(); err != nil {
		return fmt.Errorf("event log header: refs: %w", err)
	}
	h.Type, h.Format, h.Chain = TypeSession, Format, ""
	if err := w.writeLine(h); err != nil {
		return err
	}
	w.refs, w.header = h.Refs, true
	return nil
}

// Append records one event, its actions reduced by the session's
// RefPolicy; it sets r.Type and r.Seq and returns the sequence number
// given.
func (w *Writer) Append(r Record) (int64, error) {
	if !w.header {
		return 0, errors.New("event log: an event appended before the session header; call WriteHeader first")
	}
	r.Type, r.Seq, r.Chain = TypeEvent, w.seq+1, ""
	acts := make([]json.RawMessage, len(r.Actions))
	for i, a := range r.Actions {
		red, err := w.refs.Reduce(a)
		if err != nil {
			return 0, fmt.Errorf("event log: event %d: action %d: %w", r.Seq, i+1, err)
		}
		acts[i] = red
	}
	r.Actions = acts
	if err := w.writeLine(r); err != nil {
		return 0, err
	}
	w.seq = r.Seq
	return r.Seq, nil
}

// writeLine writes v as one chained line, in a single write. After a
// failed write the writer takes the partial line back if it can, and
// refuses to write again: the chain would be broken.
func (w *Writer) writeLine(v any) error {
	if w.err != nil {
		return fmt.Errorf("event log %s: an earlier write failed (%w); nothing more is recorded", w.path, w.err)
	}
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("event log: encode: %w", err)
	}
	if len(body) < 2 || body[0] != '{' || bytes.IndexByte(body, '\n') >= 0 {
		return fmt.Errorf("event log: a line must be one JSON object, got %.40q", body)
	}
	line, chain := seal(w.chain, body)
	if _, err := w.f.Write(line); err != nil {
		w.err = err
		if terr := w.f.Truncate(w.end); terr == nil {
			_, _ = w.f.Seek(w.end, io.SeekStart)
		}
		return fmt.Errorf("event log %s: %w; check the disk", w.path, err)
	}
	w.chain = chain
	w.end += int64(len(line))
	return nil
}

// Close syncs and closes the log, which releases its lock.
func (w *Writer) Close() error {
	serr := w.f.Sync()
	cerr := w.release()
	if err := errors.Join(serr, cerr); err != nil {
		return fmt.Errorf("close event log %s: %w", w.path, err)
	}
	return nil
}
