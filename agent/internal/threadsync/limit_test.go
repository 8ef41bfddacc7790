package threadsync_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// withImage is thread id at its first save with a second message that
// holds an image of size random bytes, which base64 makes a third larger.
func withImage(t *testing.T, id string, size int) (*threadwire.Thread, []byte) {
	t.Helper()
	th := version(t, id, 1)
	img := make([]byte, size)
	_, _ = rand.Read(img)
	b, err := json.Marshal(chat.Message{Role: chat.RoleUser, Content: "see [image: a.png]",
		Images: []chat.Image{{Name: "a.png", MediaType: "image/png", Data: img}}})
	require.NoError(t, err)
	th.Messages = append(th.Messages, b)
	th.Updated = th.Updated.Add(time.Second)
	return th, img
}

// TestImagesPushedWithoutBytes: a thread whose image would pass the
// server's limit (-max-thread-bytes, 32 MiB by default, 100 kB here) is
// pushed without the image's bytes, its size and SHA-256 standing for
// them; the thread given to the pusher keeps them.
func TestImagesPushedWithoutBytes(t *testing.T) {
	t.Parallel()
	s := newServer(t, "-max-thread-bytes", "100000")
	var n notes
	p := newPusher(t, s.url(), s.token, &n)
	th, img := withImage(t, "t-1", 200_000)
	saved := string(th.Messages[1])
	p.Saved(th)
	require.NoError(t, stopWithin(p, 5*time.Second))
	assert.Empty(t, n.all())
	assert.Equal(t, saved, string(th.Messages[1]), "the thread saved is left as it is")

	v, got, ok := s.get("t-1")
	require.True(t, ok, "the server holds the thread")
	assert.Less(t, len(v.Thread), 10_000)
	assert.NotContains(t, string(v.Thread), "data_base64")
	msgs, err := got.Decode()
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	sum := sha256.Sum256(img)
	assert.Equal(t, []chat.Image{{Name: "a.png", MediaType: "image/png", Size: len(img), SHA256: hex.EncodeToString(sum[:])}}, msgs[1].Images)
	assert.Equal(t, "see [image: a.png]", msgs[1].Content)
}

// TestTooLarge: a thread the server refuses as too large (413) is said
// once, in words that say what to do (not a wrong token's); syncing stops
// for the session, and Stop says the thread is whole on this machine and
// how to push it once the server takes it.
func TestTooLarge(t *testing.T) {
	t.Parallel()
	s := newServer(t, "-max-thread-bytes", "20000")
	var n notes
	p := newPusher(t, s.url(), s.token, &n)
	th := version(t, "t-1", 1)
	long, err := json.Marshal(chat.UserMessage(strings.Repeat("a long message ", 3000)))
	require.NoError(t, err)
	th.Messages = append(th.Messages, long)
	th.Updated = th.Updated.Add(time.Second)
	p.Saved(th)
	require.Eventually(t, func() bool { return len(n.all()) == 1 }, 10*time.Second, 5*time.Millisecond)
	more := version(t, "t-1", 3)
	more.Messages = append(more.Messages, long)
	p.Saved(more) // after the refusal: not pushed
	err = stopWithin(p, 5*time.Second)
	require.Error(t, err)
	assert.Equal(t, "thread t-1 was not synced to "+s.url()+": it is larger than the server takes; it is kept whole on this machine (agent -resume t-1), "+
		"and once the server takes larger threads (its -max-thread-bytes) agent -resume t-1 -sync "+s.url()+" pushes it", err.Error())
	got := n.all()
	require.Len(t, got, 1, "said once: %q", got)
	assert.Contains(t, got[0], "sync: thread t-1 is larger than the server at "+s.url()+" takes (413 Request Entity Too Large (thread_too_large: the thread is larger than the 20000 bytes")
	assert.Contains(t, got[0], "for 45 KB of JSON without the images' bytes); it is kept whole on this machine, and is not synced for the rest of this session: the server's -max-thread-bytes takes larger threads")
	assert.NotContains(t, got[0], "check -sync")
	assert.EqualValues(t, 1, s.puts.Load(), "no retry")
	_, _, ok := s.get("t-1")
	assert.False(t, ok)
}
