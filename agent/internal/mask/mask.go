// Package mask finds the files that hold a secret (the agent's API key,
// raw or in an encoding the redactor knows) in a workspace, so that
// neither the agent's file tools nor its sandboxed commands read them.
//
// The redactor (package redact) removes the secret from whatever reaches
// the model, in the forms it knows; a command that can read a file
// holding the key can write it in any other form (base32, reversed, one
// character per line), which no redactor knows. A file the model cannot
// read is one whose key it cannot re-encode. The agent scans the
// workspace when it starts ([Scan]); the file tools also look at what
// they read, and add to the set a file that has come to hold the key
// since ([Set.Check]); the bash tool hands the set's files to the
// sandbox, which shows commands a notice in their place.
//
// # What is scanned
//
// Every regular file of the workspace up to [Options.MaxFileBytes] (a
// larger one is listed by [Set.TooLarge], and read_file still looks at
// what it returns of it), but for git's object store (compressed: it
// cannot hold the key in a form looked for); and the file a symbolic link
// in the workspace leads to outside it (a command follows the link). A
// link to a directory outside is not followed. Directories that cannot be
// read are skipped. A file that holds a secret is masked under every name
// it has in the workspace, each of which is scanned.
//
// Not found: the secret in a file's name or a link's target (the
// redactor removes it from what commands print), in a file outside the
// workspace that no link of the workspace leads to (the sandbox hides the
// home directory; a key kept elsewhere is readable), and in a file that
// comes to hold it during the session before a file tool reads it (it is
// masked from commands from the next session, or once a file tool met
// it).
package mask

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/fsmgen/fsmgen/agent/internal/redact"
)

// DefaultMaxFileBytes is the largest file Scan reads unless told
// otherwise: 64 MiB.
const DefaultMaxFileBytes = 64 << 20

// chunk is how much of a file is searched at a time.
const chunk = 256 << 10

// Options configures [Scan]. The zero value gives the defaults.
type Options struct {
	// MaxFileBytes is the size of the largest file scanned; 0 means
	// DefaultMaxFileBytes.
	MaxFileBytes int64
	// Own tells the agent's own files (its event logs, its threads'
	// journals) by their first bytes (up to OwnHeadBytes of them): such a
	// file is masked whatever it holds, and noted as the agent's (see
	// Set.Own). nil looks for none.
	Own func(head []byte) bool
}

// OwnHeadBytes is how much of a file's start Options.Own is given.
const OwnHeadBytes = 64

// Set is the files that hold a secret: absolute paths, links resolved.
// The nil *Set masks nothing. A Set is safe for concurrent use.
type Set struct {
	root    string // absolute, links resolved
	forms   [][]byte
	overlap int // the longest form's length, less one

	mu       sync.Mutex
	files    map[string]bool
	own      map[string]bool // the files of files that are the agent's own
	tooLarge []string        // relative to root, sorted
	scanned  int
}

// New returns an empty set of files under root (a directory, absolute)
// holding one of the secrets: none when the redactor knows none.
func New(root string, secrets *redact.Redactor) *Set {
	s := &Set{root: filepath.Clean(root), files: map[string]bool{}, own: map[string]bool{}}
	for _, f := range secrets.Forms() {
		s.forms = append(s.forms, []byte(f))
		s.overlap = max(s.overlap, len(f)-1)
	}
	return s
}

// Scan returns the files of root, a directory, that hold a secret the
// redactor knows (see the package doc for what is scanned). With no
// secret, it reads nothing. It stops with ctx.
func Scan(ctx context.Context, root string, secrets *redact.Redactor, opt Options) (*Set, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("scan %s for files holding the API key: %w", root, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	s := New(abs, secrets)
	if len(s.forms) == 0 && opt.Own == nil {
		return s, nil
	}
	limit := opt.MaxFileBytes
	if limit <= 0 {
		limit = DefaultMaxFileBytes
	}
	buf := make([]byte, chunk+s.overlap)
	err = filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		switch {
		case err != nil && p == s.root:
			return err
		case err != nil:
			return nil // unreadable: skipped (a directory is not entered)
		case d.IsDir():
			if d.Name() == "objects" && strings.Contains(p, string(filepath.Separator)+".git"+string(filepath.Separator)) {
				return fs.SkipDir
			}
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			s.scanLink(p, limit, buf)
			return nil
		case !d.Type().IsRegular():
			return nil
		}
		if !s.scanFile(p, limit, buf, opt.Own) {
			rel, _ := filepath.Rel(s.root, p)
			s.tooLarge = append(s.tooLarge, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan %s for files holding the API key: %w", s.root, err)
	}
	slices.Sort(s.tooLarge)
	return s, nil
}

// scanLink scans the regular file outside the root that the link at p
// leads to, if it is not too large.
func (s *Set) scanLink(p string, limit int64, buf []byte) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil || within(real, s.root) {
		return // dangling, or a file of the workspace, scanned as such
	}
	s.scanFile(real, limit, buf, nil)
}

// scanFile adds the file at p (absolute) if it holds a secret; it
// reports false when the file is larger than limit, and was not read. A
// file that cannot be read, or is no regular file, is skipped.
func (s *Set) scanFile(p string, limit int64, buf []byte, own func([]byte) bool) bool {
	// O_NONBLOCK: a file swapped for a FIFO since it was listed does not
	// block the scan; O_NOFOLLOW: nor is a link followed.
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_NOCTTY, 0)
	if err != nil {
		return true
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil || !fi.Mode().IsRegular():
		return true
	}
	if own != nil {
		head := buf[:min(len(buf), OwnHeadBytes)]
		n, _ := io.ReadFull(f, head)
		if own(head[:n]) {
			s.addOwn(p)
			return true
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return true
		}
	}
	if fi.Size() > limit {
		return false
	}
	if len(s.forms) == 0 {
		return true
	}
	s.scanned++
	if hit, _ := s.holds(f, buf); hit {
		s.add(p)
	}
	return true
}

// holds reports whether r holds a secret, reading it through buf (whose
// size is at least overlap+1), so that a secret across two reads is found.
func (s *Set) holds(r io.Reader, buf []byte) (bool, error) {
	kept := 0
	for {
		n, err := io.ReadFull(r, buf[kept:])
		data := buf[:kept+n]
		if s.contains(data) {
			return true, nil
		}
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return false, nil
		case err != nil:
			return false, err
		}
		kept = copy(buf, data[max(0, len(data)-s.overlap):])
	}
}

// contains reports whether b holds a secret.
func (s *Set) contains(b []byte) bool {
	for _, f := range s.forms {
		if bytes.Contains(b, f) {
			return true
		}
	}
	return false
}

// Holds reports whether r, read to its end, holds a secret, in memory of
// the order of a few hundred KiB whatever its size. A nil Set finds none.
func (s *Set) Holds(r io.Reader) (bool, error) {
	if s == nil || len(s.forms) == 0 {
		return false, nil
	}
	return s.holds(r, make([]byte, chunk+s.overlap))
}

// Check adds the file at p (absolute) to the set when content, what was
// read of it, holds a secret, and reports whether p is masked.
func (s *Set) Check(p string, content []byte) bool {
	if s == nil {
		return false
	}
	if s.contains(content) {
		s.add(p)
		return true
	}
	return s.Masked(p)
}

// Add adds the file at p (absolute) to the set.
func (s *Set) Add(p string) {
	if s != nil {
		s.add(p)
	}
}

// add adds p, with its links resolved, to the set.
func (s *Set) add(p string) { s.addAs(p, false) }

// addOwn adds p, with its links resolved, to the set, as one of the
// agent's own files.
func (s *Set) addOwn(p string) { s.addAs(p, true) }

// addAs adds p, with its links resolved, to the set; own notes it as one
// of the agent's own files.
func (s *Set) addAs(p string, own bool) {
	p = filepath.Clean(p)
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[p] = true
	if own {
		s.own[p] = true
	}
}

// AddOwn adds the file at p (absolute) to the set as one of the agent's
// own files (a thread's lock file, say, which nothing tells by its
// content).
func (s *Set) AddOwn(p string) {
	if s != nil {
		s.addOwn(p)
	}
}

// Own reports whether the file at p (absolute, links resolved, as Has
// takes it) is masked as one of the agent's own files rather than for a
// secret it holds.
func (s *Set) Own(p string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.own[p]
}

// Secret reports whether content holds a secret: a file it was read
// from is to be added to the set (see Add). A nil Set finds none.
func (s *Set) Secret(content []byte) bool {
	return s != nil && s.contains(content)
}

// Has reports whether the file at p (absolute, clean, with no symbolic
// link on its way: the file tools resolve their paths first) is masked.
// Unlike Masked it does not resolve p's links, which costs a lookup of
// every directory on its way.
func (s *Set) Has(p string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.files[p]
}

// Masked reports whether the file at p (absolute) is masked.
func (s *Set) Masked(p string) bool {
	if s.Empty() {
		return false
	}
	p = filepath.Clean(p)
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.files[p]
}

// Empty reports whether the set has no file: then no path needs to be
// looked up in it. A nil Set is empty.
func (s *Set) Empty() bool {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.files) == 0
}

// Paths returns the masked files, absolute and sorted.
func (s *Set) Paths() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.files))
	for p := range s.files {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Names returns the masked files for people: relative to the root, slash-
// separated, and absolute for those outside it; sorted.
func (s *Set) Names() []string {
	var out []string
	for _, p := range s.Paths() {
		if rel, err := filepath.Rel(s.root, p); err == nil && within(p, s.root) {
			p = filepath.ToSlash(rel)
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// OwnNames returns the masked files that are the agent's own, as Names
// does.
func (s *Set) OwnNames() []string {
	var out []string
	for _, n := range s.Names() {
		p := n
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.root, filepath.FromSlash(n))
		}
		if s.Own(p) {
			out = append(out, n)
		}
	}
	return out
}

// TooLarge returns the files Scan did not read because they are larger
// than Options.MaxFileBytes, relative to the root, sorted.
func (s *Set) TooLarge() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.tooLarge)
}

// Scanned returns how many files Scan read.
func (s *Set) Scanned() int {
	if s == nil {
		return 0
	}
	return s.scanned
}

// within reports whether p is root or lies under it; both are clean and
// absolute.
func within(p, root string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+string(filepath.Separator))
}
