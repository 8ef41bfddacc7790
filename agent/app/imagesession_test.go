package app

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
)

// TestImageSession attaches an image to a message through the CLI, for
// either provider, by an @path mention and by a pasted path: each fake
// server decodes it from its own wire format and checks its bytes, and
// every later request sends it again; a message typed while a turn
// runs keeps its image while the machine holds it. The thread keeps the image; the
// event log says which image, not its bytes, and still replays; a
// resumed session shows the message with the image's marker.
func TestImageSession(t *testing.T) {
	t.Parallel()
	png := fakellm.TestImage("image/png", 3)
	b64 := base64.StdEncoding.EncodeToString(png)
	marker := "[image: shot.png, " + chat.FormatBytes(len(png)) + "]"
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, p, map[string]string{"shot.png": string(png)},
				fakellm.Reply{Text: "A grey square."}, fakellm.Reply{Text: "The same square."})
			pasted := "'" + filepath.Join(e.ws, "shot.png") + "' and this?"
			// The second message is read while the first turn runs: the
			// machine holds it (defers it), images and all, until the
			// turn has ended.
			r := e.run(t, "What is @shot.png?\n"+pasted+"\n")
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Contains(t, r.stderr, "agent: attached @shot.png as "+marker)
			assert.Contains(t, r.stderr, "agent: attached "+marker)

			reqs := e.srv.Requests()
			require.Len(t, reqs, 2)
			for i, req := range reqs {
				require.Empty(t, req.Invalid)
				require.Len(t, req.Messages[0].Images, 1, "request %d sends the first message's image", i)
				assert.Equal(t, png, req.Messages[0].Images[0].Data)
				assert.Equal(t, "image/png", req.Messages[0].Images[0].MediaType)
			}
			assert.Equal(t, "What is @shot.png?\n\n"+marker, reqs[0].Messages[0].Text)
			require.Len(t, reqs[1].Messages, 3)
			assert.Equal(t, marker+" and this?", reqs[1].Messages[2].Text, "the pasted path's place holds the marker")
			require.Len(t, reqs[1].Messages[2].Images, 1)
			assert.Equal(t, png, reqs[1].Messages[2].Images[0].Data)

			id := e.onlyThread(t)
			journal, err := os.ReadFile(filepath.Join(e.threads, id+".journal"))
			require.NoError(t, err)
			assert.Contains(t, string(journal), b64, "the thread keeps the image")
			logPath := filepath.Join(e.threads, id+".events.jsonl")
			elog, err := os.ReadFile(logPath)
			require.NoError(t, err)
			assert.NotContains(t, string(elog), b64, "the event log leaves the image's bytes out")
			assert.Contains(t, string(elog), `"name":"shot.png","media_type":"image/png"`)
			rep := replayExit(t, logPath)
			assert.Equal(t, 0, rep.code, "%s%s", rep.stdout, rep.stderr)

			r = e.run(t, "", "-resume", id)
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Contains(t, r.stderr, "> What is @shot.png?\n  \n  "+marker+"\n")
			assert.Contains(t, r.stderr, "> "+marker+" and this?\n")
			elog, err = os.ReadFile(logPath)
			require.NoError(t, err)
			assert.NotContains(t, string(elog), b64, "the resumed session's log header leaves the image's bytes out too")
			rep = replayExit(t, logPath)
			assert.Equal(t, 0, rep.code, "the log of both sessions replays: %s%s", rep.stdout, rep.stderr)
		})
	}
}

// TestImageOneShot attaches an image to a -p prompt; a model known to
// take no images gets none, saying so, and a thread holding images is
// refused before it is sent to such a model after /model.
func TestImageOneShot(t *testing.T) {
	t.Parallel()
	png := fakellm.TestImage("image/png", 4)
	marker := "[image: shot.png, " + chat.FormatBytes(len(png)) + "]"
	t.Run("attached", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, fakellm.OpenAI, map[string]string{"shot.png": string(png)}, fakellm.Reply{Text: "Grey."})
		r := e.run(t, "", "-p", "Colour of @shot.png?")
		require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
		assert.Equal(t, "Grey.\n", r.stdout)
		reqs := e.srv.Requests()
		require.Len(t, reqs, 1)
		require.Len(t, reqs[0].Messages[0].Images, 1)
		assert.Equal(t, png, reqs[0].Messages[0].Images[0].Data)
		assert.Equal(t, "Colour of @shot.png?\n\n"+marker, reqs[0].Messages[0].Text)
	})
	t.Run("a text-only model", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, fakellm.OpenAI, map[string]string{"shot.png": string(png)}, fakellm.Reply{Text: "No picture."})
		r := e.run(t, "", "-model", "o3-mini", "-p", "Colour of @shot.png?")
		require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
		assert.Contains(t, r.stderr, "agent: @shot.png not attached: o3-mini takes no images (agent -model list)")
		reqs := e.srv.Requests()
		require.Len(t, reqs, 1)
		assert.Empty(t, reqs[0].Messages[0].Images)
	})
	t.Run("switched to a text-only model", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, fakellm.OpenAI, map[string]string{"shot.png": string(png)}, fakellm.Reply{Text: "Grey."})
		r := e.run(t, "Colour of @shot.png?\n/model o3-mini\nAnd now?\n")
		assert.Contains(t, r.stderr, "o3-mini takes no images (agent -model list); go on with a model that takes them (/model NAME), or start a new thread")
		assert.Len(t, e.srv.Requests(), 1, "the thread is not sent to a model that takes no images")
	})
}

// TestImagePasteTerminal pastes a dropped file's path, its spaces
// escaped, in the line editor (a bracketed paste): the image is attached,
// its marker shown.
func TestImagePasteTerminal(t *testing.T) {
	t.Parallel()
	png := fakellm.TestImage("image/png", 5)
	e := newEnv(t, fakellm.Anthropic, map[string]string{"my shot.png": string(png)}, fakellm.Reply{Text: "Seen."})
	s := startPTY(t, e, nil)
	s.waitScreen(t, "> ")
	s.typeKeys(t, "\x1b[200~"+filepath.Join(e.ws, `my\ shot.png`)+" \x1b[201~why?\r")
	s.waitScreen(t, "Seen.")
	s.typeKeys(t, "\x04")
	require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())
	assert.Contains(t, s.screen.String(), "attached [image: my shot.png, "+chat.FormatBytes(len(png))+"]")
	reqs := e.srv.Requests()
	require.Len(t, reqs, 1)
	require.Len(t, reqs[0].Messages[0].Images, 1)
	assert.Equal(t, png, reqs[0].Messages[0].Images[0].Data)
	assert.Equal(t, "[image: my shot.png, "+chat.FormatBytes(len(png))+"] why?", reqs[0].Messages[0].Text)
}
