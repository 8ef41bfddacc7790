package app

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"image"
	"image/png"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/threadsync"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// noisePNG is a PNG of random pixels, which does not compress: about
// 4 bytes a pixel.
func noisePNG(t *testing.T, side int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(r.UintN(256))
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

// TestSyncImages: a session whose thread holds an image larger than the
// server takes (-max-thread-bytes, 100 kB here; 32 MiB by default) syncs:
// the server's copy names the image, with its size and SHA-256, without
// its bytes; the model is sent the image, and the thread on disk keeps
// it.
func TestSyncImages(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t, "-max-thread-bytes", "100000")
	shot := noisePNG(t, 200)
	require.Greater(t, len(shot), 150_000)
	e := newEnv(t, fakellm.Anthropic, map[string]string{"shot.png": string(shot)}, fakellm.Reply{Text: "Noise."})
	r := e.runWith(t, "", []string{threadsync.TokenVar + "=" + srv.token}, "-sync", srv.url(), "-p", "What is @shot.png?")
	require.Equal(t, 0, r.code, r.stderr)
	id := e.onlyThread(t)
	assert.Contains(t, r.stderr, "agent: thread "+id+" synced to "+srv.url())
	require.Len(t, e.srv.Requests(), 1)
	require.Len(t, e.srv.Requests()[0].Messages[0].Images, 1)
	assert.Equal(t, shot, e.srv.Requests()[0].Messages[0].Images[0].Data, "the model gets the image")

	_, local, err := e.saved(id)
	require.NoError(t, err)
	msgs, err := local.Decode()
	require.NoError(t, err)
	assert.Equal(t, shot, msgs[0].Images[0].Data, "the thread on disk keeps the image")

	code, body := srv.get("/api/threads/" + id)
	require.Equal(t, http.StatusOK, code, "%s", body)
	var view struct {
		Thread threadwire.Thread `json:"thread"`
	}
	require.NoError(t, json.Unmarshal(body, &view))
	synced, err := view.Thread.Decode()
	require.NoError(t, err)
	sum := sha256.Sum256(shot)
	assert.Equal(t, []chat.Image{{Name: "shot.png", MediaType: "image/png", Size: len(shot), SHA256: hex.EncodeToString(sum[:])}}, synced[0].Images)
	assert.Equal(t, msgs[0].Content, synced[0].Content)
	assert.Less(t, len(body), 20_000)
}

// TestSyncTooLarge: a thread larger than the server takes, even without
// its images' bytes, is said once, in words that say what to do; the
// turn goes on, the thread on disk is whole and resumes, and the session
// ends saying it was not synced and how to push it.
func TestSyncTooLarge(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t, "-max-thread-bytes", "20000")
	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "Read it."}, fakellm.Reply{Text: "Still here."})
	prompt := strings.Repeat("a long message ", 3000)
	tok := []string{threadsync.TokenVar + "=" + srv.token}
	r := e.runWith(t, "", tok, "-sync", srv.url(), "-p", prompt)
	require.Equal(t, 0, r.code, r.stderr)
	id := e.onlyThread(t)
	assert.Equal(t, "Read it.\n", r.stdout)
	assert.Equal(t, 1, strings.Count(r.stderr, "is larger than the server at "+srv.url()+" takes"), r.stderr)
	assert.Contains(t, r.stderr, "it is kept whole on this machine, and is not synced for the rest of this session: the server's -max-thread-bytes takes larger threads")
	assert.Contains(t, r.stderr, "agent: sync: thread "+id+" was not synced to "+srv.url()+": it is larger than the server takes; it is kept whole on this machine (agent -resume "+id+")")
	code, _ := srv.get("/api/threads/" + id)
	assert.Equal(t, http.StatusNotFound, code)

	assert.Equal(t, []string{"user: " + prompt, "assistant: Read it."}, messages(e.state(t, id)), "the thread on disk is whole")
	r = e.runWith(t, "", tok, "-resume", id, "-p", "Go on.")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "Still here.\n", r.stdout)
	assert.Len(t, e.srv.Requests()[1].Messages, 3, "resumed whole")
}
