package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// The limits of what @path mentions attach to one message: each file is
// cut at maxMentionBytes, a folder's listing at maxMentionEntries, and
// once maxMentionTotal bytes are attached the later mentions are not.
const (
	maxMentionBytes   = 64 << 10
	maxMentionEntries = 200
	maxMentionTotal   = 256 << 10
)

// mention finds "@path" in a message: an "@" at the start or after white
// space, then the path up to the next white space.
var mention = regexp.MustCompile(`(^|\s)@(\S+)`)

// mentions makes msg into the user message to send: the image files it
// holds the pasted paths of attached (see pastedImages), and the files
// and folders it mentions as "@path" (relative to the workspace root, or
// absolute within it): an image as an image (see imageBudget.readImage),
// its marker after the message; another file's contents, a folder's
// listing, each after the message under a line naming it. It reads
// through the workspace's handle, as the file tools do: a path outside
// the workspace, a link leading out of it, a special file and a masked
// file (one holding the API key, the agent's own logs) are refused, and
// so is a binary file that is no image, and any image when textOnly
// names the session's model, which takes none. It returns the message and
// a note for each attachment, attached or refused; the message's text is
// redacted by the agent before it is sent (see agentexec.Config.Prepare).
// An "@" word that names nothing (an e-mail's, a decorator's) is left as
// it is, unsaid.
func mentions(ctx context.Context, ws *tools.Workspace, msg, textOnly string) (chat.Message, []string) {
	budget := &imageBudget{textOnly: textOnly}
	msg, notes := pastedImages(ctx, ws, msg, budget)
	var b strings.Builder
	seen := map[string]bool{}
	total := 0
	for _, m := range mention.FindAllStringSubmatch(msg, -1) {
		given := m[2]
		var rel, text, what string
		var im chat.Image
		var err error
		// A trailing comma or full stop is most likely the sentence's;
		// the path is tried with it when there is none without.
		for _, p := range []string{strings.TrimRight(given, ".,;:!?)\"'"), given} {
			if p == "" {
				continue // "@!" names nothing
			}
			given = p
			if rel, err = mentionPath(ws.Root(), p); err == nil {
				if seen[rel] {
					break
				}
				text, what, im, err = readAttachment(ctx, ws, rel, budget)
			}
			if !errors.Is(err, fs.ErrNotExist) {
				break
			}
		}
		if err == nil && seen[rel] {
			continue
		}
		if err == nil && im.Data == nil && total+len(text) > maxMentionTotal {
			err = fmt.Errorf("the message's attachments would pass their limit of %d KiB; ask the agent to read it", maxMentionTotal>>10)
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // not a path: an e-mail, a handle, a decorator
		case err != nil:
			notes = append(notes, fmt.Sprintf("@%s not attached: %v", given, err))
			continue
		}
		seen[rel] = true
		if im.Data != nil {
			fmt.Fprintf(&b, "\n\n%s", im.Marker())
			notes = append(notes, fmt.Sprintf("attached @%s as %s", rel, im.Marker()))
			continue
		}
		total += len(text)
		fmt.Fprintf(&b, "\n\n[attached: %s, %s]\n%s\n[end of %s]", rel, what, strings.TrimSuffix(text, "\n"), rel)
		notes = append(notes, fmt.Sprintf("attached @%s (%s)", rel, what))
	}
	return chat.Message{Role: chat.RoleUser, Content: msg + b.String(), Images: budget.images}, notes
}

// readAttachment reads what a mention of rel attaches: a folder's
// listing, an image (see imageBudget.readImage), or a file's text (see
// readMention).
func readAttachment(ctx context.Context, ws *tools.Workspace, rel string, budget *imageBudget) (text, what string, im chat.Image, err error) {
	if entries, err := ws.ReadDir(ctx, rel); err == nil {
		text, what, err = listMention(entries)
		return text, what, chat.Image{}, err
	}
	im, err = budget.readImage(ctx, ws, rel)
	if !errors.Is(err, errNotImage) {
		return "", "", im, err
	}
	text, what, err = readMention(ctx, ws, rel)
	return text, what, chat.Image{}, err
}

// mentionPath is the workspace path a mention names, cleaned and
// slash-separated; an absolute path must lie within root.
func mentionPath(root, p string) (string, error) {
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(root, filepath.Clean(p))
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return "", fmt.Errorf("%s is outside the workspace (%s); only its files can be attached", p, root)
		}
		p = rel
	}
	clean := path.Clean(filepath.ToSlash(p))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("%s is outside the workspace (%s); only its files can be attached", p, root)
	}
	return clean, nil
}

// readMention reads the text of the file a mention attaches, cut at
// maxMentionBytes, and says what it is.
func readMention(ctx context.Context, ws *tools.Workspace, rel string) (text, what string, err error) {
	data, size, err := ws.ReadFile(ctx, rel, maxMentionBytes)
	if err != nil {
		return "", "", err
	}
	if strings.IndexByte(string(data), 0) >= 0 || !utf8.Valid(trimCut(data)) {
		return "", "", errors.New("it is a binary file; ask the agent to look at it")
	}
	what = fmt.Sprintf("%d bytes", size)
	text = string(data)
	if size > int64(len(data)) {
		text = string(trimCut(data))
		what = fmt.Sprintf("the first %d of %d bytes", len(text), size)
	}
	return text, what, nil
}

// trimCut takes off the bytes of a character a cut split.
func trimCut(data []byte) []byte {
	for i := 0; i < utf8.UTFMax-1 && len(data) > 0; i++ {
		if r, n := utf8.DecodeLastRune(data); r != utf8.RuneError || n != 1 {
			break
		}
		data = data[:len(data)-1]
	}
	return data
}

// listMention lists a folder a mention names, given its entries: their
// names, folders ending in "/".
func listMention(entries []fs.DirEntry) (string, string, error) {
	var b strings.Builder
	n := 0
	for _, e := range entries {
		if e.IsDir() && e.Name() == ".git" {
			continue
		}
		if n == maxMentionEntries {
			fmt.Fprintf(&b, "[… %d more entries]\n", len(entries)-n)
			break
		}
		b.WriteString(e.Name())
		if e.IsDir() {
			b.WriteByte('/')
		}
		b.WriteByte('\n')
		n++
	}
	if n == 0 {
		b.WriteString("(empty folder)\n")
	}
	return b.String(), fmt.Sprintf("a folder of %d entries", n), nil
}

// completePaths completes a path the user is typing after "@": the
// entries of its folder that start with its last part (hidden ones only
// when that starts with "."), folders ending in "/". It is the line
// editor's Tab (see term.Editor.SetComplete).
func completePaths(ctx context.Context, ws *tools.Workspace, word string) []string {
	dir, base := path.Split(word)
	list := dir
	if list == "" {
		list = "."
	}
	if _, err := mentionPath(ws.Root(), list); err != nil || filepath.IsAbs(list) {
		return nil
	}
	entries, err := ws.ReadDir(ctx, list)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) || name == ".git" {
			continue
		}
		if e.IsDir() {
			name += "/"
		}
		out = append(out, dir+name)
	}
	return out
}
