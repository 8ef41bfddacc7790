package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
)

// TestMentions sends messages that mention paths with "@": a file's
// contents and a folder's listing are attached to the message the model
// gets, each said; a path outside the workspace, a link out of it, a
// file holding the key and a binary file are refused with a note; a
// file past the limit is cut; an e-mail address is left alone; the key
// never reaches the model.
func TestMentions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{
		"a.go":          "package a\n",
		"docs/x.md":     "x\n",
		"docs/sub/y.md": "y\n",
		"big.txt":       strings.Repeat("0123456789\n", maxMentionBytes/11+100),
		"bin.dat":       "\x00\x01\x02",
		"notes/key.txt": "the key: " + testKey + "\n",
	}, fakellm.Reply{Text: "One."}, fakellm.Reply{Text: "Two."}, fakellm.Reply{Text: "Three."})
	outside := filepath.Join(t.TempDir(), "outside.txt")
	require.NoError(t, os.WriteFile(outside, []byte("outside\n"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(e.ws, "link.txt")))

	r := e.run(t, "Look at @a.go and @docs, please.\n"+
		"Read @"+outside+", @link.txt, @notes/key.txt, @bin.dat and write to me@example.com\n"+
		"@big.txt\n")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	msgs := userMessages(e)
	require.Len(t, msgs, 3)
	assert.Equal(t, "Look at @a.go and @docs, please.\n\n"+
		"[attached: a.go, 10 bytes]\npackage a\n[end of a.go]\n\n"+
		"[attached: docs, a folder of 2 entries]\nsub/\nx.md\n[end of docs]", msgs[0])
	assert.Equal(t, "Read @"+outside+", @link.txt, @notes/key.txt, @bin.dat and write to me@example.com", msgs[1],
		"nothing attached")
	assert.True(t, strings.HasPrefix(msgs[2], "@big.txt\n\n[attached: big.txt, the first 65536 of "), msgs[2][:80])
	assert.Less(t, len(msgs[2]), maxMentionBytes+200)
	for _, want := range []string{
		"agent: attached @a.go (10 bytes)",
		"agent: attached @docs (a folder of 2 entries)",
		"agent: @" + outside + " not attached: " + outside + " is outside the workspace",
		`agent: @link.txt not attached: path "link.txt" leads outside the workspace through a symbolic link`,
		"agent: @notes/key.txt not attached: ",
		"agent: @bin.dat not attached: it is a binary file",
	} {
		assert.Contains(t, r.stderr, want)
	}
	assert.NotContains(t, r.stderr, "example.com not attached")
	for _, req := range e.srv.Requests() {
		for _, m := range req.Messages {
			assert.NotContains(t, m.Text, testKey)
		}
	}
}

// TestMentionCompletion completes a path after "@" with Tab in the line
// editor: one candidate takes the word's place, several are listed, and
// the message sent has the file attached.
func TestMentionCompletion(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{
		"README.md":   "read me\n",
		"src/main.go": "package main\n",
		"src/mod.go":  "package main // mod\n",
	}, fakellm.Reply{Text: "Seen."})
	s := startPTY(t, e, nil)
	s.waitScreen(t, "> ")
	s.typeKeys(t, "see @RE\t")
	s.waitScreen(t, "see @README.md")
	s.typeKeys(t, " and @sr\t")
	s.waitScreen(t, "and @src/")
	s.typeKeys(t, "m\t")
	s.waitScreen(t, "src/main.go  src/mod.go")
	s.typeKeys(t, "a\t\r")
	s.waitScreen(t, "Seen.")
	s.typeKeys(t, "\x04")
	require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())
	assert.Equal(t, []string{"see @README.md and @src/main.go\n\n" +
		"[attached: README.md, 8 bytes]\nread me\n[end of README.md]\n\n" +
		"[attached: src/main.go, 13 bytes]\npackage main\n[end of src/main.go]"}, userMessages(e))
	assert.Contains(t, s.screen.String(), "attached @src/main.go (13 bytes)")
}

// TestMentionOneShot attaches what a -p prompt mentions.
func TestMentionOneShot(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.OpenAI, map[string]string{"a.go": "package a\n"}, fakellm.Reply{Text: "Package a."})
	r := e.run(t, "", "-p", "What is @a.go?")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Equal(t, []string{"What is @a.go?\n\n[attached: a.go, 10 bytes]\npackage a\n[end of a.go]"}, userMessages(e))
	assert.Contains(t, r.stderr, "agent: attached @a.go (10 bytes)")
}
