package thread

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/internal/atomicfile"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// journalExt ends the name of a thread's journal.
const journalExt = ".journal"

// compactSlack is how many bytes a journal may hold beyond twice the
// thread it records before it is compacted: a session of a few hundred
// rounds is never compacted, a long one is, about each time what its
// records repeat (the machine's state, the account of tokens) amounts to
// the thread itself, so that compaction costs a constant share of the
// appends.
const compactSlack = 1 << 20

// Record kinds.
const (
	kindThread = "thread" // the whole thread: the first record
	kindStep   = "step"   // what a save changed
)

// ErrOldFormat is wrapped by Load and Open for a thread saved by an agent
// of an earlier format (version 1 or 2, one JSON file).
var ErrOldFormat = errors.New("the thread was saved in an earlier format")

// ErrDamaged is wrapped by Load and Open for a journal damaged before its
// last record.
var ErrDamaged = errors.New("the thread's journal is damaged")

// castagnoli is the CRC-32C table of the records' checksums.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// record is one line of a journal, after its checksum. A step record
// holds the thread's fields that a save may change; the messages are
// those after the first Base ones, which replace the Dropped messages the
// thread had after those (the conversation cut back, by /undo, say); the
// ended turns of the ledger, which only grow, are those added after the
// first TurnsBase ones.
type record struct {
	Kind string `json:"kind"`
	// Thread is the whole thread (kindThread).
	Thread *threadwire.Thread `json:"thread,omitempty"`

	Base        int               `json:"base,omitempty"`
	Dropped     int               `json:"dropped,omitempty"`
	Messages    []json.RawMessage `json:"messages,omitempty"`
	State       json.RawMessage   `json:"state,omitempty"`
	QueuedInput []string          `json:"queued_input,omitempty"`
	HookNote    string            `json:"hook_note,omitempty"`
	Total       *chat.Usage       `json:"total,omitempty"`
	Turn        *chat.Usage       `json:"turn,omitempty"`
	Replies     int               `json:"replies,omitempty"`
	TurnsBase   int               `json:"turns_base,omitempty"`
	Turns       []chat.Usage      `json:"turns,omitempty"`
	// ModelsBase and Models are the ledger's entries of what each model
	// used from entry ModelsBase on: the last entry the journal holds
	// (whose usage may have grown) and those added after it. A step
	// without them leaves the entries as they were.
	ModelsBase  int               `json:"models_base,omitempty"`
	Models      []chat.ModelUsage `json:"models,omitempty"`
	LogChain    string            `json:"log_chain,omitempty"`
	Updated     *time.Time        `json:"updated,omitempty"`
	Provider    string            `json:"provider,omitempty"`
	Model       string            `json:"model,omitempty"`
	Workspace   string            `json:"workspace,omitempty"`
	NoToolCalls bool              `json:"no_tool_calls,omitempty"`
	FirstPrompt string            `json:"first_prompt,omitempty"`
}

// journalMagic is what a journal's first line holds after its checksum
// and space: the start of the record of the whole thread.
const journalMagic = `{"kind":"` + kindThread + `"`

// IsJournal reports whether head, the start of a file, is that of a
// thread's journal: a checksum of eight hex digits, a space, and the
// record of the whole thread. The agent masks such files from its tools.
func IsJournal(head []byte) bool {
	if len(head) < 9+len(journalMagic) || head[8] != ' ' {
		return false
	}
	for _, c := range head[:8] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return bytes.HasPrefix(head[9:], []byte(journalMagic))
}

// encodeRecord returns the journal line of r: the CRC-32C of r's JSON in
// eight hex digits, a space, the JSON, a newline.
func encodeRecord(r *record) ([]byte, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	line := make([]byte, 0, len(data)+10)
	line = fmt.Appendf(line, "%08x ", crc32.Checksum(data, castagnoli))
	line = append(line, data...)
	return append(line, '\n'), nil
}

// decodeRecord reads one journal line, its newline left out.
func decodeRecord(line []byte) (*record, error) {
	if len(line) < 10 || line[8] != ' ' {
		return nil, errors.New("no checksum")
	}
	sum, err := strconv.ParseUint(string(line[:8]), 16, 32)
	if err != nil {
		return nil, errors.New("no checksum")
	}
	data := line[9:]
	if crc32.Checksum(data, castagnoli) != uint32(sum) {
		return nil, errors.New("checksum mismatch")
	}
	var r record
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // a field of a later format is refused, not dropped
	if err := dec.Decode(&r); err != nil {
		return nil, err
	}
	return &r, nil
}

// stepRecord returns the record of the save of t into a journal holding
// base+dropped messages, of which t keeps the first base, and turnsBase
// ended turns.
func stepRecord(t *threadwire.Thread, base, dropped, turnsBase, models int) *record {
	updated, total, turn := t.Updated, t.Ledger.Total, t.Ledger.Turn
	r := &record{
		Kind: kindStep, Base: base, Dropped: dropped, State: t.State, QueuedInput: t.QueuedInput, HookNote: t.HookNote,
		Total: &total, Turn: &turn, Replies: t.Ledger.Replies, TurnsBase: turnsBase,
		LogChain: t.LogChain, Updated: &updated,
		Provider: t.Provider, Model: t.Model, Workspace: t.Workspace, NoToolCalls: t.NoToolCalls,
		FirstPrompt: t.FirstPrompt,
	}
	if len(t.Messages) > base {
		r.Messages = t.Messages[base:]
	}
	if len(t.Ledger.Turns) > turnsBase {
		r.Turns = t.Ledger.Turns[turnsBase:]
	}
	if r.ModelsBase = max(models-1, 0); len(t.Ledger.Models) > r.ModelsBase {
		r.Models = t.Ledger.Models[r.ModelsBase:]
	}
	return r
}

// apply changes t as the step record r says.
func (r *record) apply(t *threadwire.Thread) error {
	switch {
	case r.Base < 0 || r.Dropped < 0:
		return fmt.Errorf("a step after message %d dropping %d", r.Base, r.Dropped)
	case r.Base+r.Dropped != len(t.Messages) && r.Dropped > 0:
		return fmt.Errorf("a step dropping %d messages after message %d of a thread of %d messages", r.Dropped, r.Base, len(t.Messages))
	case r.Base+r.Dropped != len(t.Messages):
		return fmt.Errorf("a step after message %d of a thread of %d messages", r.Base, len(t.Messages))
	case r.TurnsBase != len(t.Ledger.Turns):
		return fmt.Errorf("turns counted after turn %d of a thread of %d turns", r.TurnsBase, len(t.Ledger.Turns))
	case r.Models != nil && (r.ModelsBase < 0 || r.ModelsBase > len(t.Ledger.Models)):
		return fmt.Errorf("models counted after entry %d of a thread of %d", r.ModelsBase, len(t.Ledger.Models))
	case r.Total == nil || r.Turn == nil || r.Updated == nil:
		return errors.New("a step without its account of tokens or its time")
	}
	t.Messages = append(t.Messages[:r.Base:r.Base], r.Messages...)
	if len(t.Messages) == 0 {
		t.Messages = nil
	}
	t.State, t.QueuedInput, t.HookNote, t.LogChain, t.Updated = r.State, r.QueuedInput, r.HookNote, r.LogChain, *r.Updated
	t.Ledger.Total, t.Ledger.Turn, t.Ledger.Replies = *r.Total, *r.Turn, r.Replies
	t.Ledger.Turns = append(t.Ledger.Turns, r.Turns...)
	if r.Models != nil {
		t.Ledger.Models = append(t.Ledger.Models[:r.ModelsBase:r.ModelsBase], r.Models...)
	}
	t.Provider, t.Model, t.Workspace, t.NoToolCalls = r.Provider, r.Model, r.Workspace, r.NoToolCalls
	if r.FirstPrompt != "" {
		// Set once; a step of a journal written before it was kept has
		// none, and takes nothing away.
		t.FirstPrompt = r.FirstPrompt
	}
	return nil
}

// Repair says what Open removed of a journal's tail, cut short or damaged
// by a crash in the middle of an append: the bytes from Offset to the end
// (Bytes of them). Its zero value means nothing.
type Repair struct {
	Offset, Bytes int64
}

// journalFile is what reading a journal found.
type journalFile struct {
	thread *threadwire.Thread
	valid  int64  // the length of its whole, sound records
	repair Repair // what follows them
	live   int64  // about the length of a compacted journal of the thread
}

// read reads the journal of thread id.
func (s *Store) read(id string) (*journalFile, error) {
	if err := threadwire.CheckID(id); err != nil {
		return nil, fmt.Errorf("load thread: %w", err)
	}
	path := s.Path(id)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if _, oerr := os.Stat(s.oldPath(id)); oerr == nil {
			return nil, fmt.Errorf("load thread %s: %w (%s, format version 1 or 2); this agent reads only version %d, its journal: continue it with the agent that saved it, or start a new thread", id, ErrOldFormat, s.oldPath(id), threadwire.Version)
		}
		return nil, fmt.Errorf("load thread %s: %w in %s; check the ID and -threads, or list the threads with: agent sessions", id, ErrNotFound, s.dir)
	}
	if err != nil {
		return nil, fmt.Errorf("load thread %s: %w", id, err)
	}
	jf := &journalFile{}
	for off, n := int64(0), 1; off < int64(len(data)); n++ {
		rest := data[off:]
		end := bytes.IndexByte(rest, '\n')
		last := end < 0 || off+int64(end)+1 == int64(len(data))
		var r *record
		if end < 0 {
			err = errors.New("cut short")
		} else {
			r, err = decodeRecord(rest[:end])
		}
		if err == nil {
			switch {
			case n == 1 && r.Kind != kindThread:
				err = fmt.Errorf("it starts with a %q record, not the thread", r.Kind)
			case n == 1:
				err = checkHead(id, r.Thread)
				jf.thread = r.Thread
			case r.Kind == kindStep:
				err = r.apply(jf.thread)
				jf.live += int64(len(r.Messages)) * 8
				for _, m := range r.Messages {
					jf.live += int64(len(m))
				}
			default:
				err = fmt.Errorf("a record of kind %q, which this agent does not know", r.Kind)
			}
		}
		if err != nil {
			if errors.Is(err, ErrOldFormat) || errors.Is(err, errNotThis) {
				return nil, err
			}
			if last && n > 1 {
				// What a crash in the middle of the last append left.
				jf.repair = Repair{Offset: off, Bytes: int64(len(data)) - off}
				break
			}
			return nil, fmt.Errorf("load thread %s: %w: %s at offset %d (record %d): %v; the records from there on cannot be read: move the file aside and start a new thread", id, ErrDamaged, path, off, n, err)
		}
		if n == 1 {
			jf.live = int64(end) + 1
		}
		off += int64(end) + 1
		jf.valid = off
	}
	if jf.thread == nil {
		return nil, fmt.Errorf("load thread %s: %w: %s is empty; move it aside and start a new thread", id, ErrDamaged, path)
	}
	return jf, nil
}

// errNotThis marks an error of a journal that is not this thread's, or
// not of this format: refused whatever record it is in.
var errNotThis = errors.New("not this thread's journal")

// checkHead checks the thread of a journal's first record.
func checkHead(id string, t *threadwire.Thread) error {
	switch {
	case t == nil:
		return errors.New("a thread record without the thread")
	case t.Version != threadwire.Version:
		return fmt.Errorf("load thread %s: %w: format version %d, this agent reads version %d; use a matching agent", id, errNotThis, t.Version, threadwire.Version)
	case t.ID != id:
		return fmt.Errorf("load thread %s: %w: the journal says it is thread %q; rename it back or resume that ID", id, errNotThis, t.ID)
	}
	return nil
}

// Load reads the thread id, without changing its journal: a record cut
// short at its end is left out (Open, which the holder of the thread's
// lock calls, removes it).
func (s *Store) Load(id string) (*threadwire.Thread, error) {
	jf, err := s.read(id)
	if err != nil {
		return nil, err
	}
	return jf.thread, nil
}

// Exists reports whether the thread id has a journal.
func (s *Store) Exists(id string) bool {
	_, err := os.Stat(s.Path(id))
	return err == nil
}

// Journal is the open journal of a thread, appended to by the one agent
// that holds the thread's lock (see [Store.Lock]). It is not safe for
// concurrent use.
type Journal struct {
	store    *Store
	id       string
	f        *os.File
	size     int64  // bytes in the file
	live     int64  // about the bytes of the thread compacted
	messages int    // the messages the journal holds
	keep     int    // how many of them the next save keeps (see Cut)
	turns    int    // the ended turns of its ledger
	models   int    // the entries of its ledger's Models
	first    string // the thread's FirstPrompt as the journal holds it
	repair   Repair
	broken   error // why no more can be appended
}

// Create starts the journal of the new thread t, holding all of it. It
// refuses a thread that has one already.
func (s *Store) Create(t *threadwire.Thread) (*Journal, error) {
	if err := threadwire.CheckID(t.ID); err != nil {
		return nil, fmt.Errorf("save thread: %w", err)
	}
	if s.Exists(t.ID) {
		return nil, fmt.Errorf("save thread %s: %s exists; resume it with -resume %s", t.ID, s.Path(t.ID), t.ID)
	}
	j := &Journal{store: s, id: t.ID}
	if err := j.compact(t); err != nil {
		return nil, err
	}
	return j, nil
}

// Open reads the thread id and opens its journal for appending; the
// caller holds the thread's lock. A record cut short at the journal's end
// by a crash is removed first ([Journal.Repaired] says so).
func (s *Store) Open(id string) (*threadwire.Thread, *Journal, error) {
	jf, err := s.read(id)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(s.Path(id), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open thread %s: %w", id, err)
	}
	if jf.repair.Bytes > 0 {
		if err := errors.Join(f.Truncate(jf.valid), f.Sync()); err != nil {
			_ = f.Close()
			return nil, nil, fmt.Errorf("open thread %s: remove the record cut short at offset %d of %s: %w", id, jf.repair.Offset, s.Path(id), err)
		}
	}
	t := jf.thread
	return t, &Journal{store: s, id: id, f: f, size: jf.valid, live: jf.live,
		messages: len(t.Messages), keep: len(t.Messages), turns: len(t.Ledger.Turns), models: len(t.Ledger.Models),
		first: t.FirstPrompt, repair: jf.repair}, nil
}

// Repaired says what Open removed of the journal's tail.
func (j *Journal) Repaired() Repair { return j.repair }

// Path returns the journal's file.
func (j *Journal) Path() string { return j.store.Path(j.id) }

// Cut says that t.Messages, at the next save, keeps only the first keep
// of the messages saved (and has what follows them added since): the
// conversation was cut back, by /undo or by compaction. The record of that
// save says how many messages it drops; the journal is appended to, never
// rewritten.
func (j *Journal) Cut(keep int) {
	j.keep = min(j.keep, max(keep, 0))
}

// Save appends what changed of t since the last save: the messages added
// after the ones kept (all of them, unless Cut said otherwise), and t's
// other fields. It returns once the record is on disk. Now and then it
// compacts the journal instead.
func (j *Journal) Save(t *threadwire.Thread) error {
	if len(t.Messages) < j.keep {
		return fmt.Errorf("save thread %s: %d messages, fewer than the %d saved and kept: call Cut when a thread's messages are cut back", t.ID, len(t.Messages), j.keep)
	}
	if j.size > 2*j.live+compactSlack {
		return j.compact(t)
	}
	r := stepRecord(t, j.keep, j.messages-j.keep, j.turns, j.models)
	if t.FirstPrompt == j.first {
		r.FirstPrompt = "" // held already: set once, it is not written again
	}
	return j.append(t, r)
}

// append writes the record r of t's save at the journal's end and syncs
// it. A write that fails is cut off again, so that the journal ends with
// a whole record.
func (j *Journal) append(t *threadwire.Thread, r *record) error {
	if j.broken != nil {
		return j.broken
	}
	line, err := encodeRecord(r)
	if err != nil {
		return fmt.Errorf("save thread %s: encode: %w", t.ID, err)
	}
	if _, err := j.f.Write(line); err != nil {
		if terr := j.f.Truncate(j.size); terr != nil {
			j.broken = fmt.Errorf("save thread %s: %s is left with a partial record after a failed write (%w); resume the thread to repair it", t.ID, j.Path(), terr)
		}
		return fmt.Errorf("save thread %s: %w; check that %s is writable and the disk is not full", t.ID, err, j.store.dir)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("save thread %s: sync %s: %w", t.ID, j.Path(), err)
	}
	j.size += int64(len(line))
	j.messages, j.keep, j.turns, j.first = len(t.Messages), len(t.Messages), len(t.Ledger.Turns), t.FirstPrompt
	j.models = len(t.Ledger.Models)
	for _, m := range r.Messages {
		j.live += int64(len(m)) + 8
	}
	return nil
}

// compact replaces the journal, atomically, by one record holding the
// whole of t, and opens it for appending.
func (j *Journal) compact(t *threadwire.Thread) error {
	if t.Version == 0 {
		t.Version = threadwire.Version
	}
	line, err := encodeRecord(&record{Kind: kindThread, Thread: t})
	if err != nil {
		return fmt.Errorf("save thread %s: encode: %w", t.ID, err)
	}
	path := j.Path()
	if err := atomicfile.Write(path, line, 0o600); err != nil {
		return fmt.Errorf("save thread %s: %w; check that %s is writable and the disk is not full", t.ID, err, j.store.dir)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("save thread %s: reopen %s: %w", t.ID, path, err)
	}
	if j.f != nil {
		_ = j.f.Close()
	}
	j.f, j.broken = f, nil
	j.size, j.live = int64(len(line)), int64(len(line))
	j.messages, j.keep, j.turns, j.first = len(t.Messages), len(t.Messages), len(t.Ledger.Turns), t.FirstPrompt
	j.models = len(t.Ledger.Models)
	return nil
}

// Close closes the journal's file.
func (j *Journal) Close() error {
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	if err != nil {
		return fmt.Errorf("close thread %s: %w", j.id, err)
	}
	return nil
}

// List returns the IDs of the threads that have a journal in the store,
// sorted.
func (s *Store) List() ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), journalExt); ok && e.Type().IsRegular() && threadwire.CheckID(id) == nil {
			ids = append(ids, id)
		}
	}
	return ids, nil
}
