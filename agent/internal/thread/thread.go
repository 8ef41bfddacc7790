// Package thread saves and loads the coding agent's threads. A thread is
// kept in a journal, <dir>/<id>.journal: one record a line, each a JSON
// object after the CRC-32C of its bytes, appended and synced as the
// thread changes (see [Journal]). The first record holds the whole thread;
// each next one holds only what changed — the messages added (after the
// number of messages it keeps, when the conversation was cut back by /undo
// or compaction), the machine's state without its conversation, the
// queued input, the account of tokens — so a save costs the same at the
// 500th round as at the 10th. A cut is a record appended, never a rewrite.
// Now and then the journal is compacted: replaced, atomically, by one
// record holding the whole thread.
//
// A record cut short by a crash (kill -9 in the middle of an append) is
// the journal's last line, without its newline or its checksum: opening
// the journal removes it and says so. A damaged record before the last is
// refused, naming the file and the offset. A thread is locked while an
// agent works on it, so that two agents cannot resume the same thread at
// once.
//
// Version 3 of the format is the journal. A thread saved by an earlier
// agent (version 2 or 1, one JSON file <id>.json) is refused with a
// message: continue it with the agent that saved it.
package thread

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsmgen/fsmgen/internal/atomicfile"
	"github.com/fsmgen/fsmgen/internal/proclock"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// ErrNotFound is wrapped by Load when no thread has the given ID.
var ErrNotFound = errors.New("thread not found")

// ErrLocked is wrapped by Lock when another process holds the thread.
var ErrLocked = errors.New("thread is in use")

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

// Path returns the journal that holds the thread id.
func (s *Store) Path(id string) string { return filepath.Join(s.dir, id+journalExt) }

// oldPath returns the file in which an agent of format version 1 or 2
// saved the thread id.
func (s *Store) oldPath(id string) string { return filepath.Join(s.dir, id+".json") }

// Lock takes an exclusive lock on the thread id, so that two agents never
// work on one thread, and removes the temporary files of compactions of
// the thread that a crash cut short. The lock is released by calling the
// returned function, which also removes the lock file, or by the
// operating system when the process ends, even by SIGKILL (the lock file
// then stays, empty, until the thread is next locked and unlocked). It
// belongs to the process, not to its descriptor of the lock file (see
// internal/proclock): a command the agent was starting when it was
// killed, which has a copy of that descriptor until it runs its program,
// does not hold the thread.
func (s *Store) Lock(id string) (unlock func(), err error) {
	if err := threadwire.CheckID(id); err != nil {
		return nil, fmt.Errorf("lock thread: %w", err)
	}
	p := filepath.Join(s.dir, id+".lock")
	for {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return nil, fmt.Errorf("lock thread %s: %w; check that %s is writable", id, err, s.dir)
		}
		release, err := proclock.Lock(f)
		if errors.Is(err, proclock.ErrHeld) {
			return nil, fmt.Errorf("lock thread %s: %w by another agent; stop it first or start a new thread", id, ErrLocked)
		}
		if err != nil {
			return nil, fmt.Errorf("lock thread %s: %w", id, err)
		}
		// The holder before us may have removed the file between our
		// open and our lock: the lock is then on a file no one else will
		// open. Lock the file the name now names.
		if !sameFile(f, p) {
			_ = release()
			continue
		}
		if err := s.removeTemp(id); err != nil {
			_ = release()
			return nil, fmt.Errorf("lock thread %s: %w", id, err)
		}
		return func() {
			_ = os.Remove(p) // while held: whoever opened it will see it gone
			_ = release()
		}, nil
	}
}

// sameFile reports whether the open file f is the file path names.
func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	if err != nil {
		return false
	}
	sa, okA := a.Sys().(*syscall.Stat_t)
	sb, okB := b.Sys().(*syscall.Stat_t)
	return okA && okB && sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// removeTemp removes the temporary files that compactions of thread id
// left behind when the process was killed in the middle of one. Only the
// holder of the thread's lock may call it: no compaction of the thread is
// then in flight.
func (s *Store) removeTemp(id string) error {
	left, err := filepath.Glob(filepath.Join(s.dir, atomicfile.TempPattern(id+journalExt)))
	if err != nil {
		return err
	}
	for _, p := range left {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s, left by a compaction that was cut short: %w", p, err)
		}
	}
	return nil
}
