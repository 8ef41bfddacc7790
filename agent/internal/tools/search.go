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
	"strings"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// The limits of search_files.
const (
	// MaxSearchMatches is how many matching lines search_files returns.
	MaxSearchMatches = 200
	// MaxSearchFileBytes is the largest file search_files reads; larger
	// ones are skipped and counted.
	MaxSearchFileBytes = 4 << 20
	// maxSearchLine is how much of a matching line is shown.
	maxSearchLine = 240
)

// SearchFiles returns the search_files tool, which returns the lines of the
// workspace's text files that hold a text. Like the other file tools it
// reaches files only beneath the workspace's open root: no path or link
// leads outside, .git is skipped, and masked files (which hold the API
// key) are neither read nor shown.
func SearchFiles(ws *Workspace) Tool { return searchFilesTool{ws: ws} }

// searchFilesTool implements search_files.
type searchFilesTool struct{ ws *Workspace }

// searchFilesUsage describes search_files' arguments in error messages.
const searchFilesUsage = `{"pattern": "TODO", "path": "dir"} (path is optional)`

// searchFilesArgs are search_files' arguments.
type searchFilesArgs struct {
	Pattern *string `json:"pattern" jsonschema:"The text to look for, as it is written (not a regular expression)."`
	Path    *string `json:"path,omitempty" jsonschema:"Directory or file to search, relative to the workspace root. Defaults to \".\"."`
}

// searchFilesSchema is the JSON Schema of searchFilesArgs.
var searchFilesSchema = argsSchema[searchFilesArgs]()

// Spec implements Tool.
func (searchFilesTool) Spec() chat.ToolSpec {
	return chat.ToolSpec{
		Name: "search_files",
		Description: "Search the text files under a directory of the workspace (or one file) for a literal text, case-sensitive, " +
			fmt.Sprintf("and return the matching lines as path:line: text, at most %d. ", MaxSearchMatches) +
			"The .git directory, binary files and files holding the agent's key are skipped.",
		InputSchema: searchFilesSchema,
	}
}

// Run implements Tool.
func (t searchFilesTool) Run(ctx context.Context, raw json.RawMessage, _ func(chat.ToolProgress)) (string, error) {
	var args searchFilesArgs
	if err := decodeArgs(raw, &args, searchFilesUsage); err != nil {
		return "", err
	}
	if args.Pattern == nil || *args.Pattern == "" {
		return "", missingArg("pattern", searchFilesUsage)
	}
	arg := "."
	if args.Path != nil && *args.Path != "" {
		arg = *args.Path
	}
	start, err := t.ws.resolve(ctx, arg)
	if err != nil {
		return "", err
	}
	if _, err := t.ws.root.Stat(start); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%q does not exist; use list_files to see what is there", arg)
	} else if err != nil {
		return "", pathError("search", arg, err)
	}
	pattern := []byte(*args.Pattern)
	masked := t.ws.maskedSet()
	var (
		b               strings.Builder
		matches, files  int
		skipped, hidden int
		cut             bool
	)
	walkErr := fs.WalkDir(t.ws.root.FS(), start, func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if err != nil {
			skipped++
			if d != nil && d.IsDir() && p != start {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if strings.EqualFold(d.Name(), ".git") {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		abs := filepath.Join(t.ws.dir, filepath.FromSlash(p))
		if masked.Has(abs) {
			hidden++
			return nil
		}
		data, ok := t.readForSearch(p)
		if !ok {
			skipped++
			return nil
		}
		if masked.Secret(data) {
			masked.Add(abs)
			hidden++
			return nil
		}
		files++
		line := 1
		for rest := data; len(rest) > 0; line++ {
			end := bytes.IndexByte(rest, '\n')
			if end < 0 {
				end = len(rest)
			}
			text := rest[:end]
			if bytes.Contains(text, pattern) {
				if matches == MaxSearchMatches {
					cut = true
					return fs.SkipAll
				}
				matches++
				s := strings.TrimRight(strings.ToValidUTF8(string(text), "\uFFFD"), "\r")
				if len(s) > maxSearchLine {
					s = strings.ToValidUTF8(s[:maxSearchLine], "") + "…"
				}
				fmt.Fprintf(&b, "%s:%d: %s\n", p, line, s)
			}
			if end == len(rest) {
				break
			}
			rest = rest[end+1:]
		}
		return nil
	})
	if walkErr != nil {
		return "", pathError("search", arg, walkErr)
	}
	if matches == 0 {
		fmt.Fprintf(&b, "no line of the %s searched holds %q\n", plural(files, "file"), *args.Pattern)
	}
	if cut {
		fmt.Fprintf(&b, "[search_files: stopped after %d matches; search a subdirectory or a longer text]\n", MaxSearchMatches)
	}
	if skipped > 0 {
		fmt.Fprintf(&b, "[%s skipped: binary, unreadable or over %d MiB]\n", plural(skipped, "file"), MaxSearchFileBytes>>20)
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "[%s not searched: masked, they hold the agent's API key]\n", plural(hidden, "file"))
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// readForSearch reads the regular file p (relative to the root) for a
// search; false for a file that is binary, too large or unreadable.
func (t searchFilesTool) readForSearch(p string) ([]byte, bool) {
	f, fi, err := openRegular(rootOpener{t.ws.root}, p, p, "read")
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi.Size() > MaxSearchFileBytes {
		return nil, false
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSearchFileBytes+1))
	if err != nil || len(data) > MaxSearchFileBytes {
		return nil, false
	}
	if bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0 {
		return nil, false
	}
	return data, true
}
