// Package atomicfile replaces files so that a reader, or the file system
// after a crash, sees either the old content or the new, never a mix.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"
)

// TempMark is what the name of every temporary file of Write holds, between
// the base name of the file it replaces and a random part:
// ".<base>.fsmgen-tmp-<random>". It is distinctive so that the agent's
// auto-commit can leave exactly these files out of its commits, not the
// user's own files named like ".notes.tmp-1".
const TempMark = ".fsmgen-tmp-"

// TempPattern is the pattern, for os.CreateTemp and filepath.Glob, of the
// temporary files Write creates to replace the file named base:
// ".<base>.fsmgen-tmp-*". A process killed during Write leaves one behind;
// remove them when no Write of the file can be running.
func TempPattern(base string) string { return "." + base + TempMark + "*" }

// IsTemp reports whether name, a base name, matches TempPattern("*"),
// the pattern of the temporary files of Write of any file (the pattern
// the agent's auto-commit leaves out of its commits).
func IsTemp(name string) bool {
	ok, _ := path.Match(TempPattern("*"), name)
	return ok
}

// Write replaces the file at path with data and mode perm: it writes a
// temporary file in the same directory, syncs it, renames it over path and
// syncs the directory. The directory must exist.
func Write(path string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, TempPattern(filepath.Base(path)))
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err // some file systems cannot sync directories; that is not an error
	}
	return nil
}
