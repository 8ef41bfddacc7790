package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fsmgen/fsmgen/internal/proclock"
)

// lockDB makes this process the one server of the SQLite database at
// path: it takes the lock of the file path.lock beside it (a POSIX record
// lock, which ends with the process, whatever kills it: no lock outlives
// its holder) and writes its PID there. A second server on the same file
// would run every monitor and job a second time; it is refused with the
// holder's PID. The lock is on a file of its own because SQLite locks
// ranges of the database file itself with the same kind of lock, which
// one process's locks would merge with.
//
// It returns the function that releases the lock.
func lockDB(path string) (func() error, error) {
	// Through a symbolic link, the database's own directory; and the
	// whole path, for the messages.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("the lock file of the database %s: %w (the server makes it beside the database: give a -db in a directory it may write)", path, err)
	}
	release, err := proclock.Lock(f)
	if errors.Is(err, proclock.ErrHeld) {
		// A holder that has not written its PID yet is named without.
		holder := "another server"
		if data, rerr := os.ReadFile(name); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); perr == nil && pid > 0 {
				holder = fmt.Sprintf("another server, pid %d", pid)
			}
		}
		return nil, fmt.Errorf("the database %s is in use by %s (it holds the lock of %s): two servers on one database would run every monitor and job twice; stop that one first, or give another -db (-reset-token works while it runs)", path, holder, name)
	}
	if err != nil {
		return nil, fmt.Errorf("the lock file of the database %s: %w", path, err)
	}
	// The holder's PID, for the message of the next one refused.
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		release()
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	return release, nil
}
