// Package atomicfile replaces files so that a reader, or the file system
// after a crash, sees either the old content or the new, never a mix.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// TempPattern is the pattern, for os.CreateTemp and filepath.Glob, of the
// temporary files Write creates to replace the file named base. A process
// killed during Write leaves one behind; remove them when no Write of
// the file can be running.
func TempPattern(base string) string { return "." + base + ".tmp-*" }

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
