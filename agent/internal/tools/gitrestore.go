package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// restoreFile puts the file p back as f recorded it, and returns what it
// is now (with f's content), to compare later checks with. When top, p is
// a .git entry directly in its directory, whose directory is not created
// when it is missing.
func (g *GitGuard) restoreFile(p string, f gitFile, top bool) (gitFile, error) {
	if !f.kept {
		return f, errors.New("it is too large to have been recorded")
	}
	d, err := g.ws.openDir(path.Dir(p), !top)
	if err != nil {
		return f, reason(err)
	}
	defer d.Close()
	base := path.Base(p)
	if err := removeAt(d.fd, base, 0); err != nil {
		return f, err
	}
	if f.mode&fs.ModeSymlink != 0 {
		if err := unix.Symlinkat(string(f.content), d.fd, base); err != nil {
			return f, err
		}
	} else {
		w, err := d.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return f, reason(err)
		}
		_, werr := w.Write(f.content)
		cerr := w.Chmod(f.mode.Perm())
		if err := errors.Join(werr, cerr, w.Close()); err != nil {
			return f, err
		}
	}
	now, err := scanner{ws: g.ws}.record(p)
	now.content, now.kept = f.content, f.kept
	return now, err
}

// remove removes the file or directory tree p, never following a
// symbolic link.
func (g *GitGuard) remove(p string) error {
	d, err := g.ws.openDir(path.Dir(p), false)
	if err != nil {
		return reason(err)
	}
	defer d.Close()
	return removeAt(d.fd, path.Base(p), 0)
}

// maxTreeDepth bounds how deep removeAt goes.
const maxTreeDepth = 256

// removeAt removes the entry name of the directory parent and, for a
// directory, everything in it, never following a symbolic link. A
// missing entry is no error.
func removeAt(parent int, name string, depth int) error {
	err := unix.Unlinkat(parent, name, 0)
	switch {
	case err == nil || errors.Is(err, unix.ENOENT):
		return nil
	case !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM):
		return fmt.Errorf("remove %s: %w", name, err)
	case depth > maxTreeDepth:
		return fmt.Errorf("remove %s: more than %d directories deep", name, maxTreeDepth)
	}
	fd, err := openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	for _, n := range names {
		if err := removeAt(fd, n, depth+1); err != nil {
			return err
		}
	}
	if err := unix.Unlinkat(parent, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	return nil
}

// gitDirOn returns the directory on the way to the path rel (resolved;
// the workspace root included) that is, or would be once rel is written
// and its missing directories created, a git directory: one holding HEAD
// and objects and refs, or HEAD and commondir. "" when there is none.
// edit_file writes nothing there: a repository's files can make the
// user's git run programs.
//
// Each directory on the way is looked at once, from the one above it (an
// open descriptor): a path of n components costs O(n) system calls, and
// below a directory that does not exist nothing is looked up.
func (w *Workspace) gitDirOn(rel string) string {
	fd, err := w.dupRoot()
	if err != nil {
		fd = -1
	}
	defer func() {
		if fd >= 0 {
			_ = unix.Close(fd)
		}
	}()
	// rel[:end] is the directory looked at (the root when end is 0),
	// rel[off:] the path below it.
	end, off := 0, 0
	for {
		next, _, more := strings.Cut(rel[off:], "/")
		var marks uint8
		if fd >= 0 {
			for _, m := range markNames {
				var st unix.Stat_t
				if unix.Fstatat(fd, m.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
					marks |= markOf(m.name, st.Mode&unix.S_IFMT == unix.S_IFDIR)
				}
			}
		}
		marks |= markOf(next, more)
		if gitDirMarks(marks) {
			if end == 0 {
				return "."
			}
			return rel[:end]
		}
		if !more {
			return ""
		}
		if fd >= 0 {
			child, err := openat(fd, next, dirFlags, 0)
			_ = unix.Close(fd)
			fd = -1
			if err == nil {
				fd = child
			}
		}
		end = off + len(next)
		off = end + 1
	}
}
