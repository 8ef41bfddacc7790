package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/chat"
	"github.com/fsmgen/fsmgen/internal/atomicfile"
)

// Limits of the file tools.
const (
	// MaxReadBytes is how much of a file read_file returns.
	MaxReadBytes = 256 << 10
	// MaxListEntries is how many entries list_files returns.
	MaxListEntries = 2000
	// binarySniffBytes is how much of a file is searched for a NUL byte to
	// tell a binary file.
	binarySniffBytes = 8 << 10
)

// ReadFile returns the read_file tool, which returns a file's contents.
func ReadFile(ws *Workspace) Tool { return readFileTool{ws: ws} }

// readFileTool implements read_file.
type readFileTool struct{ ws *Workspace }

// readFileUsage describes read_file's arguments in error messages.
const readFileUsage = `{"path": "dir/file.go"}`

// Spec implements Tool.
func (readFileTool) Spec() chat.ToolSpec {
	return chat.ToolSpec{
		Name: "read_file",
		Description: "Read a text file in the workspace and return its exact contents. " +
			"Use it before edit_file so that old_str matches the file byte for byte. " +
			fmt.Sprintf("Files over %d KiB are cut, with a note at the end; read the rest with bash (e.g. sed -n '2000,2400p' FILE). ", MaxReadBytes>>10) +
			"Binary files are not shown. Paths are relative to the workspace root; paths outside the workspace are refused.",
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Path of the file, relative to the workspace root, e.g. \"src/main.go\"."}
  },
  "required": ["path"],
  "additionalProperties": false
}`),
	}
}

// Run implements Tool.
func (t readFileTool) Run(ctx context.Context, raw json.RawMessage, _ func(chat.ToolProgress)) (string, error) {
	var args struct {
		Path *string `json:"path"`
	}
	if err := decodeArgs(raw, &args, readFileUsage); err != nil {
		return "", err
	}
	if args.Path == nil {
		return "", missingArg("path", readFileUsage)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	p, err := t.ws.Resolve(*args.Path)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("file %q does not exist; use list_files to see what is there", *args.Path)
	case err != nil:
		return "", fmt.Errorf("read %q: %w", *args.Path, err)
	case fi.IsDir():
		return "", fmt.Errorf("%q is a directory, not a file; use list_files to list it", *args.Path)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%q is not a regular file (%s); only regular files can be read", *args.Path, fi.Mode().Type())
	}
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("read %q: %w", *args.Path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxReadBytes+1))
	if err != nil {
		return "", fmt.Errorf("read %q: %w", *args.Path, err)
	}
	if bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0 {
		return fmt.Sprintf("(%q is a binary file of %d bytes; its contents are not shown)", *args.Path, fi.Size()), nil
	}
	if len(data) == 0 {
		return "(empty file)", nil
	}
	if len(data) <= MaxReadBytes {
		return string(data), nil
	}
	data = data[:MaxReadBytes]
	if i := bytes.LastIndexByte(data, '\n'); i > 0 {
		data = data[:i+1] // end on a whole line
	}
	lines := bytes.Count(data, []byte{'\n'})
	return fmt.Sprintf("%s\n[read_file: file cut: showing the first %d lines (%d of %d bytes); read the rest with bash, e.g. sed -n '%d,%dp' %s]",
		strings.ToValidUTF8(string(data), "\uFFFD"), lines, len(data), fi.Size(), lines+1, lines+400, shellQuote(*args.Path)), nil
}

// ListFiles returns the list_files tool, which lists a directory tree.
func ListFiles(ws *Workspace) Tool { return listFilesTool{ws: ws} }

// listFilesTool implements list_files.
type listFilesTool struct{ ws *Workspace }

// listFilesUsage describes list_files's arguments in error messages.
const listFilesUsage = `{"path": "dir"} (path is optional)`

// Spec implements Tool.
func (listFilesTool) Spec() chat.ToolSpec {
	return chat.ToolSpec{
		Name: "list_files",
		Description: "List the files and directories under a directory of the workspace, recursively, one per line, sorted. " +
			"Paths are relative to the workspace root, so they can be passed to read_file and edit_file as they are; " +
			"directories end with \"/\". The .git directory is skipped and symbolic links are listed but not followed. " +
			fmt.Sprintf("At most %d entries are returned; list a subdirectory to see more. ", MaxListEntries) +
			"Without a path, lists the whole workspace.",
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory to list, relative to the workspace root. Defaults to \".\", the workspace root."}
  },
  "additionalProperties": false
}`),
	}
}

// Run implements Tool.
func (t listFilesTool) Run(ctx context.Context, raw json.RawMessage, _ func(chat.ToolProgress)) (string, error) {
	var args struct {
		Path *string `json:"path"`
	}
	if err := decodeArgs(raw, &args, listFilesUsage); err != nil {
		return "", err
	}
	arg := "."
	if args.Path != nil && *args.Path != "" {
		arg = *args.Path
	}
	dir, err := t.ws.Resolve(arg)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("directory %q does not exist; list its parent to see what is there", arg)
	case err != nil:
		return "", fmt.Errorf("list %q: %w", arg, err)
	case !fi.IsDir():
		return "", fmt.Errorf("%q is a file, not a directory; use read_file to read it", arg)
	}

	var entries, problems []string
	cut := false
	walkErr := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if p == dir {
			if err != nil {
				return err
			}
			return nil
		}
		name := t.ws.rel(p)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s (unreadable: %v)", name, errors.Unwrap(err)))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		if len(entries) == MaxListEntries {
			cut = true
			return fs.SkipAll
		}
		if d.IsDir() {
			name += "/"
		}
		entries = append(entries, name)
		return nil
	})
	if walkErr != nil {
		return "", fmt.Errorf("list %q: %w", arg, walkErr)
	}
	slices.Sort(entries)
	if len(entries) == 0 && len(problems) == 0 {
		return "(empty directory)", nil
	}
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e)
		b.WriteByte('\n')
	}
	for _, pr := range problems {
		b.WriteString(pr)
		b.WriteByte('\n')
	}
	if cut {
		fmt.Fprintf(&b, "[list_files: list cut after %d entries; list a subdirectory to see more]\n", MaxListEntries)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// EditFile returns the edit_file tool, which replaces one exact occurrence
// of a string in a file, or creates a new file.
func EditFile(ws *Workspace) Tool { return editFileTool{ws: ws} }

// editFileTool implements edit_file.
type editFileTool struct{ ws *Workspace }

// editFileUsage describes edit_file's arguments in error messages.
const editFileUsage = `{"path": "dir/file.go", "old_str": "exact text to replace", "new_str": "replacement text"}`

// newFileMode is the mode of the files edit_file creates.
const newFileMode fs.FileMode = 0o644

// Spec implements Tool.
func (editFileTool) Spec() chat.ToolSpec {
	return chat.ToolSpec{
		Name: "edit_file",
		Description: "Edit a text file in the workspace by replacing one exact occurrence of old_str with new_str, or create a new file. " +
			"old_str must match the file byte for byte, including whitespace and indentation, and must occur exactly once: " +
			"if it occurs zero times or several times the edit is refused and the error says how many times it was found, " +
			"so include enough surrounding lines to make it unique (read the file first with read_file). " +
			"To create a file that does not exist yet, give an empty old_str and the whole content as new_str; missing parent directories are created. " +
			"To delete text, give an empty new_str. The file is written atomically and keeps its permissions. " +
			"Paths are relative to the workspace root; paths outside the workspace are refused.",
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Path of the file, relative to the workspace root, e.g. \"src/main.go\"."},
    "old_str": {"type": "string", "description": "The exact text to replace; it must occur exactly once in the file. Empty to create a new file."},
    "new_str": {"type": "string", "description": "The text to put in place of old_str, or the whole content of a new file."}
  },
  "required": ["path", "old_str", "new_str"],
  "additionalProperties": false
}`),
	}
}

// Run implements Tool.
func (t editFileTool) Run(ctx context.Context, raw json.RawMessage, _ func(chat.ToolProgress)) (string, error) {
	var args struct {
		Path   *string `json:"path"`
		OldStr *string `json:"old_str"`
		NewStr *string `json:"new_str"`
	}
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
	p, err := t.ws.Resolve(name)
	if err != nil {
		return "", err
	}
	if oldStr == "" {
		return t.create(name, p, newStr)
	}
	return t.replace(name, p, oldStr, newStr)
}

// create writes a new file at p, which must not exist.
func (t editFileTool) create(name, p, content string) (string, error) {
	if fi, err := os.Lstat(p); err == nil {
		what := "file"
		if fi.IsDir() {
			what = "directory"
		}
		return "", fmt.Errorf("cannot create %q: a %s with that name already exists; to change a file, give the exact text to replace as old_str", name, what)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("create %q: %w", name, err)
	}
	if p == t.ws.Root() {
		return "", fmt.Errorf("cannot create %q: it is the workspace root; give a file path", name)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("create the parent directories of %q: %w", name, err)
	}
	if err := atomicfile.Write(p, []byte(content), newFileMode); err != nil {
		return "", fmt.Errorf("create %q: %w", name, err)
	}
	return fmt.Sprintf("created %s (%s, %s)", name, plural(len(content), "byte"), plural(countLines(content), "line")), nil
}

// replace replaces the single occurrence of oldStr in the file at p.
func (t editFileTool) replace(name, p, oldStr, newStr string) (string, error) {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("file %q does not exist; to create it, give an empty old_str", name)
	case err != nil:
		return "", fmt.Errorf("edit %q: %w", name, err)
	case fi.IsDir():
		return "", fmt.Errorf("%q is a directory, not a file; give a file path", name)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%q is not a regular file (%s); only regular files can be edited", name, fi.Mode().Type())
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("edit %q: %w", name, err)
	}
	content := string(data)
	switch n := strings.Count(content, oldStr); n {
	case 1:
	case 0:
		return "", fmt.Errorf("old_str was not found in %q (0 occurrences), so nothing was changed; read the file again with read_file and copy the exact text, including whitespace and indentation", name)
	default:
		return "", fmt.Errorf("old_str occurs %d times in %q, so nothing was changed; include more surrounding lines in old_str so that it occurs exactly once", n, name)
	}
	if oldStr == newStr {
		return "", fmt.Errorf("old_str and new_str are the same, so the edit would change nothing in %q; give the new text as new_str", name)
	}
	updated := strings.Replace(content, oldStr, newStr, 1)
	mode := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	if err := atomicfile.Write(p, []byte(updated), mode); err != nil {
		return "", fmt.Errorf("edit %q: %w", name, err)
	}
	line := strings.Count(content[:strings.Index(content, oldStr)], "\n") + 1
	return fmt.Sprintf("edited %s: replaced 1 occurrence at line %d (%s removed, %s added)",
		name, line, plural(countLines(oldStr), "line"), plural(countLines(newStr), "line")), nil
}

// countLines counts the lines of s, a last line without "\n" included.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// plural returns "1 line", "2 lines" and so on.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
