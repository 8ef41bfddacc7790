package apitest_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/internal/threadwire"
	"github.com/fsmgen/fsmgen/server/internal/api"
)

// threadJSON is a thread with the given ID, updated at t0 plus rev
// seconds, whose user asked prompt and which used 100+rev tokens.
func threadJSON(t *testing.T, id string, rev int64, prompt string) []byte {
	t.Helper()
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	var msgs []json.RawMessage
	for _, m := range []chat.Message{{Role: chat.RoleUser, Content: prompt}, {Role: chat.RoleAssistant, Content: "done"}} {
		b, err := json.Marshal(m)
		require.NoError(t, err)
		msgs = append(msgs, b)
	}
	th := threadwire.Thread{Version: threadwire.Version, ID: id, Created: t0, Updated: t0.Add(time.Duration(rev) * time.Second),
		Provider: "anthropic", Model: "fake-model", Workspace: "/src/" + id, Messages: msgs,
		Ledger: chat.Ledger{Total: chat.Usage{InputTokens: 60, OutputTokens: 40 + int(rev)}}}
	b, err := json.Marshal(th)
	require.NoError(t, err)
	return b
}

// pushBody is the body of a push of thread at rev.
func pushBody(t *testing.T, rev int64, th []byte) string {
	t.Helper()
	b, err := json.Marshal(threadwire.PushBody{Revision: rev, Thread: th})
	require.NoError(t, err)
	return string(b)
}

func gzipped(t *testing.T, s string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write([]byte(s))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.String()
}

// TestThreadsSync pushes revisions of threads and reads them back: a
// newer revision is stored, the same again changes nothing, an older one
// is refused 409.
func TestThreadsSync(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	steps := []struct {
		name     string
		id       string
		rev      int64
		prompt   string
		gzip     bool
		status   int
		stored   bool
		code     string
		wantRev  int64 // the revision GET then returns
		wantBody string
	}{
		{name: "new", id: "t-1", rev: 10, prompt: "fix the bug", status: 200, stored: true, wantRev: 10},
		{name: "same again", id: "t-1", rev: 10, prompt: "fix the bug", status: 200, stored: false, wantRev: 10},
		{name: "same revision, other thread", id: "t-1", rev: 10, prompt: "other", status: 409, code: "stale_revision", wantRev: 10},
		{name: "older", id: "t-1", rev: 5, prompt: "older", status: 409, code: "stale_revision", wantRev: 10},
		{name: "newer, gzipped", id: "t-1", rev: 20, prompt: "fix the bug\n  twice", gzip: true, status: 200, stored: true, wantRev: 20},
		{name: "another", id: "t-2", rev: 3, prompt: "add a test", status: 200, stored: true, wantRev: 3},
	}
	bodies := map[string][]byte{}
	for _, st := range steps {
		th := threadJSON(t, st.id, st.rev, st.prompt)
		body := pushBody(t, st.rev, th)
		header := map[string]string{"Content-Type": "application/json"}
		if st.gzip {
			body, header["Content-Encoding"] = gzipped(t, body), "gzip"
		}
		a := s.do(req{method: "PUT", path: "/api/threads/" + st.id, body: body, header: header})
		if st.code != "" {
			requireError(t, a, st.status, st.code, fmt.Sprintf("revision %d", st.wantRev))
		} else {
			require.Equal(t, st.status, a.status, "%s: %s", st.name, a.body)
			var reply threadwire.PushReply
			require.NoError(t, json.Unmarshal(a.body, &reply))
			assert.Equal(t, threadwire.PushReply{ID: st.id, Revision: st.rev, Stored: st.stored}, reply, st.name)
			if st.stored {
				bodies[st.id] = th
			}
		}
		var got api.ThreadView
		s.json("GET", "/api/threads/"+st.id, "", 200, &got)
		assert.Equal(t, st.wantRev, got.Revision, st.name)
		assert.JSONEq(t, string(bodies[st.id]), string(got.Thread), st.name)
	}

	var list struct {
		Threads []api.ThreadView `json:"threads"`
	}
	s.json("GET", "/api/threads", "", 200, &list)
	require.Len(t, list.Threads, 2)
	first := list.Threads[0]
	assert.Nil(t, first.Thread, "a list carries no thread")
	first.Thread, first.SyncedAt = nil, time.Time{}
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	assert.Equal(t, api.ThreadView{ID: "t-1", Revision: 20, Workspace: "/src/t-1", Provider: "anthropic", Model: "fake-model",
		Created: t0, Updated: t0.Add(20 * time.Second), FirstPrompt: "fix the bug twice", Tokens: 120, Messages: 2}, first)
	assert.Equal(t, "t-2", list.Threads[1].ID)
	s.json("GET", "/api/threads?limit=1", "", 200, &list)
	assert.Len(t, list.Threads, 1)
}

// TestThreadsBadRequests sends what the threads' API refuses.
func TestThreadsBadRequests(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{MaxThreadBytes: 4096})
	good := threadJSON(t, "t-1", 1, "hello")
	withThread := func(edit func(m map[string]any)) string {
		var m map[string]any
		require.NoError(t, json.Unmarshal(good, &m))
		edit(m)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return pushBody(t, 1, b)
	}
	tests := []struct {
		name    string
		method  string
		path    string
		body    string
		header  map[string]string
		status  int
		code    string
		message string
	}{
		{"no token", "PUT", "/api/threads/t-1", pushBody(t, 1, good), map[string]string{"Authorization": ""}, 401, "unauthorized", "Bearer"},
		{"wrong token", "GET", "/api/threads", "", map[string]string{"Authorization": "Bearer nope"}, 401, "invalid_token", "not one of this server's API keys"},
		{"bad id", "PUT", "/api/threads/-x", pushBody(t, 1, good), nil, 400, "invalid_id", "bad thread ID"},
		{"bad id on get", "GET", "/api/threads/a%20b", "", nil, 400, "invalid_id", "bad thread ID"},
		{"unknown thread", "GET", "/api/threads/nope", "", nil, 404, "not_found", "no thread nope"},
		{"empty body", "PUT", "/api/threads/t-1", "", nil, 400, "bad_json", "empty"},
		{"not JSON", "PUT", "/api/threads/t-1", "{", nil, 400, "bad_json", "ends too early"},
		{"unknown field", "PUT", "/api/threads/t-1", `{"revision": 1, "thread": {}, "extra": 1}`, nil, 400, "bad_json", "extra"},
		{"two objects", "PUT", "/api/threads/t-1", pushBody(t, 1, good) + "{}", nil, 400, "bad_json", "after the JSON object"},
		{"no revision", "PUT", "/api/threads/t-1", `{"thread": ` + string(good) + `}`, nil, 400, "invalid_revision", "positive"},
		{"negative revision", "PUT", "/api/threads/t-1", pushBody(t, -4, good), nil, 400, "invalid_revision", "-4"},
		{"no thread", "PUT", "/api/threads/t-1", `{"revision": 1}`, nil, 400, "invalid_thread", `no "thread"`},
		{"thread not an object", "PUT", "/api/threads/t-1", `{"revision": 1, "thread": [1]}`, nil, 400, "invalid_thread", "want a JSON object"},
		{"unknown thread field", "PUT", "/api/threads/t-1", withThread(func(m map[string]any) { m["colour"] = "red" }), nil, 400, "invalid_thread", "colour"},
		{"id not the path's", "PUT", "/api/threads/t-2", pushBody(t, 1, good), nil, 400, "invalid_thread", `"t-1" is not the "t-2"`},
		{"old version", "PUT", "/api/threads/t-1", withThread(func(m map[string]any) { m["version"] = 2 }), nil, 400, "invalid_thread", "format version"},
		{"no times", "PUT", "/api/threads/t-1", withThread(func(m map[string]any) { delete(m, "updated") }), nil, 400, "invalid_thread", "updated"},
		{"message not an object", "PUT", "/api/threads/t-1", withThread(func(m map[string]any) { m["messages"] = []any{1} }), nil, 400, "invalid_thread", "messages[0]"},
		{"message without role", "PUT", "/api/threads/t-1", withThread(func(m map[string]any) { m["messages"] = []any{map[string]any{"content": "x"}} }), nil, 400, "invalid_thread", "no role"},
		{"too large", "PUT", "/api/threads/t-1", withThread(func(m map[string]any) { m["queued_input"] = []string{strings.Repeat("x", 8000)} }), nil, 413, "thread_too_large", "4096 bytes"},
		{"too large, gzipped", "PUT", "/api/threads/t-1", gzipped(t, withThread(func(m map[string]any) { m["queued_input"] = []string{strings.Repeat("x", 1<<20)} })), map[string]string{"Content-Encoding": "gzip"}, 413, "thread_too_large", "-max-thread-bytes"},
		{"not gzip", "PUT", "/api/threads/t-1", "plain", map[string]string{"Content-Encoding": "gzip"}, 400, "bad_body", "not gzip"},
		{"other encoding", "PUT", "/api/threads/t-1", pushBody(t, 1, good), map[string]string{"Content-Encoding": "br"}, 415, "unsupported_encoding", "gzip"},
		{"not JSON type", "PUT", "/api/threads/t-1", pushBody(t, 1, good), map[string]string{"Content-Type": "text/plain"}, 415, "unsupported_media_type", "application/json"},
		{"bad limit", "GET", "/api/threads?limit=0", "", nil, 400, "invalid_limit", "1 to 1000"},
		{"method", "DELETE", "/api/threads/t-1", "", nil, 405, "method_not_allowed", "GET or PUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireError(t, s.do(req{method: tt.method, path: tt.path, body: tt.body, header: tt.header}), tt.status, tt.code, tt.message)
		})
	}
	// Nothing refused was stored.
	var list struct {
		Threads []api.ThreadView `json:"threads"`
	}
	s.json("GET", "/api/threads", "", http.StatusOK, &list)
	assert.Empty(t, list.Threads)
}
