package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// TestImageAttachments runs the detection of images in a message: @path
// mentions of image files (by their bytes, whatever their names) and the
// paths of image files pasted as terminals paste dropped files (alone or
// in a sentence, quoted, with escaped spaces, as file:// URLs); the
// refusals (a file that is no image, one past the size limit, one outside
// the workspace as for any mention, any image for a text-only model, more
// than a message carries); and what is left unsaid (a path that names no
// file, one of another kind of file).
func TestImageAttachments(t *testing.T) {
	t.Parallel()
	png, jpeg := fakellm.TestImage("image/png", 1), fakellm.TestImage("image/jpeg", 2)
	dir := t.TempDir()
	files := map[string][]byte{
		"shot.png":        png,
		"my shot.png":     png,
		"docs/photo.jpg":  jpeg,
		"noext":           png,
		"fake.png":        []byte("not an image\n"),
		"big.png":         append(append([]byte{}, png...), make([]byte, chat.MaxImageBytes)...),
		"notes.txt":       []byte("notes\n"),
		"it's a shot.png": png,
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	ws, err := tools.NewWorkspace(dir)
	require.NoError(t, err)
	root := ws.Root()
	outside := filepath.Join(t.TempDir(), "away.png")
	require.NoError(t, os.WriteFile(outside, png, 0o644))
	pngMarker := func(name string) string { return "[image: " + name + ", " + chat.FormatBytes(len(png)) + "]" }
	jpegMarker := "[image: docs/photo.jpg, " + chat.FormatBytes(len(jpeg)) + "]"

	tests := []struct {
		name     string
		msg      string
		textOnly string
		text     string
		images   []string // names
		notes    []string
	}{
		{"a mention", "What is @shot.png?", "", "What is @shot.png?\n\n" + pngMarker("shot.png"),
			[]string{"shot.png"}, []string{"attached @shot.png as " + pngMarker("shot.png")}},
		{"a mention of an image by its bytes", "See @noext", "", "See @noext\n\n" + pngMarker("noext"),
			[]string{"noext"}, []string{"attached @noext as " + pngMarker("noext")}},
		{"an image and a text file", "@docs/photo.jpg @notes.txt", "",
			"@docs/photo.jpg @notes.txt\n\n" + jpegMarker + "\n\n[attached: notes.txt, 6 bytes]\nnotes\n[end of notes.txt]",
			[]string{"docs/photo.jpg"}, []string{"attached @docs/photo.jpg as " + jpegMarker, "attached @notes.txt (6 bytes)"}},
		{"a pasted path alone", filepath.Join(root, "shot.png"), "", pngMarker("shot.png"),
			[]string{"shot.png"}, []string{"attached " + pngMarker("shot.png")}},
		{"a pasted path and a question", filepath.Join(root, "shot.png") + " what is wrong here?", "",
			pngMarker("shot.png") + " what is wrong here?", []string{"shot.png"}, []string{"attached " + pngMarker("shot.png")}},
		{"quoted, as GNOME's terminal pastes", "'" + filepath.Join(root, "my shot.png") + "' ", "",
			pngMarker("my shot.png") + " ", []string{"my shot.png"}, []string{"attached " + pngMarker("my shot.png")}},
		{"double quoted", `look: "` + filepath.Join(root, "it's a shot.png") + `"`, "",
			"look: " + pngMarker("it's a shot.png"), []string{"it's a shot.png"}, []string{"attached " + pngMarker("it's a shot.png")}},
		{"spaces escaped, as iTerm and kitty paste", strings.ReplaceAll(filepath.Join(root, "my shot.png"), " ", `\ `), "",
			pngMarker("my shot.png"), []string{"my shot.png"}, []string{"attached " + pngMarker("my shot.png")}},
		{"a file:// URL", "file://" + strings.ReplaceAll(filepath.Join(root, "my shot.png"), " ", "%20"), "",
			pngMarker("my shot.png"), []string{"my shot.png"}, []string{"attached " + pngMarker("my shot.png")}},
		{"a full stop after the path", "Is " + filepath.Join(root, "shot.png") + ", or " + filepath.Join(root, "docs/photo.jpg") + ".", "",
			"Is " + pngMarker("shot.png") + ", or " + jpegMarker + ".", []string{"shot.png", "docs/photo.jpg"},
			[]string{"attached " + pngMarker("shot.png"), "attached " + jpegMarker}},
		{"relative to the workspace", "./docs/photo.jpg", "", jpegMarker, []string{"docs/photo.jpg"}, []string{"attached " + jpegMarker}},
		{"two, the same twice", "@shot.png and " + filepath.Join(root, "docs/photo.jpg") + " @shot.png", "",
			"@shot.png and " + jpegMarker + " @shot.png\n\n" + pngMarker("shot.png"), []string{"docs/photo.jpg", "shot.png"},
			[]string{"attached " + jpegMarker, "attached @shot.png as " + pngMarker("shot.png")}},
		{"a pasted file that is no image", filepath.Join(root, "fake.png"), "", filepath.Join(root, "fake.png"), nil,
			[]string{filepath.Join(root, "fake.png") + " not attached: its bytes are not a PNG, JPEG, GIF or WebP image"}},
		{"a mentioned file that is no image is text", "@fake.png", "", "@fake.png\n\n[attached: fake.png, 13 bytes]\nnot an image\n[end of fake.png]",
			nil, []string{"attached @fake.png (13 bytes)"}},
		{"too large", "@big.png", "", "@big.png", nil,
			[]string{"@big.png not attached: the image is " + chat.FormatBytes(len(files["big.png"])) + ", larger than the 3.9 MB the models take (Anthropic's 5 MB of base64); make it smaller"}},
		{"too large, pasted", filepath.Join(root, "big.png"), "", filepath.Join(root, "big.png"), nil,
			[]string{filepath.Join(root, "big.png") + " not attached: the image is " + chat.FormatBytes(len(files["big.png"])) + ", larger than"}},
		{"a path that names no file", "/no/such/shot.png and @gone.png", "", "/no/such/shot.png and @gone.png", nil, nil},
		{"a pasted path of another kind of file", filepath.Join(root, "notes.txt"), "", filepath.Join(root, "notes.txt"), nil, nil},
		{"outside the workspace, mentioned", "@" + outside, "", "@" + outside, nil,
			[]string{"@" + outside + " not attached: " + outside + " is outside the workspace (" + root + "); only its files can be attached"}},
		{"outside the workspace, pasted", outside, "", outside, nil,
			[]string{outside + " not attached: " + outside + " is outside the workspace (" + root + "); only its files can be attached"}},
		{"a text-only model", "@shot.png " + filepath.Join(root, "docs/photo.jpg"), "o3-mini", "@shot.png " + filepath.Join(root, "docs/photo.jpg"), nil,
			[]string{filepath.Join(root, "docs/photo.jpg") + " not attached: o3-mini takes no images (agent -model list); /model switches to one that does",
				"@shot.png not attached: o3-mini takes no images (agent -model list); /model switches to one that does"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msg, notes := mentions(context.Background(), ws, tt.msg, tt.textOnly)
			assert.Equal(t, chat.RoleUser, msg.Role)
			assert.Equal(t, tt.text, msg.Content)
			var names []string
			for _, im := range msg.Images {
				names = append(names, im.Name)
				assert.Equal(t, files[im.Name], im.Data, im.Name)
			}
			assert.Equal(t, tt.images, names)
			require.Len(t, notes, len(tt.notes), "notes: %q", notes)
			for i, want := range tt.notes {
				assert.True(t, strings.HasPrefix(notes[i], want), "note %d: %q, want %q", i, notes[i], want)
			}
		})
	}
}

// TestImageAttachmentsLimit attaches at most chat.MaxImages images to a
// message, saying which were left.
func TestImageAttachmentsLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var msg []string
	for i := range chat.MaxImages + 1 {
		name := string(rune('a'+i)) + ".png"
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), fakellm.TestImage("image/png", i), 0o644))
		msg = append(msg, "@"+name)
	}
	ws, err := tools.NewWorkspace(dir)
	require.NoError(t, err)
	m, notes := mentions(context.Background(), ws, strings.Join(msg, " "), "")
	assert.Len(t, m.Images, chat.MaxImages)
	require.Len(t, notes, chat.MaxImages+1)
	assert.Contains(t, notes[chat.MaxImages], "not attached: a message carries 8 images at most")
}
