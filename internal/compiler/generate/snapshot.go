package generate

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// OldRevision parses and checks the older revision of a spec for fsmgen
// diff, as Revision does: source names it as ReadRevision reads it, src is
// its text. The Go packages its types come from are those of the module
// as it is now; when the revision does not check against them and source
// is a commit's (git:REV:PATH) — a package it imports was moved or
// removed since, say — it is checked again against the module as commit
// REV has it, extracted into a temporary directory that is removed before
// OldRevision returns. The first result is returned when that fails too.
func OldRevision(path, source string, src []byte) *Result {
	res := Revision(path, source, src)
	rest, isGit := strings.CutPrefix(source, "git:")
	if res.Machine != nil || !isGit {
		return res
	}
	rev, _, _ := strings.Cut(rest, ":")
	dir, err := os.MkdirTemp("", "fsmgen-revision-")
	if err != nil {
		return res
	}
	defer os.RemoveAll(dir)
	rel, err := extractCommit(rev, path, dir)
	if err != nil {
		return res
	}
	if again := Revision(filepath.Join(dir, rel), source, src); again.Machine != nil {
		return again
	}
	return res
}

// extractCommit writes the tree of commit rev of the git repository that
// holds the current directory into dir, and returns where path (relative
// to the current directory, or absolute) lies in it.
func extractCommit(rev, path, dir string) (string, error) {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("find the repository's top: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(strings.TrimSpace(string(top)), abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%s is outside the repository", path)
	}
	cmd := exec.Command("git", "archive", "--format=tar", rev)
	cmd.Dir = strings.TrimSpace(string(top))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("git archive %s: %w", rev, err)
	}
	xerr := untar(out, dir)
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return "", fmt.Errorf("git archive %s: %w: %s", rev, err, strings.TrimSpace(stderr.String()))
	}
	return rel, xerr
}

// untar writes the directories, files and symbolic links of the tar
// stream r into dir; entries that would land outside dir are refused.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the commit's tree: %w", err)
		}
		name := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, dir+string(filepath.Separator)) {
			return fmt.Errorf("the commit's tree has an entry outside it: %q", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(name, 0o755)
		case tar.TypeReg:
			err = writeEntry(name, tr, h.FileInfo().Mode().Perm())
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, name)
		}
		if err != nil {
			return fmt.Errorf("extract %s: %w", h.Name, err)
		}
	}
}

// writeEntry writes the file name from r, with mode perm.
func writeEntry(name string, r io.Reader, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	return errors.Join(err, f.Close())
}
