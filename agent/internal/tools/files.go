package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/agent/chat"
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

// readFileArgs are read_file's arguments.
type readFileArgs struct {
	Path *string `json:"path" jsonschema:"Path of the file, relative to the workspace root, e.g. \"src/main.go\"."`
}

// readFileSchema is the JSON Schema of readFileArgs.
var readFileSchema = argsSchema[readFileArgs]()

// Mutating implements Mutator: read_file changes nothing.
func (readFileTool) Mutating() bool { return false }

// Spec implements Tool.
func (readFileTool) Spec() chat.ToolSpec {
	return chat.ToolSpec{
		Name: "read_file",
		Description: "Read a text file in the workspace and return its exact contents. " +
			"Use it before edit_file so that old_str matches the file byte for byte. " +
			fmt.Sprintf("Files over %d KiB are cut, with a note at the end; read the rest with bash (e.g. sed -n '2000,2400p' FILE). ", MaxReadBytes>>10) +
			"Binary files are not shown. Paths are relative to the workspace root; paths outside the workspace are refused.",
		InputSchema: readFileSchema,
	}
}

// Run implements Tool.
func (t readFileTool) Run(ctx context.Context, raw json.RawMessage, _ func(chat.ToolProgress)) (string, error) {
	var args readFileArgs
	if err := decodeArgs(raw, &args, readFileUsage); err != nil {
		return "", err
	}
	if args.Path == nil {
		return "", missingArg("path", readFileUsage)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	name := *args.Path
	rel, err := t.ws.resolve(ctx, name)
	if err != nil {
		return "", err
	}
	masked := t.ws.maskedSet()
	abs := filepath.Join(t.ws.dir, filepath.FromSlash(rel))
	if masked.Has(abs) {
		return "", t.ws.maskedError(name, abs)
	}
	f, fi, err := openRegular(rootOpener{t.ws.root}, rel, name, "read")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("file %q does not exist; use list_files to see what is there", name)
	case errors.Is(err, errIsDir):
		return "", fmt.Errorf("%q is a directory, not a file; use list_files to list it", name)
	case err != nil:
		return "", err
	}
	defer f.Close()
	// Read no more than is returned, and one byte to tell a cut file.
	data := make([]byte, min(fi.Size(), MaxReadBytes)+1)
	n, err := io.ReadFull(f, data)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read %q: %w", name, err)
	}
	data = data[:n]
	if masked.Secret(data) {
		masked.Add(abs)
		// It came to hold the key since the agent started: masked from
		// now on.
		return "", t.ws.maskedError(name, "")
	}
	if bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0 {
		return fmt.Sprintf("(%q is a binary file of %d bytes; its contents are not shown)", name, fi.Size()), nil
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
		strings.ToValidUTF8(string(data), "\uFFFD"), lines, len(data), fi.Size(), lines+1, lines+400, shellQuote(name)), nil
}

// ListFiles returns the list_files tool, which lists a directory tree.
func ListFiles(ws *Workspace) Tool { return listFilesTool{ws: ws} }

// listFilesTool implements list_files.
type listFilesTool struct{ ws *Workspace }

// listFilesUsage describes list_files's arguments in error messages.
const listFilesUsage = `{"path": "dir"} (path is optional)`

// listFilesArgs are list_files's arguments.
type listFilesArgs struct {
	Path *string `json:"path,omitempty" jsonschema:"Directory to list, relative to the workspace root. Defaults to \".\", the workspace root."`
}

// listFilesSchema is the JSON Schema of listFilesArgs.
var listFilesSchema = argsSchema[listFilesArgs]()

// Mutating implements Mutator: list_files changes nothing.
func (listFilesTool) Mutating() bool { return false }

// Spec implements Tool.
func (listFilesTool) Spec() chat.ToolSpec {
	return chat.ToolSpec{
		Name: "list_files",
		Description: "List the files and directories under a directory of the workspace, recursively, one per line, sorted. " +
			"Paths are relative to the workspace root, so they can be passed to read_file and edit_file as they are; " +
			"directories end with \"/\". The .git directory is skipped and symbolic links are listed but not followed. " +
			fmt.Sprintf("At most %d entries are returned; list a subdirectory to see more. ", MaxListEntries) +
			"Without a path, lists the whole workspace.",
		InputSchema: listFilesSchema,
	}
}

// Run implements Tool.
func (t listFilesTool) Run(ctx context.Context, raw json.RawMessage, _ func(chat.ToolProgress)) (string, error) {
	var args listFilesArgs
	if err := decodeArgs(raw, &args, listFilesUsage); err != nil {
		return "", err
	}
	arg := "."
	if args.Path != nil && *args.Path != "" {
		arg = *args.Path
	}
	dir, err := t.ws.resolve(ctx, arg)
	if err != nil {
		return "", err
	}
	fi, err := t.ws.root.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("directory %q does not exist; list its parent to see what is there", arg)
	case err != nil:
		return "", pathError("list", arg, err)
	case !fi.IsDir():
		return "", fmt.Errorf("%q is a file, not a directory; use read_file to read it", arg)
	}

	// Masked files are listed with a note, so that the model neither
	// tries to read them nor to create them anew.
	masked := map[string]string{} // the note of each
	for _, p := range t.ws.maskedSet().Paths() {
		if r, err := filepath.Rel(t.ws.dir, p); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
			masked[filepath.ToSlash(r)] = maskedNote
			if t.ws.maskedSet().Own(p) {
				masked[filepath.ToSlash(r)] = ownNote
			}
		}
	}
	// The walk goes through the root: a directory swapped for a link to
	// outside while it runs is refused, not followed.
	var entries, problems []string
	cut := false
	walkErr := fs.WalkDir(t.ws.root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if p == dir {
			return err
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s (unreadable: %v)", p, reason(err)))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() && strings.EqualFold(d.Name(), ".git") {
			return fs.SkipDir
		}
		if len(entries) == MaxListEntries {
			cut = true
			return fs.SkipAll
		}
		name := p
		switch {
		case d.IsDir():
			name += "/"
		case masked[p] != "":
			name += masked[p]
		}
		entries = append(entries, name)
		return nil
	})
	if walkErr != nil {
		return "", pathError("list", arg, walkErr)
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

// maskedNote follows the name of a masked file in list_files' output.
const maskedNote = "  (masked: it holds the agent's API key; it cannot be read or changed)"

// ownNote follows the name of one of the agent's own files in
// list_files' output.
const ownNote = "  (masked: one of the agent's own logs or journals; it cannot be read or changed)"

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
