package tools

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// MaxPathDepth is the most components a path the file tools take may
// have, as given and once its symbolic links are followed: a deeper one is
// refused with an error that says so. A path of the system's PATH_MAX
// (4,096 bytes) has at most 2,048 components; no project's tree comes
// near 1,024 directories, and the bound keeps what one call can make the
// agent walk small (see [walker]).
const MaxPathDepth = 1024

// dirFlags open a directory a walker passes through: O_PATH, which needs
// no read permission (searching a directory needs only its execute bit,
// as the kernel's own lookup does) and never follows a final link.
const dirFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW

// errTooDeep says that a path has more than MaxPathDepth components.
var errTooDeep = fmt.Errorf("it has more than %d components", MaxPathDepth)

// walker resolves a path beneath the workspace root one component at a
// time, following symbolic links as [Workspace.resolve] documents, and
// looks each component up once, relative to the directory reached so far
// (fstatat, readlinkat and openat on a descriptor it holds open), never
// by walking the path again from the root. Resolving a path of n
// components costs O(n) system calls: a component that does not exist
// ends the lookups, since nothing can exist below it (the rest is
// appended as given), and only a ".." in a link's target makes the walker
// open its directory again from the root, once for each run of "..".
// Every component checks the context, so a call that was cancelled or
// timed out stops at once.
//
// The walker does not confine by itself: what it returns names the file
// meant, and the caller opens it through the root (see resolve).
type walker struct {
	w   *Workspace
	ctx context.Context
	// cur holds the components resolved so far, none a symbolic link
	// when it was looked at.
	cur []string
	// missing is the index in cur of the first component that does not
	// exist or is no directory, -1 when there is none: nothing below it
	// is looked up.
	missing int
	// fd is the directory cur names, open, when missing is -1; -1 when it
	// is not open (yet, or again after a "..").
	fd            int
	hops, retries int
	queue         [][]string // step's, kept for the next step
	one           [1]string  // the component step was given
	// lookups counts the system calls made, for the tests that check
	// that a walk costs O(n).
	lookups int
}

// newWalker returns a walker at the root; call done when done with it.
func (w *Workspace) newWalker(ctx context.Context) *walker {
	return &walker{w: w, ctx: ctx, missing: -1, fd: -1}
}

// done closes the walker and adds its lookups to the workspace's count.
func (k *walker) done() {
	k.close()
	k.w.lookups.Add(int64(k.lookups))
}

// close closes the walker's directory.
func (k *walker) close() {
	if k.fd >= 0 {
		_ = unix.Close(k.fd)
		k.fd = -1
	}
}

// path returns the path resolved so far, slash-separated and relative to
// the root ("." for the root).
func (k *walker) path() string {
	if len(k.cur) == 0 {
		return "."
	}
	return strings.Join(k.cur, "/")
}

// dir returns the directory the path resolved so far names, open, or
// false when it does not exist or is no directory. The walker keeps it:
// it is valid until the next step or close. given is the path given that
// led there: its name when no link was followed (which saves building it
// again at every step).
func (k *walker) dir(given string) (*dir, bool, error) {
	if k.missing >= 0 {
		return nil, false, nil
	}
	if err := k.open(); err != nil {
		return nil, false, err
	}
	name := given
	if k.hops > 0 {
		name = k.path()
	}
	return &dir{fd: k.fd, name: name}, true, nil
}

// walk resolves the components of rel, a clean relative path.
func (k *walker) walk(rel string) error {
	if rel == "." {
		return nil
	}
	if strings.Count(rel, "/") >= MaxPathDepth {
		return errTooDeep
	}
	for comp := range strings.SplitSeq(rel, "/") {
		if err := k.step(comp); err != nil {
			return err
		}
	}
	return nil
}

// step resolves one component of the path given, and the targets of the
// symbolic links it leads through.
func (k *walker) step(comp string) error {
	// queue holds what is left to resolve, innermost link's target last;
	// it reuses the walker's, so that a component without links costs no
	// allocation.
	k.one[0] = comp
	queue := append(k.queue[:0], k.one[:])
	defer func() { k.queue = queue[:0] }()
	for len(queue) > 0 {
		top := &queue[len(queue)-1]
		if len(*top) == 0 {
			queue = queue[:len(queue)-1]
			continue
		}
		c := (*top)[0]
		*top = (*top)[1:]
		if err := k.ctx.Err(); err != nil {
			return err
		}
		switch c {
		case "", ".":
			continue
		case "..":
			if len(k.cur) == 0 {
				return errOutside // only a link's target can climb here: the path given is clean
			}
			k.cur = k.cur[:len(k.cur)-1]
			if k.missing >= len(k.cur) {
				k.missing = -1
			}
			k.close() // it named the directory left; opened again when needed
			continue
		}
		if len(k.cur) >= MaxPathDepth {
			return errTooDeep
		}
		if k.missing >= 0 {
			k.cur = append(k.cur, c) // nothing below a missing component exists
			continue
		}
		if err := k.open(); err != nil {
			return err
		}
		var st unix.Stat_t
		k.lookups++
		err := unix.Fstatat(k.fd, c, &st, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR):
			k.below(c)
			continue
		case err != nil:
			return err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			k.lookups++
			fd, err := openat(k.fd, c, dirFlags, 0)
			switch {
			case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR):
				// Not the directory it was a moment ago: another command
				// is changing it. Look at it again, a bounded number of
				// times.
				if err := k.again(top, c); err != nil {
					return err
				}
				continue
			case err != nil:
				return err
			}
			_ = unix.Close(k.fd)
			k.fd = fd
			k.cur = append(k.cur, c)
		case unix.S_IFLNK:
			k.hops++
			if k.hops > maxSymlinkHops {
				return syscall.ELOOP
			}
			k.lookups++
			target, err := readlinkat(k.fd, c)
			if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
				k.hops-- // no longer a link, or gone, since fstatat
				if err := k.again(top, c); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return err
			}
			parts, err := k.jump(target)
			if err != nil {
				return err
			}
			queue = append(queue, parts)
		default:
			k.below(c) // a file: nothing is below it
		}
	}
	return nil
}

// below appends c, which does not exist or is no directory: nothing
// below it is looked up.
func (k *walker) below(c string) {
	k.close()
	k.missing = len(k.cur)
	k.cur = append(k.cur, c)
}

// again puts c back in front of top, to be looked at again, unless it
// changed too often.
func (k *walker) again(top *[]string, c string) error {
	if k.retries++; k.retries > maxRetries {
		return errChanging
	}
	*top = append([]string{c}, *top...)
	return nil
}

// jump returns the components of a symbolic link's target to resolve in
// place of the link. An absolute target that leads inside the root is
// taken as the relative path it stands for, from the root; one that leads
// outside fails with errOutside.
func (k *walker) jump(target string) ([]string, error) {
	target = filepath.ToSlash(target)
	if path.IsAbs(target) {
		// os.Root refuses absolute links; one that points inside the
		// root is followed as the relative path it stands for.
		r, err := filepath.Rel(k.w.dir, filepath.FromSlash(target))
		if err != nil || r == ".." || strings.HasPrefix(filepath.ToSlash(r), "../") || filepath.IsAbs(r) {
			return nil, errOutside
		}
		k.cur = k.cur[:0]
		k.close()
		target = filepath.ToSlash(r)
	}
	return strings.Split(target, "/"), nil
}

// open opens the directory cur names, from the root, when it is not open:
// after a ".." or at the start. Every component is a directory when it
// was looked at; one that is not now was changed meanwhile.
func (k *walker) open() error {
	if k.fd >= 0 {
		return nil
	}
	fd, err := k.w.dupRoot()
	if err != nil {
		return err
	}
	for _, c := range k.cur {
		if err := k.ctx.Err(); err != nil {
			_ = unix.Close(fd)
			return err
		}
		k.lookups++
		next, err := openat(fd, c, dirFlags, 0)
		_ = unix.Close(fd)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return errChanging
		}
		if err != nil {
			return err
		}
		fd = next
	}
	k.fd = fd
	return nil
}

// dupRoot returns a new descriptor of the workspace's root directory.
func (w *Workspace) dupRoot() (int, error) {
	rc, err := w.rootFile.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	// Control keeps the root's descriptor open while it is duplicated: a
	// Close of the workspace meanwhile cannot hand its number to another
	// file.
	if cerr := rc.Control(func(root uintptr) {
		fd, err = openat(int(root), ".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	}); cerr != nil {
		return -1, cerr
	}
	return fd, err
}

// readlinkat returns the target of the symbolic link name in dirfd.
func readlinkat(dirfd int, name string) (string, error) {
	for size := 4096; ; size *= 4 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return "", err
		}
		if n < size || size >= 1<<16 {
			return string(buf[:n]), nil
		}
	}
}
