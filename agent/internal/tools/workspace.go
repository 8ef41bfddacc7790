package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/fsmgen/fsmgen/agent/internal/mask"
)

// maxSymlinkHops bounds how many symbolic links resolve follows for one path,
// so a link loop fails instead of spinning.
const maxSymlinkHops = 64

// Workspace confines file access to one directory tree.
//
// It keeps the root directory open (an [os.Root]) and reaches every file
// beneath that open handle: each path is walked from the root one
// component at a time by the kernel (openat), and a symbolic link or ".."
// that would lead outside is refused at the moment of use. A process that
// swaps a directory for a symbolic link while a file tool runs (the agent's
// own bash tool could) therefore cannot make the tool read or write outside
// the workspace; the tool fails instead. Symbolic links that stay inside
// keep working, relative ones through the open handle and absolute ones
// that point inside the root by being rewritten to relative paths first.
//
// # Writing, and .git
//
// os.Root keeps a tool inside the workspace, but not out of .git, which is
// inside it: a directory swapped for a symbolic link to .git between the
// check of a path and its use would be followed. So edit_file, which
// refuses to write under .git, reaches the directory it writes in
// differently ([Workspace.openDir]): the path is first resolved, every
// symbolic link followed as above, and checked for a ".git" component;
// then the directory it names is opened from the root's descriptor one
// component at a time with openat(O_NOFOLLOW|O_DIRECTORY), creating the
// missing ones with mkdirat, and every file operation is made relative to
// that descriptor, never following a link. The directory written in is
// therefore the one at the checked path, whatever a concurrent command
// does: a component that became a link meanwhile makes the edit fail
// (the tool says so) instead of being followed. Links in the path keep
// working when nothing changes them, because the path opened is the one
// they resolved to. (A directory renamed, not linked, into place is not
// detected; .git itself cannot be renamed by the sandboxed bash tool, to
// which it is a read-only mount, and nothing can be renamed out of it.)
//
// The component walk is used rather than openat2(RESOLVE_BENEATH|
// RESOLVE_NO_SYMLINKS), which would refuse the same links in one call:
// the walk also creates missing directories, with no window between the
// creation and the opening in which a link could be put in their place,
// and it needs no kernel newer than openat's.
//
// A Workspace is safe for concurrent use. Close it when the agent stops.
type Workspace struct {
	dir      string   // absolute, every symbolic link resolved
	root     *os.Root // dir, held open
	rootFile *os.File // dir, held open: the start of openDir's walks
	masked   atomic.Pointer[mask.Set]
	// lookups counts the system calls of path resolution (see walker),
	// for the tests that check that it costs O(n).
	lookups atomic.Int64
}

// SetMasked sets the files of the workspace that hold the agent's API key
// (see package mask): the file tools refuse to read or change them, and
// add to the set a file they find to hold the key; bash reads a notice in
// their place. Call it before the tools run.
func (w *Workspace) SetMasked(s *mask.Set) { w.masked.Store(s) }

// maskedSet returns the set of SetMasked; nil masks nothing.
func (w *Workspace) maskedSet() *mask.Set { return w.masked.Load() }

// maskedError is the error of a file tool that met the masked file name,
// at abs (absolute, links resolved): the file holds the agent's API key,
// or is one of the agent's own files. abs is "" for a file just found to
// hold the key.
func (w *Workspace) maskedError(name, abs string) error {
	if abs != "" && w.maskedSet().Own(abs) {
		return fmt.Errorf("%q is masked: it is one of the agent's own files (an event log or a thread's journal, which hold whole conversations), so the file tools and bash can neither read nor change it (bash reads a notice in its place); "+
			"leave it as it is", name)
	}
	return fmt.Errorf("%q is masked: it holds the agent's API key, so the file tools and bash can neither read nor change it (bash reads a notice in its place); "+
		"leave it as it is, and ask the user if you need something from it", name)
}

// NewWorkspace opens the workspace rooted at dir, which must be an existing
// directory. A relative dir is taken from the current working directory.
// The caller closes the workspace when done with it.
func NewWorkspace(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w; give an existing directory", dir, err)
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace %q is not a directory; give a directory", dir)
	}
	root, err := os.OpenRoot(resolved)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	rootFile, err := root.Open(".")
	if err != nil {
		_ = root.Close()
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	return &Workspace{dir: resolved, root: root, rootFile: rootFile}, nil
}

// Root returns the workspace's root directory: absolute, with every symbolic
// link resolved as it was when the workspace was opened. The file tools do
// not use this path; the bash tool runs there.
func (w *Workspace) Root() string { return w.dir }

// Close releases the handle on the root directory. The file tools fail
// once their workspace is closed.
func (w *Workspace) Close() error { return errors.Join(w.rootFile.Close(), w.root.Close()) }

// resolve maps a tool's path argument to a clean, slash-separated path
// relative to the workspace root, or fails with an error that says why.
//
// p must be relative to the workspace root. Absolute paths are refused, as
// are paths whose ".." elements climb above the root ("../x", "a/../../x").
// Every symbolic link met on the way is followed — a final link, a link in a
// parent directory, a dangling link, and the parent of a file that does not
// exist yet — and the path is refused if it leads outside the workspace.
// Components that do not exist yet are appended as given, and so is
// everything below the first of them, without a lookup. Each component is
// looked up once, from the directory reached before it (see [walker]): n
// components cost O(n) system calls. A path of more than MaxPathDepth
// components is refused; so is one that leads through more than
// maxSymlinkHops links. It stops, with ctx's error, once ctx is done.
//
// The result names the file the tool means, for messages and for the
// ".git" check; it is not what keeps the tool inside the workspace: the
// caller opens it through the root, which refuses an escape made between
// the resolution and the use.
func (w *Workspace) resolve(ctx context.Context, p string) (string, error) {
	clean, err := cleanRel(p)
	if err != nil {
		return "", err
	}
	k := w.newWalker(ctx)
	defer k.done()
	if err := k.walk(clean); err != nil {
		if ctx.Err() != nil {
			return "", err
		}
		return "", pathError("resolve path", p, err)
	}
	return k.path(), nil
}

// cleanRel checks a tool's path argument, which must be relative to the
// workspace root and stay beneath it lexically, and returns it clean and
// slash-separated.
func cleanRel(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path; give a path relative to the workspace root, e.g. \"main.go\" or \".\"")
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %q contains a NUL byte; give a plain relative path", p)
	}
	if filepath.IsAbs(p) {
		return "", fmt.Errorf("path %q is absolute; give a path relative to the workspace root", p)
	}
	clean := filepath.ToSlash(filepath.Clean(p))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("path %q leads outside the workspace; give a path inside it", p)
	}
	return clean, nil
}

// errOutside says that a symbolic link leads outside the workspace.
var errOutside = errors.New("a symbolic link leads outside the workspace")

// errChanging says that a path kept changing while it was resolved.
var errChanging = errors.New("it kept changing while it was looked up")

// errLinkRace says that a directory on the way to a file edit_file writes,
// or the file, became a symbolic link after the path was checked.
var errLinkRace = errors.New("a part of the path was replaced by a symbolic link while edit_file ran")

// maxRetries bounds how many times resolve looks again at a component that
// changed between two looks.
const maxRetries = 100

// pathError turns an error met on the way to the file name into one the
// LLM can act on: escapes and link loops get their own messages.
func pathError(verb, name string, err error) error {
	switch {
	case errors.Is(err, errOutside) || isEscape(err):
		return fmt.Errorf("path %q leads outside the workspace through a symbolic link; give a path inside it", name)
	case errors.Is(err, errLinkRace):
		return fmt.Errorf("%s %q: %w (another command is changing it?); edit_file writes only in the directory whose path it checked, so nothing was changed: "+
			"retry when the command is done, or give the link's target path", verb, name, errLinkRace)
	case errors.Is(err, errChanging):
		return fmt.Errorf("%s %q: %w (another command is renaming or replacing it?); nothing was changed: retry when the command is done", verb, name, errChanging)
	case errors.Is(err, errTooDeep):
		return fmt.Errorf("path %q: %w (counted once its symbolic links are followed), and the file tools take paths of at most %d components; give a shorter path, or use bash for deeper ones", shorten(name), errTooDeep, MaxPathDepth)
	case errors.Is(err, syscall.ELOOP):
		return fmt.Errorf("path %q: more than %d symbolic links (a link loop?); give a path without the loop", name, maxSymlinkHops)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%s %q: a part of its directory path is a file, not a directory (or another command replaced it while the tool ran); check the path with list_files", verb, name)
	}
	return fmt.Errorf("%s %q: %w", verb, name, reason(err))
}

// shorten returns p, or its start and end with the number of bytes left
// out between them when it is long: a message quotes it whole only when
// it is short.
func shorten(p string) string {
	const keep = 60
	if len(p) <= 2*keep+40 {
		return p
	}
	head, tail := p[:keep], p[len(p)-keep:]
	return fmt.Sprintf("%s…(%d bytes)…%s", strings.ToValidUTF8(head, ""), len(p)-2*keep, strings.ToValidUTF8(tail, ""))
}

// reason is err without the path an fs.PathError adds (a path relative to
// the root that the caller names already), and with os.Root's refusal of
// an escape in the workspace's words.
func reason(err error) error {
	if isEscape(err) {
		return errOutside
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// isEscape reports whether err is os.Root refusing a path that leads
// outside it. The os package does not export that error, only its text.
func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// underGit reports whether any component of the slash-separated path p is
// ".git", in any case (case-insensitive file systems treat ".GIT" alike).
func underGit(p string) bool {
	for c := range strings.SplitSeq(p, "/") {
		if strings.EqualFold(c, ".git") {
			return true
		}
	}
	return false
}

// linkCount returns the number of hard links of the file fi describes, or
// 1 when the system does not say.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// opener opens files and says what they are: a rootOpener, or a *dir
// for edit_file.
type opener interface {
	OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error)
	// typeOf returns the type bits (fs.ModeType) of the file name, not
	// following a final symbolic link.
	typeOf(name string) (fs.FileMode, error)
}

// rootOpener is an os.Root as an opener.
type rootOpener struct{ *os.Root }

// typeOf implements opener.
func (r rootOpener) typeOf(name string) (fs.FileMode, error) {
	fi, err := r.Lstat(name)
	if err != nil {
		return 0, err
	}
	return fi.Mode().Type(), nil
}

// openRegular opens the regular file at rel (resolved from the argument
// name) for reading, beneath r, and returns it with its status
// taken from the open descriptor. It refuses directories, special files
// (without blocking on a FIFO) and files with more than one hard link: a
// hard link's other names may lie outside the workspace, and nothing on
// the path to it says so. verb ("read", "edit") goes into the messages.
func openRegular(r opener, rel, name, verb string) (*os.File, fs.FileInfo, error) {
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fs.ErrNotExist
		}
		if errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.EOPNOTSUPP) {
			// A socket, or a device with nothing behind it, cannot be
			// opened: say what it is.
			if m, terr := r.typeOf(rel); terr == nil && m&(fs.ModeSocket|fs.ModeDevice) != 0 {
				return nil, nil, fmt.Errorf("%q is %s, not a regular file; only regular files can be %s", name, special(m), pastTense(verb))
			}
		}
		return nil, nil, pathError(verb, name, err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("%s %q: %w", verb, name, err)
	}
	switch {
	case fi.IsDir():
		_ = f.Close()
		return nil, nil, errIsDir
	case !fi.Mode().IsRegular():
		_ = f.Close()
		return nil, nil, fmt.Errorf("%q is %s, not a regular file; only regular files can be %s", name, special(fi.Mode()), pastTense(verb))
	}
	if n := linkCount(fi); n > 1 {
		_ = f.Close()
		return nil, nil, fmt.Errorf("%q has %d hard links; a hard link can point outside the workspace, so it is not %s", name, n, pastTense(verb))
	}
	return f, fi, nil
}

// special names the kind of a file that is neither regular nor a
// directory, for messages.
func special(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return fmt.Sprintf("a special file (%s)", m.Type())
}

// errIsDir is openRegular's error for a directory; callers word it.
var errIsDir = errors.New("is a directory")

// pastTense returns "read" or "edited" for the verbs of openRegular.
func pastTense(verb string) string {
	if strings.HasSuffix(verb, "t") {
		return verb + "ed"
	}
	return verb
}
