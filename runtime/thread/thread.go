// Package thread saves and loads the coding agent's threads: one JSON file
// per thread, <dir>/<id>.json, holding the machine's state (conversation
// included) and what the thread was started with.
//
// Files are replaced atomically — written to a temporary file in the same
// directory, synced, renamed over the old file, and the directory synced —
// so a crash at any moment leaves either the old thread or the new one,
// never a mix. A thread is locked while an agent works on it, so that two
// agents cannot resume the same thread at once.
package thread

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/fsmgen/fsmgen/internal/atomicfile"
	"github.com/fsmgen/fsmgen/internal/proclock"
	"github.com/fsmgen/fsmgen/runtime/ledger"
)

// Version is the format version of the thread files this package writes:
// 2, whose State is the machine as its Save method saves it (its running
// timers and the fingerprint of its shape included). Load reads version 1
// too, whose State is the machine's bare state (its MarshalJSON).
const Version = 2

// Thread is one saved conversation with the agent.
type Thread struct {
	// Version is the file format version.
	Version int `json:"version"`
	// ID names the thread; the file is <ID>.json.
	ID string `json:"id"`
	// Created is when the thread was started.
	Created time.Time `json:"created"`
	// Updated is when the thread was last saved.
	Updated time.Time `json:"updated"`
	// Provider names the LLM provider, e.g. "anthropic".
	Provider string `json:"provider"`
	// Model names the LLM model.
	Model string `json:"model"`
	// Workspace is the absolute directory the agent works in.
	Workspace string `json:"workspace"`
	// State is the machine as its generated Save method saves it (in a
	// version 1 file, its state as its MarshalJSON writes it), or empty
	// for a thread that has not started yet.
	State json.RawMessage `json:"state,omitempty"`
	// QueuedInput holds the user's messages typed while the agent was busy
	// and not yet handed to the machine, oldest first.
	QueuedInput []string `json:"queued_input,omitempty"`
	// Ledger is the account of the tokens the thread's replies used.
	Ledger ledger.Ledger `json:"ledger"`
	// LogChain is the chain value of the last line of the thread's event
	// log when the thread was saved (see runtime/eventlog): replay checks
	// that the log still has that line, so that a log cut short or
	// rewritten after it is found out.
	LogChain string `json:"log_chain,omitempty"`
}

// ErrNotFound is wrapped by Load when no thread has the given ID.
var ErrNotFound = errors.New("thread not found")

// ErrLocked is wrapped by Lock when another process holds the thread.
var ErrLocked = errors.New("thread is in use")

// idPattern is what a thread ID may look like: it becomes a file name.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// CheckID reports whether id can name a thread: letters, digits, '.', '_'
// and '-', starting with a letter or digit, at most 128 characters.
func CheckID(id string) error {
	if !idPattern.MatchString(id) {
		return fmt.Errorf("bad thread ID %q: use letters, digits, '.', '_' and '-' only (as printed when the thread started)", id)
	}
	return nil
}

// NewID returns a fresh thread ID such as "20260102-150405-3f9a1c07": the
// time, sortable, and eight random hex digits.
func NewID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported systems
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// Store keeps threads in a directory.
type Store struct {
	dir string
}

// NewStore returns a store in dir, creating it (mode 0700: threads hold
// the user's code and conversation) if needed.
func NewStore(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("thread store: no directory given; pass one with -threads")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("thread store: create %s: %w; pass a writable directory with -threads", dir, err)
	}
	return &Store{dir: dir}, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Path returns the file that holds the thread id.
func (s *Store) Path(id string) string { return filepath.Join(s.dir, id+".json") }

// Save writes t atomically to its file.
func (s *Store) Save(t *Thread) error {
	if err := CheckID(t.ID); err != nil {
		return fmt.Errorf("save thread: %w", err)
	}
	if t.Version == 0 {
		t.Version = Version
	}
	// Not indented: indenting would rewrite the raw JSON inside the state
	// (tool call arguments), and the thread must give back what was saved.
	data, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("save thread %s: encode: %w", t.ID, err)
	}
	data = append(data, '\n')
	if err := atomicfile.Write(s.Path(t.ID), data, 0o600); err != nil {
		return fmt.Errorf("save thread %s: %w; check that %s is writable and the disk is not full", t.ID, err, s.dir)
	}
	return nil
}

// Load reads the thread id.
func (s *Store) Load(id string) (*Thread, error) {
	if err := CheckID(id); err != nil {
		return nil, fmt.Errorf("load thread: %w", err)
	}
	data, err := os.ReadFile(s.Path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("load thread %s: %w in %s; check the ID and -threads", id, ErrNotFound, s.dir)
	}
	if err != nil {
		return nil, fmt.Errorf("load thread %s: %w", id, err)
	}
	var t Thread
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // a misspelled field is refused, not dropped
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("load thread %s: %s is not a thread file: %w", id, s.Path(id), err)
	}
	if t.Version != Version && t.Version != 1 {
		return nil, fmt.Errorf("load thread %s: format version %d, this agent reads versions 1 and %d; use a matching agent", id, t.Version, Version)
	}
	if t.ID != id {
		return nil, fmt.Errorf("load thread %s: the file says it is thread %q; rename it back or resume that ID", id, t.ID)
	}
	return &t, nil
}

// Lock takes an exclusive lock on the thread id, so that two agents never
// work on one thread, and removes the temporary files of saves of the
// thread that a crash cut short. The lock is released by calling the
// returned function, or by the operating system when the process ends,
// even by SIGKILL. It belongs to the process, not to its descriptor of the
// lock file (see internal/proclock): a command the agent was starting when
// it was killed, which has a copy of that descriptor until it runs its
// program, does not hold the thread.
func (s *Store) Lock(id string) (unlock func(), err error) {
	if err := CheckID(id); err != nil {
		return nil, fmt.Errorf("lock thread: %w", err)
	}
	p := filepath.Join(s.dir, id+".lock")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock thread %s: %w", id, err)
	}
	release, err := proclock.Lock(f)
	if errors.Is(err, proclock.ErrHeld) {
		return nil, fmt.Errorf("lock thread %s: %w by another agent; stop it first or start a new thread", id, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("lock thread %s: %w", id, err)
	}
	if err := s.removeTemp(id); err != nil {
		_ = release()
		return nil, fmt.Errorf("lock thread %s: %w", id, err)
	}
	return func() { _ = release() }, nil
}

// removeTemp removes the temporary files that saves of thread id left
// behind when the process was killed mid-save. Only the holder of the
// thread's lock may call it: no save of the thread is then in flight.
func (s *Store) removeTemp(id string) error {
	left, err := filepath.Glob(filepath.Join(s.dir, atomicfile.TempPattern(id+".json")))
	if err != nil {
		return err
	}
	for _, p := range left {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s, left by a save that was cut short: %w", p, err)
		}
	}
	return nil
}
