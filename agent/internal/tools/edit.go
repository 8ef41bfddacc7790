package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/internal/atomicfile"
)

// Limits and names of edit_file.
const (
	// DefaultMaxEditBytes is the largest file edit_file edits unless told
	// otherwise ([Options].MaxEditBytes, [EditOptions].MaxBytes): 16 MiB.
	DefaultMaxEditBytes = 16 << 20
	// EditTempPattern is the name (a glob) of the temporary files edit_file
	// writes next to the file it changes before renaming them over it. Such
	// a file outlives an edit only when the agent is killed in the middle;
	// [CleanTemp] removes them and the auto-commit never commits them.
	EditTempPattern = editTempPrefix + "*" + editTempSuffix
	editTempPrefix  = ".fsmgen-edit-"
	editTempSuffix  = ".tmp"
	// editChunk is how much of a file edit_file reads at a time.
	editChunk = 64 << 10
)

// EditOptions configures edit_file. The zero value gives the defaults.
type EditOptions struct {
	// MaxBytes is the size of the largest file edit_file changes; a larger
	// one is refused with a hint to use bash. 0 means DefaultMaxEditBytes.
	MaxBytes int64
}

// EditFile returns the edit_file tool, which replaces one exact occurrence
// of a string in a file, or creates a new file. At most one EditOptions may
// be given; without one, the defaults apply.
//
// The file is read in chunks and written to a temporary file beside it,
// which is synced and renamed over it: memory stays in proportion to the
// chunk and the two strings, whatever the file's size, and a reader (or
// the file system after a crash) sees the old content or the new. Files
// with more than one hard link, paths under .git, paths that name a
// directory ("dir/") and the names of temporary files are refused. The
// directory written in is reached without following links, so that a
// command racing the edit cannot redirect it into .git (see
// [Workspace]).
func EditFile(ws *Workspace, opts ...EditOptions) Tool {
	var opt EditOptions
	if len(opts) > 0 {
		opt = opts[0]
	}
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxEditBytes
	}
	return editFileTool{ws: ws, maxBytes: opt.MaxBytes}
}

// editFileTool implements edit_file.
type editFileTool struct {
	ws       *Workspace
	maxBytes int64
}

// editFileUsage describes edit_file's arguments in error messages.
const editFileUsage = `{"path": "dir/file.go", "old_str": "exact text to replace", "new_str": "replacement text"}`

// editFileArgs are edit_file's arguments.
type editFileArgs struct {
	Path   *string `json:"path" jsonschema:"Path of the file, relative to the workspace root, e.g. \"src/main.go\"."`
	OldStr *string `json:"old_str" jsonschema:"The exact text to replace; it must occur exactly once in the file. Empty to create a new file."`
	NewStr *string `json:"new_str" jsonschema:"The text to put in place of old_str, or the whole content of a new file."`
}

// editFileSchema is the JSON Schema of editFileArgs.
var editFileSchema = argsSchema[editFileArgs]()

// newFileMode is the mode of the files edit_file creates.
const newFileMode fs.FileMode = 0o644

// Mutating implements Mutator: edit_file writes files.
func (editFileTool) Mutating() bool { return true }

// Spec implements Tool.
func (t editFileTool) Spec() chat.ToolSpec {
	return chat.ToolSpec{
		Name: "edit_file",
		Description: "Edit a text file in the workspace by replacing one exact occurrence of old_str with new_str, or create a new file. " +
			"old_str must match the file byte for byte, including whitespace and indentation, and must occur exactly once: " +
			"if it occurs zero times or several times the edit is refused and the error says how many times it was found, " +
			"so include enough surrounding lines to make it unique (read the file first with read_file). " +
			"To create a file that does not exist yet, give an empty old_str and the whole content as new_str; missing parent directories are created. " +
			"To delete text, give an empty new_str. The file is written atomically and keeps its owner, group and permissions, but for setuid and setgid bits, which are removed. " +
			fmt.Sprintf("Files over %s are refused; change those with bash (e.g. sed -i). ", sizeString(t.maxBytes)) +
			"Files under .git are refused, also through a symbolic link: the agent commits your changes itself. " +
			"Paths are relative to the workspace root; paths outside the workspace are refused. " +
			"Symbolic links in the path are followed while they stay inside the workspace; if one changes while the edit runs, the edit fails rather than write elsewhere: retry, or give the link's target path.",
		InputSchema: editFileSchema,
	}
}

// Run implements Tool.
func (t editFileTool) Run(ctx context.Context, raw json.RawMessage, _ func(chat.ToolProgress)) (string, error) {
	var args editFileArgs
	if err := decodeArgs(raw, &args, editFileUsage); err != nil {
		return "", err
	}
	switch {
	case args.Path == nil:
		return "", missingArg("path", editFileUsage)
	case args.OldStr == nil:
		return "", missingArg("old_str", editFileUsage)
	case args.NewStr == nil:
		return "", missingArg("new_str", editFileUsage)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	name, oldStr, newStr := *args.Path, *args.OldStr, *args.NewStr
	if namesDir(name) {
		return "", fmt.Errorf("path %q names a directory (it ends in \"/\", \".\" or \"..\"); edit_file changes and creates files only: give the path of a file, e.g. \"dir/file.go\"", name)
	}
	rel, err := t.ws.resolve(ctx, name)
	if err != nil {
		return "", err
	}
	if underGit(filepath.ToSlash(filepath.Clean(name))) || underGit(rel) {
		return "", fmt.Errorf("%q is under .git, which edit_file does not change: the agent commits your changes itself after each round of tools, so edit the files of the work tree only", name)
	}
	if d := t.ws.gitDirOn(rel); d != "" {
		return "", fmt.Errorf("%q is in %s, which git takes for a repository (it has a HEAD and objects and refs, or a commondir), or would once it is written; "+
			"edit_file does not write there: a repository's files can make git run programs. Edit the files of the work tree only", name, d)
	}
	for _, n := range []string{path.Base(filepath.ToSlash(filepath.Clean(name))), path.Base(rel)} {
		if isEditTemp(n) || atomicfile.IsTemp(n) {
			return "", fmt.Errorf("%q has the name of the agent's temporary files (%s or %s), which are deleted and never committed; choose another name", name, EditTempPattern, atomicfile.TempPattern("*"))
		}
	}
	if oldStr == "" {
		return t.create(name, rel, newStr)
	}
	return t.replace(ctx, name, rel, oldStr, newStr)
}

// create writes a new file at rel, which must not exist.
func (t editFileTool) create(name, rel, content string) (string, error) {
	if rel == "." {
		return "", fmt.Errorf("cannot create %q: it is the workspace root; give a file path", name)
	}
	if abs := filepath.Join(t.ws.dir, filepath.FromSlash(rel)); t.ws.maskedSet().Has(abs) {
		return "", t.ws.maskedError(name, abs)
	}
	// The directory is opened without following links, creating what is
	// missing: it is the one at the path checked for .git.
	d, err := t.ws.openDir(path.Dir(rel), true)
	if err != nil {
		return "", pathError("create the parent directories of", name, err)
	}
	defer d.Close()
	base := path.Base(rel)
	if m, err := d.typeOf(base); err == nil {
		what := "file"
		if m.IsDir() {
			what = "directory"
		}
		return "", fmt.Errorf("cannot create %q: a %s with that name already exists; to change a file, give the exact text to replace as old_str", name, what)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", pathError("create", name, err)
	}
	err = replaceFile(d, base, newFileMode, func(w *os.File) error {
		_, err := io.WriteString(w, content)
		return err
	})
	if err != nil {
		return "", pathError("create", name, err)
	}
	return fmt.Sprintf("created %s (%s, %s)", name, plural(len(content), "byte"), plural(countLines(content), "line")), nil
}

// replace replaces the single occurrence of oldStr in the file at rel,
// streaming it through a temporary file.
func (t editFileTool) replace(ctx context.Context, name, rel, oldStr, newStr string) (string, error) {
	missing := fmt.Errorf("file %q does not exist; to create it, give an empty old_str", name)
	// The directory is opened without following links (it is the one at
	// the path checked for .git) and held open from here on: the temporary
	// file is written, and renamed, in the directory the file was read
	// from.
	d, err := t.ws.openDir(path.Dir(rel), false)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return "", missing
	case err != nil:
		return "", pathError("edit", name, err)
	}
	defer d.Close()
	masked := t.ws.maskedSet()
	abs := filepath.Join(t.ws.dir, filepath.FromSlash(rel))
	if masked.Has(abs) {
		return "", t.ws.maskedError(name, abs)
	}
	base := path.Base(rel)
	f, fi, err := openRegular(d, base, name, "edit")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", missing
	case errors.Is(err, errIsDir):
		return "", fmt.Errorf("%q is a directory, not a file; give a file path", name)
	case err != nil:
		return "", err
	}
	defer f.Close()
	if fi.Size() > t.maxBytes {
		return "", fmt.Errorf("%q is %s, over edit_file's limit of %s, so it was not changed; change it with bash instead, e.g. sed -i 's/old/new/' %s",
			name, sizeString(fi.Size()), sizeString(t.maxBytes), shellQuote(name))
	}

	if hit, err := masked.Holds(f); err != nil {
		return "", fmt.Errorf("edit %q: %w", name, err)
	} else if hit {
		masked.Add(abs)
		return "", t.ws.maskedError(name, "")
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("edit %q: %w", name, err)
	}
	old := []byte(oldStr)
	m, err := scan(ctx, f, old, editChunk)
	if err != nil {
		return "", fmt.Errorf("edit %q: %w", name, err)
	}
	switch m.count {
	case 1:
	case 0:
		return "", fmt.Errorf("old_str was not found in %q (0 occurrences), so nothing was changed; read the file again with read_file and copy the exact text, including whitespace and indentation", name)
	default:
		return "", fmt.Errorf("old_str occurs %d times in %q, so nothing was changed; include more surrounding lines in old_str so that it occurs exactly once", m.count, name)
	}
	if oldStr == newStr {
		return "", fmt.Errorf("old_str and new_str are the same, so the edit would change nothing in %q; give the new text as new_str", name)
	}

	// The new file keeps the old one's owner and group where the agent
	// may give them (always as root), and its permissions but never the
	// setuid or setgid bit: its content is the model's, and would run as
	// its owner or group.
	mode := fi.Mode() & (fs.ModePerm | fs.ModeSticky)
	kept := true
	err = replaceFile(d, base, mode, func(w *os.File) error {
		kept = keepOwner(w, fi)
		return splice(f, fi, w, m.first, old, newStr)
	})
	if errors.Is(err, errChanged) {
		return "", fmt.Errorf("%q changed while it was being edited (by another command?), so nothing was changed; read it again with read_file and retry", name)
	}
	if err != nil {
		return "", pathError("edit", name, err)
	}
	note := ""
	if dropped := fi.Mode() & (fs.ModeSetuid | fs.ModeSetgid); dropped != 0 {
		note = fmt.Sprintf("; its %s removed: edit_file never leaves a file that runs as its owner or group", setidBits(dropped))
	}
	if !kept {
		note += "; its owner and group could not be kept (the agent's user may not give a file away): it is now the agent's user's"
	}
	return fmt.Sprintf("edited %s: replaced 1 occurrence at line %d (%s removed, %s added)%s",
		name, m.line, plural(countLines(oldStr), "line"), plural(countLines(newStr), "line"), note), nil
}

// keepOwner gives the new file w the owner and group of the file fi
// describes, and reports whether it could: always as root; as another
// user, when the file was its own and the group one of its groups (then
// nothing changes). Given away, w's permissions are set again: a change
// of owner may clear bits on some systems.
func keepOwner(w *os.File, fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true // no owner to keep on this system
	}
	now, err := w.Stat()
	if err != nil {
		return false
	}
	if cur, ok := now.Sys().(*syscall.Stat_t); ok && cur.Uid == st.Uid && cur.Gid == st.Gid {
		return true
	}
	if err := w.Chown(int(st.Uid), int(st.Gid)); err != nil {
		return false
	}
	return w.Chmod(now.Mode()&(fs.ModePerm|fs.ModeSticky)) == nil
}

// setidBits names the setuid and setgid bits of m.
func setidBits(m fs.FileMode) string {
	switch {
	case m&fs.ModeSetuid != 0 && m&fs.ModeSetgid != 0:
		return "setuid and setgid bits were"
	case m&fs.ModeSetuid != 0:
		return "setuid bit was"
	}
	return "setgid bit was"
}

// matches is what scan found.
type matches struct {
	count int   // non-overlapping occurrences, counted from the left
	first int64 // offset of the first one; -1 when there is none
	line  int   // 1-based line of the first one
}

// scan counts the occurrences of old (non-empty) in r as strings.Count
// does, reading chunk bytes at a time and keeping no more than len(old)-1
// bytes between reads, so that an occurrence across two chunks is found and
// memory stays O(chunk + len(old)).
func scan(ctx context.Context, r io.Reader, old []byte, chunk int) (matches, error) {
	m := matches{first: -1}
	buf := make([]byte, 0, chunk+len(old))
	var base int64 // offset in r of buf[0]
	from := 0      // where in buf the search resumes
	lines := 0     // newlines before buf[0], until the first match
	for eof := false; !eof; {
		if err := ctx.Err(); err != nil {
			return matches{}, err
		}
		n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			eof = true
		case err != nil:
			return matches{}, err
		}
		for {
			i := bytes.Index(buf[from:], old)
			if i < 0 {
				break
			}
			i += from
			m.count++
			if m.first < 0 {
				m.first = base + int64(i)
				m.line = lines + bytes.Count(buf[:i], []byte{'\n'}) + 1
			}
			from = i + len(old)
		}
		// Keep what could still begin an occurrence.
		keep := max(from, len(buf)-len(old)+1)
		if m.first < 0 {
			lines += bytes.Count(buf[:keep], []byte{'\n'})
		}
		n = copy(buf, buf[keep:])
		buf = buf[:n]
		base += int64(keep)
		from = 0
	}
	return m, nil
}

// errChanged says that the file changed between scan and splice.
var errChanged = errors.New("the file changed while it was being edited")

// splice copies src (whose status was fi when it was scanned) to dst with
// the occurrence of old at offset first replaced by repl. It fails with
// errChanged when src no longer holds old there or changed size or time.
func splice(src *os.File, fi fs.FileInfo, dst *os.File, first int64, old []byte, repl string) error {
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := io.CopyN(dst, src, first); err != nil {
		return err
	}
	got := make([]byte, len(old))
	if _, err := io.ReadFull(src, got); err != nil || !bytes.Equal(got, old) {
		return errChanged
	}
	if _, err := io.WriteString(dst, repl); err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		return err
	}
	now, err := src.Stat()
	if err != nil {
		return err
	}
	if now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) {
		return errChanged
	}
	return nil
}

// replaceFile writes a new file named base in the directory d: fill writes
// its content into a temporary file (named after EditTempPattern) of mode
// perm, which is synced and renamed over base; the directory is synced
// then. On failure the temporary file is removed.
func replaceFile(d *dir, base string, perm fs.FileMode, fill func(*os.File) error) (err error) {
	tmp, f, err := createTemp(d)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = d.Remove(tmp)
		}
	}()
	if err = f.Chmod(perm); err != nil { // on the descriptor: not subject to the umask, nor to a race
		return err
	}
	if err = fill(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = d.Rename(tmp, base); err != nil {
		return err
	}
	return d.Sync()
}

// createTemp creates a new temporary file in d, named after
// EditTempPattern, open for writing; it returns its name and the file.
func createTemp(d *dir) (string, *os.File, error) {
	for range 100 {
		name := editTempPrefix + strconv.FormatUint(uint64(rand.Uint32()), 10) + editTempSuffix
		f, err := d.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return name, f, err
	}
	return "", nil, fmt.Errorf("no free name for a temporary file like %s after 100 tries; delete the leftover ones", EditTempPattern)
}

// namesDir reports whether the path p names a directory whatever is
// there: it ends in "/" or its last element is "." or "..".
func namesDir(p string) bool {
	p = filepath.ToSlash(p)
	last := p[strings.LastIndexByte(p, '/')+1:]
	return strings.HasSuffix(p, "/") || last == "." || last == ".."
}

// isEditTemp reports whether a file's base name matches EditTempPattern.
func isEditTemp(base string) bool {
	return len(base) > len(editTempPrefix)+len(editTempSuffix) &&
		strings.HasPrefix(base, editTempPrefix) && strings.HasSuffix(base, editTempSuffix)
}

// CleanTemp removes the temporary files edit_file leaves behind when the
// agent is killed in the middle of an edit (see EditTempPattern), anywhere
// in the workspace but under .git, and returns their paths relative to the
// root, sorted. Call it when the agent starts, before any tool runs: an
// edit in progress loses its temporary file. Directories it cannot read
// are skipped; a file it cannot remove is an error, after the others are
// removed.
func CleanTemp(ctx context.Context, ws *Workspace) ([]string, error) {
	var removed []string
	var errs []error
	err := fs.WalkDir(ws.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		switch {
		case err != nil && p == ".":
			return err
		case err != nil:
			return nil // unreadable: WalkDir skips it
		case d.IsDir() && strings.EqualFold(d.Name(), ".git"):
			return fs.SkipDir
		case !d.Type().IsRegular() || !isEditTemp(d.Name()):
			return nil
		}
		if err := ws.root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove %s: %w", p, reason(err)))
			return nil
		}
		removed = append(removed, p)
		return nil
	})
	if err != nil {
		return removed, fmt.Errorf("clean edit_file's temporary files in %s: %w", ws.Root(), reason(err))
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("clean edit_file's temporary files in %s: %w; delete them by hand", ws.Root(), errors.Join(errs...))
	}
	return removed, nil
}

// sizeString writes a byte count for people: "512 bytes",
// "16 MiB (16777216 bytes)", "1.5 GiB (1610612736 bytes)".
func sizeString(n int64) string {
	if n < 1<<10 {
		return plural(int(n), "byte")
	}
	v, unit := float64(n)/(1<<10), "KiB"
	for _, u := range []string{"MiB", "GiB", "TiB"} {
		if v < 1<<10 {
			break
		}
		v, unit = v/(1<<10), u
	}
	s := strings.TrimSuffix(strconv.FormatFloat(v, 'f', 1, 64), ".0")
	return fmt.Sprintf("%s %s (%d bytes)", s, unit, n)
}

// EditLine tells, before an edit_file call with args runs, where it
// would change its file: the line old_str starts at (1 for a new file),
// so that the user asked to approve it sees the diff numbered as the
// file is. found counts the occurrences of old_str (1 for a new file);
// anything but 1 means the edit would fail and change nothing. line is 0
// when it cannot be told: arguments that are not an edit's, a path the
// edit would refuse, a masked file or one over the limit (whose content
// is not read).
func EditLine(ctx context.Context, ws *Workspace, args json.RawMessage, maxBytes int64) (line, found int) {
	var a editFileArgs
	if json.Unmarshal(args, &a) != nil || a.Path == nil || *a.Path == "" {
		return 0, 0
	}
	if a.OldStr == nil || *a.OldStr == "" {
		return 1, 1
	}
	name, oldStr := *a.Path, *a.OldStr
	rel, err := ws.resolve(ctx, name)
	if err != nil || rel == "." {
		return 0, 0
	}
	d, err := ws.openDir(path.Dir(rel), false)
	if err != nil {
		return 0, 0
	}
	defer d.Close()
	masked := ws.maskedSet()
	if masked.Has(filepath.Join(ws.dir, filepath.FromSlash(rel))) {
		return 0, 0
	}
	f, fi, err := openRegular(d, path.Base(rel), name, "edit")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	if maxBytes <= 0 {
		maxBytes = DefaultMaxEditBytes
	}
	if fi.Size() > maxBytes {
		return 0, 0
	}
	if hit, err := masked.Holds(f); err != nil || hit {
		return 0, 0
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, 0
	}
	m, err := scan(ctx, f, []byte(oldStr), editChunk)
	if err != nil {
		return 0, 0
	}
	if m.count != 1 {
		return 0, m.count
	}
	return m.line, 1
}
