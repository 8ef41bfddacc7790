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

// dir is a directory of the workspace that edit_file writes in, opened by
// [Workspace.openDir] without following any symbolic link, and the file
// operations edit_file makes in it. Every name given to its methods is one
// component (no "/"), and none follows a final symbolic link. Close it
// when done.
type dir struct {
	fd   int
	name string // relative to the root, for messages
}

// openDir opens the directory at rel, a path that resolve returned, from
// the workspace's root one component at a time, never following a
// symbolic link (openat with O_NOFOLLOW|O_DIRECTORY); with create, missing
// directories are created (mode 0755 before the umask) on the way. A
// component that is a symbolic link fails with errLinkRace: resolve
// followed every link, so one met here was put there since. See the
// Workspace documentation.
func (w *Workspace) openDir(rel string, create bool) (*dir, error) {
	rc, err := w.rootFile.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	// Control keeps the root's descriptor open while it is duplicated: a
	// Close of the workspace meanwhile cannot hand its number to another
	// file.
	if cerr := rc.Control(func(root uintptr) {
		fd, err = openat(int(root), ".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	}); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return &dir{fd: fd, name: "."}, nil
	}
	var done []string
	for comp := range strings.SplitSeq(rel, "/") {
		if comp == "" || comp == "." || comp == ".." {
			_ = unix.Close(fd)
			return nil, fmt.Errorf("path %q is not clean: %w", rel, fs.ErrInvalid) // resolve never returns one
		}
		done = append(done, comp)
		next, err := openChild(fd, comp, create)
		_ = unix.Close(fd)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path.Join(done...), Err: err}
		}
		fd = next
	}
	return &dir{fd: fd, name: rel}, nil
}

// openChild opens the directory name in the directory parent without
// following a symbolic link; with create, it makes it first when it is
// missing.
func openChild(parent int, name string, create bool) (int, error) {
	for {
		fd, err := openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.ENOENT) && create:
			if err := unix.Mkdirat(parent, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
				return -1, err
			}
			create = false // once: a directory removed as soon as made is an error
			continue
		case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR):
			// O_NOFOLLOW refuses a link with ELOOP, O_DIRECTORY with
			// ENOTDIR on some systems: tell a link from a file, and
			// both from a directory put back since.
			var st unix.Stat_t
			if serr := unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW); serr == nil {
				switch st.Mode & unix.S_IFMT {
				case unix.S_IFLNK, unix.S_IFDIR: // a directory now: a link then
					return -1, errLinkRace
				}
			}
			return -1, unix.ENOTDIR
		}
		return -1, err
	}
}

// openat is unix.Openat with O_CLOEXEC, retried when interrupted.
func openat(dirfd int, name string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags|unix.O_CLOEXEC, perm)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// OpenFile opens the file name in d, as os.OpenFile does, but never
// following a symbolic link: a link fails with errLinkRace.
func (d *dir) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	fd, err := openat(d.fd, name, flag|unix.O_NOFOLLOW, uint32(perm.Perm()))
	if errors.Is(err, unix.ELOOP) {
		err = errLinkRace
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), path.Join(d.name, name)), nil
}

// typeOf returns the type bits (fs.ModeType) of the file name in d,
// without following a symbolic link; an error wrapping fs.ErrNotExist when
// there is nothing of that name.
func (d *dir) typeOf(name string) (fs.FileMode, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return 0, nil
	case unix.S_IFDIR:
		return fs.ModeDir, nil
	case unix.S_IFLNK:
		return fs.ModeSymlink, nil
	case unix.S_IFIFO:
		return fs.ModeNamedPipe, nil
	case unix.S_IFSOCK:
		return fs.ModeSocket, nil
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice, nil
	case unix.S_IFBLK:
		return fs.ModeDevice, nil
	}
	return fs.ModeIrregular, nil
}

// Remove removes the file name in d.
func (d *dir) Remove(name string) error {
	if err := unix.Unlinkat(d.fd, name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

// Rename renames the file from in d to to in d, replacing to (a link
// itself, not what it points to).
func (d *dir) Rename(from, to string) error {
	if err := unix.Renameat(d.fd, from, d.fd, to); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// Sync makes a rename in d durable. Some file systems cannot sync a
// directory; that is not an error.
func (d *dir) Sync() error {
	if err := unix.Fsync(d.fd); err != nil && !errors.Is(err, unix.EINVAL) {
		return &fs.PathError{Op: "sync", Path: d.name, Err: err}
	}
	return nil
}

// Close closes the directory.
func (d *dir) Close() error { return unix.Close(d.fd) }
