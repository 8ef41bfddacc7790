package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/ledger"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// Images reach a message two ways: an @path mention of an image file
// (see mentions), and the path of one in the message as a terminal pastes
// a file dropped on it (see pastedImages). Either way the file is read
// through the workspace's handle as the file tools read (a path outside
// the workspace, a masked or special file refused), taken for an image by
// its bytes, not its name, and attached to the message (chat.Image) with
// its marker, "[image: shot.png, 120 KB]", in the text.

// errNotImage is readImage's error for a file that is not an image.
var errNotImage = errors.New("not an image")

// sniffBytes is how much of a file tells its type (http.DetectContentType
// reads no more).
const sniffBytes = 512

// textOnly returns model when it is known to take no images (see
// ledger.TextOnly), for imageBudget; "" when it takes them.
func textOnly(model string) string {
	if ledger.TextOnly(model) {
		return model
	}
	return ""
}

// imageBudget is what is left of what one message may attach of images.
type imageBudget struct {
	// textOnly names the session's model when it takes no images; ""
	// when it takes them.
	textOnly string
	// images are those attached so far.
	images []chat.Image
}

// readImage reads the workspace's file rel when it is an image of a type
// the providers take (chat.ImageTypes), by its bytes; errNotImage when it
// is another file. An image past chat.MaxImageBytes, or more images than
// a message may carry, or an image for a model that takes none, is an
// error that says so.
func (b *imageBudget) readImage(ctx context.Context, ws *tools.Workspace, rel string) (chat.Image, error) {
	head, size, err := ws.ReadFile(ctx, rel, sniffBytes)
	if err != nil {
		return chat.Image{}, err
	}
	mediaType := http.DetectContentType(head)
	if !slices.Contains(chat.ImageTypes, mediaType) {
		return chat.Image{}, errNotImage
	}
	switch {
	case b.textOnly != "":
		return chat.Image{}, fmt.Errorf("%s takes no images (agent -model list); /model switches to one that does", b.textOnly)
	case size > chat.MaxImageBytes:
		return chat.Image{}, fmt.Errorf("the image is %s, larger than the %s the models take (Anthropic's 5 MB of base64); make it smaller", chat.FormatBytes(int(size)), chat.FormatBytes(chat.MaxImageBytes))
	case len(b.images) == chat.MaxImages:
		return chat.Image{}, fmt.Errorf("a message carries %d images at most", chat.MaxImages)
	}
	data, size, err := ws.ReadFile(ctx, rel, chat.MaxImageBytes)
	if err != nil {
		return chat.Image{}, err
	}
	if size > int64(len(data)) {
		return chat.Image{}, fmt.Errorf("the image grew past %s while it was read", chat.FormatBytes(chat.MaxImageBytes))
	}
	im := chat.Image{Name: rel, MediaType: mediaType, Data: data}
	b.images = append(b.images, im)
	return im, nil
}

// pastedPath finds what may be a file's path pasted into a message, as
// terminals paste a file dropped on them: after the start or white space,
// quoted ('…' or "…"), or with its spaces escaped ("\ "), absolute, from
// the home folder (~/), relative to the workspace (./, ../), or a file://
// URL.
var pastedPath = regexp.MustCompile(`(^|\s)('[^'\n]+'|"[^"\n]+"|(?:file://|~|\.\.?)?/(?:\\.|[^\s\\])+)`)

// imageExt is what the name of an image file ends with.
var imageExt = regexp.MustCompile(`(?i)\.(png|jpe?g|gif|webp)$`)

// escaped is a character escaped with a backslash.
var escaped = regexp.MustCompile(`\\(.)`)

// unescape reads a path as pastedPath found it: its quotes taken off,
// or its escapes undone; a file:// URL's path decoded; ~ the home folder.
func unescape(s string) string {
	switch {
	case len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0]:
		s = s[1 : len(s)-1]
	default:
		s = escaped.ReplaceAllString(s, "$1")
	}
	if rest, ok := strings.CutPrefix(s, "file://"); ok {
		if p, err := url.PathUnescape(rest); err == nil {
			s = p
		}
	}
	if rest, ok := strings.CutPrefix(s, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			s = filepath.Join(home, rest)
		}
	}
	return s
}

// pastedImages attaches the image files whose paths the message holds
// (see pastedPath), of names that end as an image's: each path is
// replaced in the text by the image's marker. A path that names no file
// is left as it is, unsaid; one outside the workspace, or refused, is
// left and said in a note.
func pastedImages(ctx context.Context, ws *tools.Workspace, msg string, budget *imageBudget) (string, []string) {
	var notes []string
	var b strings.Builder
	last := 0
	for _, m := range pastedPath.FindAllStringSubmatchIndex(msg, -1) {
		given, end := msg[m[4]:m[5]], m[5]
		p := unescape(given)
		if cut := strings.TrimRight(given, ".,;:!?)"); !imageExt.MatchString(p) && cut != given {
			// A full stop or comma after the path is the sentence's.
			given, end, p = cut, m[4]+len(cut), unescape(cut)
		}
		if !imageExt.MatchString(p) {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(ws.Root(), p)
		}
		rel, err := mentionPath(ws.Root(), p)
		if err != nil {
			if _, serr := os.Stat(p); serr == nil {
				notes = append(notes, fmt.Sprintf("%s not attached: %v", given, err))
			}
			continue
		}
		im, err := budget.readImage(ctx, ws, rel)
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue // not a file: a path the message talks about
		case errors.Is(err, errNotImage):
			notes = append(notes, fmt.Sprintf("%s not attached: its bytes are not a PNG, JPEG, GIF or WebP image", given))
			continue
		case err != nil:
			notes = append(notes, fmt.Sprintf("%s not attached: %v", given, err))
			continue
		}
		b.WriteString(msg[last:m[4]])
		b.WriteString(im.Marker())
		last = end
		notes = append(notes, "attached "+im.Marker())
	}
	b.WriteString(msg[last:])
	return b.String(), notes
}
