package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
)

// ReadFile reads at most limit bytes of the regular file name (a path
// relative to the workspace root) as the file tools reach files: beneath
// the root's open handle, refusing a path or symbolic link that leads
// outside, a file with several hard links, a special file and a masked
// file (one that holds the agent's API key). It returns what it read and
// the file's whole size; an error wrapping fs.ErrNotExist when there is
// no such file. It is meant for files the agent reads itself, such as a
// project's AGENTS.md. It stops, with ctx's error, once ctx is done.
func (w *Workspace) ReadFile(ctx context.Context, name string, limit int64) ([]byte, int64, error) {
	return w.readFile(ctx, name, name, limit)
}

// readFile is ReadFile of the path p, named label in messages.
func (w *Workspace) readFile(ctx context.Context, p, label string, limit int64) ([]byte, int64, error) {
	rel, err := w.resolve(ctx, p)
	if err != nil {
		return nil, 0, err
	}
	abs := func() string { return filepath.Join(w.dir, filepath.FromSlash(rel)) }
	return w.readRegular(rootOpener{w.root}, rel, abs, label, limit)
}

// readRegular reads at most limit bytes of the regular file rel beneath r
// as ReadFile does; abs returns its absolute path, links resolved (for the
// masked files: asked only when there are some, or it is one), and name
// names it in messages.
func (w *Workspace) readRegular(r opener, rel string, abs func() string, name string, limit int64) ([]byte, int64, error) {
	masked := w.maskedSet()
	if !masked.Empty() && masked.Has(abs()) {
		return nil, 0, w.maskedError(name, abs())
	}
	f, fi, err := openRegular(r, rel, name, "read")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, 0, fmt.Errorf("read %q: %w", name, fs.ErrNotExist)
	case errors.Is(err, errIsDir):
		return nil, 0, fmt.Errorf("%q is a directory, not a file", name)
	case err != nil:
		return nil, 0, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max(limit, 0)))
	if err != nil {
		return nil, 0, fmt.Errorf("read %q: %w", name, err)
	}
	if masked.Secret(data) {
		masked.Add(abs())
		return nil, 0, w.maskedError(name, "")
	}
	return data, fi.Size(), nil
}

// Along calls fn with each directory on the way to the directory p (a
// path relative to the workspace root), from the root's child down to p
// itself, as long as they exist: prefix is the part of p that names it, as given
// once cleaned ("a", "a/b", ...), and d reads its files. It stops at the
// first prefix that does not exist, is no directory or leads outside the
// workspace (those are no error: there is nothing there to read), when fn
// returns false, and when ctx is done (with ctx's error). Symbolic links
// on the way are followed as the file tools follow them.
//
// Each directory is looked up once, from the one before it, and held
// open while fn runs: a path of n components costs O(n) system calls,
// where reading a file in each directory by its whole path would cost
// O(n²). It is meant for the instructions files (AGENTS.md) of every
// directory a tool's path leads through. d is valid only until fn
// returns.
func (w *Workspace) Along(ctx context.Context, p string, fn func(prefix string, d *Dir) bool) error {
	clean, err := cleanRel(p)
	if err != nil {
		return err
	}
	if clean == "." {
		return nil
	}
	if strings.Count(clean, "/") >= MaxPathDepth {
		return pathError("walk", p, errTooDeep)
	}
	k := w.newWalker(ctx)
	defer k.done()
	links := maxSymlinkHops // files read through a link, at a cost of O(n) each
	for off := 0; off < len(clean); {
		comp, _, _ := strings.Cut(clean[off:], "/")
		end := off + len(comp)
		err := k.step(comp)
		if err == nil {
			var d *dir
			var ok bool
			if d, ok, err = k.dir(clean[:end]); err == nil && (!ok || !fn(clean[:end], &Dir{w: w, ctx: ctx, d: d, prefix: clean[:end], links: &links})) {
				return nil
			}
		}
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return err
		case errors.Is(err, errOutside) || isEscape(err):
			return nil
		default:
			return pathError("walk", p, err)
		}
		off = end + 1
	}
	return nil
}

// Dir is a directory of the workspace that [Workspace.Along] reached,
// held open.
type Dir struct {
	w      *Workspace
	ctx    context.Context
	d      *dir
	prefix string
	links  *int // how many more files may be read through a link
}

// ReadFile reads at most limit bytes of the regular file name (one
// component) of the directory, with the refusals of
// [Workspace.ReadFile]; fs.ErrNotExist itself when there is no such file.
// A name that is a symbolic link is followed as the
// file tools follow it, for a few of them in one walk: each costs a walk
// from the root.
func (d *Dir) ReadFile(name string, limit int64) ([]byte, int64, error) {
	// The file's path is made only when it is needed: a missing file,
	// the common case, costs no copy of its directory's path.
	label := func() string { return d.prefix + "/" + name }
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return nil, 0, fmt.Errorf("read %q: %q is not a file name: %w", label(), name, fs.ErrInvalid)
	}
	if err := d.ctx.Err(); err != nil {
		return nil, 0, err
	}
	d.w.lookups.Add(2) // typeOf, and the open
	m, err := d.d.typeOf(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, 0, fs.ErrNotExist
	case err != nil:
		return nil, 0, pathError("read", label(), err)
	case m&fs.ModeSymlink == 0:
		abs := func() string { return filepath.Join(d.w.dir, filepath.FromSlash(d.d.name), name) }
		data, size, err := d.w.readRegular(d.d, name, abs, label(), limit)
		if !errors.Is(err, errLinkRace) {
			return data, size, err
		}
		// It became a link since typeOf: follow it as one.
	}
	if *d.links <= 0 {
		return nil, 0, fmt.Errorf("read %q: it is a symbolic link, and more than %d were met on this path; give the file itself", label(), maxSymlinkHops)
	}
	*d.links--
	return d.w.readFile(d.ctx, d.d.name+"/"+name, label(), limit)
}

// MaskedPaths returns the workspace's files masked from the tools (those
// that hold the API key), absolute, for a sandboxed command's
// sandbox.Command.Masked.
func (w *Workspace) MaskedPaths() []string { return w.maskedSet().Paths() }

// ReadDir lists the directory name (a path relative to the workspace
// root) as the file tools reach it: beneath the root's open handle, a
// path or symbolic link that leads outside refused. Its entries are
// sorted by name; symbolic links in it are listed, not followed. It is
// meant for what the agent lists itself (the project's commands, the
// completion of a path the user types).
func (w *Workspace) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	rel, err := w.resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(w.root.FS(), rel)
	if err != nil {
		return nil, pathError("list", name, err)
	}
	return entries, nil
}
