// Package instructions loads the instructions a user and a project give
// the coding agent: a user-level AGENTS.md, the AGENTS.md at the
// workspace root, and those of the directories the agent works in (with
// CLAUDE.md read where a directory has no AGENTS.md).
//
// The user's file and the root's are loaded when the agent starts and go
// into the system prompt ([Set.System]), which stays the same for the
// whole session, so that a provider's prompt cache keeps it. A
// subdirectory's files are loaded when a tool first touches a path in it
// ([Set.ForPath]); their text is appended to that tool's result, marked as
// instructions, rather than changing the system prompt, which would
// invalidate the cache of every later request. Both reach the event log
// (the system prompt in its header, a tool result in its event), so a
// session replays exactly. A directory's instructions are sent again when
// the conversation no longer holds them: what was sent is what the
// conversation holds ([Set.Holding], told the conversation before each
// round of tools), so an undo that cut the result that brought them, or a
// compaction that summarised it, makes the next tool under the directory
// bring them again, in a live session as in a resumed one.
//
// The workspace's files are read through the workspace handle
// ([tools.Workspace.ReadFile]): a path or symbolic link that leads outside
// it is refused, and so is a file holding the API key. Every file is cut at
// a size limit, all of them together at another; what is cut is said, in
// the text the model reads and in [Set.Files]. Everything is redacted of
// the agent's secrets.
package instructions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// Defaults of [Options].
const (
	DefaultMaxFileBytes  = 32 << 10
	DefaultMaxTotalBytes = 64 << 10
)

// DefaultNames are the file names looked for in a directory, in order: the
// first that exists is read.
var DefaultNames = []string{"AGENTS.md", "CLAUDE.md"}

// Options configures a [Set]. The zero value gives the defaults.
type Options struct {
	// Names are the file names looked for in each directory, the first
	// found being read; nil means DefaultNames.
	Names []string
	// UserFile is the user's own instructions file (absolute), read from
	// the file system as it is; "" for none. A missing file is no error.
	UserFile string
	// UserLabel names UserFile in what the model and the user read, e.g.
	// "~/.config/fsmgen-agent/AGENTS.md"; "" means UserFile.
	UserLabel string
	// MaxFileBytes cuts each file; 0 means DefaultMaxFileBytes.
	MaxFileBytes int
	// MaxTotalBytes bounds all the files together: once it is reached,
	// later files are cut or left out; 0 means DefaultMaxTotalBytes.
	MaxTotalBytes int
	// Redactor removes the agent's secrets from what is read; nil
	// removes nothing.
	Redactor *redact.Redactor
}

// File is one instructions file the set looked at.
type File struct {
	// Path names the file: relative to the workspace root
	// ("AGENTS.md", "pkg/CLAUDE.md"), or the user's file as labelled.
	Path string
	// Dir is the workspace directory it applies to ("." for the root,
	// "" for the user's file).
	Dir string
	// Size is the file's size in bytes, Loaded how many of them were
	// loaded.
	Size, Loaded int64
	// Cut says what was left out and why; "" when the whole file was
	// loaded.
	Cut string
	// Err says why the file was refused (a link leading outside the
	// workspace, say); nil when it was read.
	Err error
}

// Set is the instructions of one session. It is safe for concurrent use:
// the tools of a round run in parallel.
type Set struct {
	ws  *tools.Workspace
	opt Options

	mu     sync.Mutex
	files  []File
	loaded map[string]dirText // workspace directories read, once
	sent   map[string]bool    // directories whose instructions the conversation holds
	total  int64
	sys    string
}

// dirText is what a directory's instructions are, as read once: the text
// and file; ok is false when it has none to show.
type dirText struct {
	text, file string
	ok         bool
}

// Load reads the user's file and the workspace root's and returns the
// set. A file that cannot be read is noted in [Set.Files], never an error:
// the session goes on without it.
func Load(ws *tools.Workspace, opt Options) *Set {
	if opt.Names == nil {
		opt.Names = DefaultNames
	}
	if opt.MaxFileBytes <= 0 {
		opt.MaxFileBytes = DefaultMaxFileBytes
	}
	if opt.MaxTotalBytes <= 0 {
		opt.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if opt.UserLabel == "" {
		opt.UserLabel = opt.UserFile
	}
	s := &Set{ws: ws, opt: opt, loaded: map[string]dirText{}, sent: map[string]bool{}}
	var b strings.Builder
	if opt.UserFile != "" {
		if text, ok := s.readUser(); ok {
			fmt.Fprintf(&b, "\n\n## %s (the user's instructions, for every project)\n\n%s", opt.UserLabel, text)
		}
	}
	root := func(name string, limit int64) ([]byte, int64, error) {
		return ws.ReadFile(context.Background(), name, limit)
	}
	if text, f, ok := s.forDir(".", root); ok {
		fmt.Fprintf(&b, "\n\n## %s (the project's instructions, at the workspace root)\n\n%s", f, text)
	}
	if b.Len() > 0 {
		s.sys = "\n\n# Instructions\n\nFollow these instructions from the user and the project; where they disagree, the user's request in the conversation wins. " +
			"A directory's own instructions (its AGENTS.md) arrive with the first tool result that touches it." + b.String()
	}
	return s
}

// System returns the text the system prompt ends with: the user's and the
// workspace root's instructions under a heading; "" when there are none.
func (s *Set) System() string { return s.sys }

// UserFile returns the user's file as labelled ("" for none).
func (s *Set) UserFile() string { return s.opt.UserLabel }

// Files returns the files looked at so far, in the order they were read.
func (s *Set) Files() []File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.files)
}

// ForPath returns the instructions of the directories between the
// workspace root (exclusive) and the one rel (a path relative to the
// root) is in, or is when isDir, that the conversation does not hold (see
// [Set.Holding]), marked as instructions, to append to the result of the
// tool that touched rel; "" when there are none. It notes them as held
// until the next Holding. Each directory's file is read once, the first
// time a path leads into it. A path outside the workspace gives "".
//
// The directories are walked down from the root once, each looked up
// from the one above it ([tools.Workspace.Along]), and the walk ends at
// the first that does not exist, which none below it can: a path of n
// components costs O(n) lookups, whether it exists or not. It ends too
// when ctx is done, with what it found so far.
func (s *Set) ForPath(ctx context.Context, rel string, isDir bool) string {
	if rel == "" || path.IsAbs(rel) || strings.ContainsRune(rel, 0) {
		return ""
	}
	clean := path.Clean(strings.ReplaceAll(rel, "\\", "/"))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return ""
	}
	dir := clean
	if !isDir {
		dir = path.Dir(clean)
	}
	if dir == "." {
		return ""
	}
	var b strings.Builder
	_ = s.ws.Along(ctx, dir, func(d string, in *tools.Dir) bool {
		if text, f, ok := s.forDir(d, in.ReadFile); ok {
			fmt.Fprintf(&b, "\n\n[instructions: %s applies to the files under %s/; follow it there]\n%s\n[end of %s]", f, d, text, f)
		}
		return true
	})
	return b.String()
}

// marker finds what ForPath appended to a tool's result: the directory
// whose instructions it brought.
var marker = regexp.MustCompile(`(?m)^\[instructions: \S+ applies to the files under (\S+)/; follow it there\]$`)

// Holding notes the directories whose instructions texts (the results of
// the tool calls and queries the conversation holds now) bring, and
// forgets the others noted before, so that ForPath brings those again. It
// returns how many directories it noted.
func (s *Set) Holding(texts []string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.sent)
	for _, text := range texts {
		if !strings.Contains(text, "[instructions: ") {
			continue
		}
		for _, m := range marker.FindAllStringSubmatch(text, -1) {
			s.sent[m[1]] = true
		}
	}
	return len(s.sent)
}

// forDir returns the instructions of the workspace directory dir unless
// they were sent, and notes them as sent. The directory is read once: the
// first of the names it holds; later calls give what the first read. It
// returns the text, the file's path and whether there is one to show.
func (s *Set) forDir(dir string, read readFunc) (string, string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sent[dir] {
		return "", "", false
	}
	d, ok := s.loaded[dir]
	if !ok {
		d.text, d.file, d.ok = s.read(dir, read)
		s.loaded[dir] = d
	}
	if d.ok {
		s.sent[dir] = true
	}
	return d.text, d.file, d.ok
}

// readFunc reads at most limit bytes of the file name of one directory
// and returns them with the file's size (see [tools.Dir.ReadFile]).
type readFunc func(name string, limit int64) ([]byte, int64, error)

// read reads the instructions of dir: the first of the names it holds,
// through read. s.mu is held.
func (s *Set) read(dir string, read readFunc) (string, string, bool) {
	for _, name := range s.opt.Names {
		data, size, err := read(name, int64(s.opt.MaxFileBytes))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		p := path.Join(dir, name)
		if err != nil {
			s.files = append(s.files, File{Path: p, Dir: dir, Err: err})
			return "", "", false
		}
		text, ok := s.add(File{Path: p, Dir: dir, Size: size}, data)
		return text, p, ok
	}
	return "", "", false
}

// readUser reads the user's file.
func (s *Set) readUser() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.Open(s.opt.UserFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	file := File{Path: s.opt.UserLabel}
	if err != nil {
		file.Err = err
		s.files = append(s.files, file)
		return "", false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", s.opt.UserLabel)
	}
	var data []byte
	if err == nil {
		data = make([]byte, min(fi.Size(), int64(s.opt.MaxFileBytes)))
		var n int
		n, err = io.ReadFull(f, data)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = nil // it shrank since Stat
		}
		data = data[:n]
	}
	if err != nil {
		file.Err = err
		s.files = append(s.files, file)
		return "", false
	}
	file.Size = fi.Size()
	return s.add(file, data)
}

// add notes the file and returns its text as the model reads it: cut to
// what the total leaves, redacted, with a note of what was cut. s.mu is
// held.
func (s *Set) add(f File, data []byte) (string, bool) {
	room := int64(s.opt.MaxTotalBytes) - s.total
	switch {
	case room <= 0:
		f.Cut = fmt.Sprintf("left out: the instructions reached their limit of %d bytes in all", s.opt.MaxTotalBytes)
		s.files = append(s.files, f)
		return "", false
	case int64(len(data)) > room:
		data = data[:room]
		f.Cut = fmt.Sprintf("cut after %d of %d bytes: the instructions reached their limit of %d bytes in all", room, f.Size, s.opt.MaxTotalBytes)
	case f.Size > int64(len(data)):
		f.Cut = fmt.Sprintf("cut after %d of %d bytes: the limit of one file", len(data), f.Size)
	}
	// Cut on a whole character.
	if f.Cut != "" {
		for i := 0; i < utf8.UTFMax-1 && len(data) > 0; i++ {
			if r, n := utf8.DecodeLastRune(data); r != utf8.RuneError || n != 1 {
				break
			}
			data = data[:len(data)-1]
		}
	}
	f.Loaded = int64(len(data))
	s.total += f.Loaded
	s.files = append(s.files, f)
	text := strings.ToValidUTF8(string(data), "\uFFFD")
	if s.opt.Redactor != nil {
		text = s.opt.Redactor.String(text)
	}
	text = strings.TrimRight(text, "\n")
	if f.Cut != "" {
		text += fmt.Sprintf("\n[%s was %s]", f.Path, f.Cut)
	}
	return text, true
}
