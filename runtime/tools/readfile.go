package tools

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
)

// ReadFile reads at most limit bytes of the regular file name (a path
// relative to the workspace root) as the file tools reach files: beneath
// the root's open handle, refusing a path or symbolic link that leads
// outside, a file with several hard links, a special file and a masked
// file (one that holds the agent's API key). It returns what it read and
// the file's whole size; an error wrapping fs.ErrNotExist when there is
// no such file. It is meant for files the agent reads itself, such as a
// project's AGENTS.md.
func (w *Workspace) ReadFile(name string, limit int64) ([]byte, int64, error) {
	rel, err := w.resolve(name)
	if err != nil {
		return nil, 0, err
	}
	masked := w.maskedSet()
	abs := filepath.Join(w.dir, filepath.FromSlash(rel))
	if masked.Masked(abs) {
		return nil, 0, maskedError(name)
	}
	f, fi, err := openRegular(rootOpener{w.root}, rel, name, "read")
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
	if masked.Check(abs, data) {
		return nil, 0, maskedError(name)
	}
	return data, fi.Size(), nil
}

// MaskedPaths returns the workspace's files masked from the tools (those
// that hold the API key), absolute, for a sandboxed command's
// sandbox.Command.Masked.
func (w *Workspace) MaskedPaths() []string { return w.maskedSet().Paths() }
