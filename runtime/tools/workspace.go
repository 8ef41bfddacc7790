package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxSymlinkHops bounds how many symbolic links Resolve follows for one path,
// so a link loop fails instead of spinning.
const maxSymlinkHops = 64

// Workspace confines file access to one directory tree.
//
// Its root is an absolute path with every symbolic link resolved, so that a
// path inside the workspace can be recognised by a plain prefix comparison.
// A Workspace is immutable and safe for concurrent use.
//
// Confinement is checked when a path is resolved; it does not defend against
// a process that swaps a directory for a symbolic link between the check and
// the use (the agent's own bash tool could do that, and it is not confined
// to the workspace anyway).
type Workspace struct {
	root string
}

// NewWorkspace returns the workspace rooted at dir, which must be an existing
// directory. A relative dir is taken from the current working directory.
func NewWorkspace(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w; give an existing directory", dir, err)
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace %q is not a directory; give a directory", dir)
	}
	return &Workspace{root: root}, nil
}

// Root returns the workspace's root directory: absolute, with every symbolic
// link resolved.
func (w *Workspace) Root() string { return w.root }

// Resolve maps a tool's path argument to an absolute path inside the
// workspace, or fails with an error that says why.
//
// p must be relative to the workspace root. Absolute paths are refused, as
// are paths whose ".." elements climb above the root ("../x", "a/../../x").
// Every symbolic link met on the way is followed — a final link, a link in a
// parent directory, a dangling link, and the parent of a file that does not
// exist yet — and the path is refused if it leads outside the workspace.
// Links that stay inside are allowed. The result has every existing
// component resolved; components that do not exist yet are appended as given.
func (w *Workspace) Resolve(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path; give a path relative to the workspace root, e.g. \"main.go\" or \".\"")
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %q contains a NUL byte; give a plain relative path", p)
	}
	if filepath.IsAbs(p) {
		return "", fmt.Errorf("path %q is absolute; give a path relative to the workspace root", p)
	}
	clean := filepath.Clean(p)
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q leads outside the workspace; give a path inside it", p)
	}
	resolved, err := w.follow(clean)
	if err != nil {
		return "", fmt.Errorf("resolve path %q: %w", p, err)
	}
	if !w.contains(resolved) {
		return "", fmt.Errorf("path %q leads outside the workspace through a symbolic link; give a path inside it", p)
	}
	return resolved, nil
}

// follow resolves the clean relative path rel against the root, following
// symbolic links one component at a time. It tolerates components that do
// not exist (they are appended lexically) and never fails merely because a
// link leads outside: the caller checks the final result.
func (w *Workspace) follow(rel string) (string, error) {
	pending := splitPath(rel)
	cur := w.root
	hops := 0
	for len(pending) > 0 {
		comp := pending[0]
		pending = pending[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, comp)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || isNotDir(err):
			// Nothing there (yet): nothing to follow.
			cur = next
			continue
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink == 0:
			cur = next
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", fmt.Errorf("more than %d symbolic links (a link loop?)", maxSymlinkHops)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		pending = append(splitPath(target), pending...)
	}
	return cur, nil
}

// contains reports whether the absolute path p is the root or below it.
func (w *Workspace) contains(p string) bool {
	rel, err := filepath.Rel(w.root, p)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// rel returns p relative to the root, for messages; p itself when it is not
// inside the root.
func (w *Workspace) rel(p string) string {
	if r, err := filepath.Rel(w.root, p); err == nil && w.contains(p) {
		return filepath.ToSlash(r)
	}
	return p
}

// splitPath splits a path into its components.
func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

// isNotDir reports whether err says a path component is not a directory.
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }
