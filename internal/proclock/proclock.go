// Package proclock takes exclusive locks on files that belong to the
// process that takes them, not to its descriptor of the file, so that
// they end exactly when the process does, even when it is killed by
// SIGKILL.
//
// A flock(2) lock belongs to the open file description, which every child
// the process forks shares from the fork until it runs its program
// (execve closes its close-on-exec copy) or exits. A process killed while
// it starts a command (the agent starts bubblewrap and git all the time)
// thus leaves its lock held, after it has been waited for, by a child
// that is not the program, for as long as that child takes to be
// scheduled and reach execve: milliseconds on a loaded machine, long
// enough for the program restarted at once to be told that the file is in
// use. A POSIX record lock (fcntl(2) F_SETLK) belongs to the process: a
// child does not inherit it, and it goes when the process ends.
//
// Record locks do not exclude the process that holds them, and closing
// any descriptor of the file in that process releases them. So the
// package also keeps the files the process holds locked, by device and
// inode: a second [Lock] of one of them in the process is refused too,
// and the descriptor it was given is kept open until the first lock is
// released. A process that holds a file locked must not open it by other
// means: closing that descriptor would release the lock.
package proclock

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrHeld is wrapped by [Lock]'s error when another process, or this one,
// holds the file's lock.
var ErrHeld = errors.New("locked by another holder")

// fileID names a file: its device and inode.
type fileID struct{ dev, ino uint64 }

// lock is a lock this process holds.
type lock struct {
	f      *os.File   // the locked descriptor, kept from the garbage collector's finalizer
	parked []*os.File // descriptors of the file that Lock refused, closed with f
}

var (
	mu sync.Mutex // guards held and the locking and release of locks
	// held maps the files this process holds locked to their locks.
	held = map[fileID]*lock{}
)

// Lock takes an exclusive lock on f, an open file opened for writing,
// without waiting, and returns the function that releases it and closes f
// (only the first call does anything). A file another process or this one
// holds locked is refused with an error that wraps [ErrHeld]. Close f only
// through that function: closed otherwise, f would release the lock, and
// the file would still count as held in this process. A lock never
// released is held until the process ends.
//
// On error Lock takes care of f, which the caller must not use any more:
// it closes it, or, when this process holds the file locked already,
// keeps it open until that lock is released (closing it would release
// that lock).
func Lock(f *os.File) (release func() error, err error) {
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: no device and inode number", f.Name())
	}
	id := fileID{dev: uint64(st.Dev), ino: st.Ino} // Dev is not 64 bits everywhere
	mu.Lock()
	defer mu.Unlock()
	if l := held[id]; l != nil {
		l.parked = append(l.parked, f)
		return nil, fmt.Errorf("lock %s: %w (this process)", f.Name(), ErrHeld)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		// The whole file (Start 0, Len 0), however long it grows.
		lerr = unix.FcntlFlock(fd, unix.F_SETLK, &unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart})
	}); err != nil {
		lerr = err
	}
	if lerr != nil {
		_ = f.Close()
		if errors.Is(lerr, unix.EAGAIN) || errors.Is(lerr, unix.EACCES) {
			return nil, fmt.Errorf("lock %s: %w", f.Name(), ErrHeld)
		}
		return nil, fmt.Errorf("lock %s: %w", f.Name(), lerr)
	}
	l := &lock{f: f}
	held[id] = l
	return sync.OnceValue(func() error {
		mu.Lock()
		defer mu.Unlock()
		err := l.f.Close() // releases the lock
		for _, p := range l.parked {
			_ = p.Close()
		}
		delete(held, id)
		if err != nil {
			return fmt.Errorf("unlock %s: %w", f.Name(), err)
		}
		return nil
	}), nil
}
