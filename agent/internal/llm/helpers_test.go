package llm

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// testKey is the API key the tests use; it must never show in errors or logs.
const testKey = "sk-test-SECRET-9f8e7d6c5b4a"

// received is one request a fake server got.
type received struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// fakeServer is a local HTTP server that answers with a scripted reply and
// records every request.
type fakeServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []received
}

// newFakeServer starts a server that records each request, then lets
// respond answer it.
func newFakeServer(t *testing.T, respond http.HandlerFunc) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, received{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		f.mu.Unlock()
		respond(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// requests returns the requests received so far.
func (f *fakeServer) requests() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.reqs...)
}

// loadEvents reads a fixture of server-sent events, one event per
// blank-line-separated block, each returned with its terminating blank line.
func loadEvents(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var events []string
	for _, block := range strings.Split(string(b), "\n\n") {
		if strings.TrimSpace(block) != "" {
			events = append(events, strings.TrimLeft(block, "\n")+"\n\n")
		}
	}
	require.NotEmpty(t, events, "fixture %s has no events", name)
	return events
}

// streamScript says how a fake server streams a fixture.
type streamScript struct {
	events []string
	// cutAfter, when > 0, sends only that many events.
	cutAfter int
	// abort closes the connection abruptly after the cut, instead of
	// ending the response cleanly.
	abort bool
	// stall, after the cut, waits for the client to go away.
	stall bool
	// pauseAfter, when > 0, pauses the stream for pause after that many
	// events.
	pauseAfter int
	pause      time.Duration
}

// serveSSE streams the script's events as text/event-stream, flushing each.
func serveSSE(s streamScript) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("request-id", "req_test_123")
		w.WriteHeader(http.StatusOK)
		events := s.events
		if s.cutAfter > 0 {
			events = events[:s.cutAfter]
		}
		rc := http.NewResponseController(w)
		for i, ev := range events {
			if s.pauseAfter > 0 && i == s.pauseAfter {
				time.Sleep(s.pause)
			}
			_, _ = io.WriteString(w, ev)
			_ = rc.Flush()
		}
		switch {
		case s.stall:
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		case s.abort:
			panic(http.ErrAbortHandler) // the server drops the connection mid-body
		}
	}
}

// serveError answers with an HTTP error.
func serveError(status int, headers map[string]string, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// recorder collects the events of one Stream call.
type recorder struct{ events []Event }

func (r *recorder) emit(ev Event) { r.events = append(r.events, ev) }

// terminal checks that exactly one Completed or Failed was emitted, as the
// last event, and returns it.
func (r *recorder) terminal(t *testing.T) Event {
	t.Helper()
	n := 0
	for _, ev := range r.events {
		switch ev.(type) {
		case Completed, Failed:
			n++
		}
	}
	require.Equal(t, 1, n, "want exactly one Completed or Failed, got events %#v", r.events)
	last := r.events[len(r.events)-1]
	switch last.(type) {
	case Completed, Failed:
	default:
		t.Fatalf("the last event is %T, want Completed or Failed", last)
	}
	return last
}

// texts returns the text deltas in order.
func (r *recorder) texts() []string {
	var out []string
	for _, ev := range r.events {
		if d, ok := ev.(TextDelta); ok {
			out = append(out, d.Text)
		}
	}
	return out
}

// toolArgs returns, per call id, the concatenated argument fragments, and
// the call ids in the order they were first seen.
func (r *recorder) toolArgs() (map[string]string, []string) {
	args := map[string]string{}
	var order []string
	for _, ev := range r.events {
		if d, ok := ev.(ToolCallDelta); ok {
			if _, seen := args[d.CallID]; !seen {
				order = append(order, d.CallID)
			}
			args[d.CallID] += d.Fragment
		}
	}
	return args, order
}

// streamOutcome runs one Stream call with a time limit.
func streamOutcome(t *testing.T, p Provider, ctx context.Context, req chat.Request) (*recorder, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rec := &recorder{}
	err := p.Stream(ctx, req, rec.emit)
	return rec, err
}

// logBuffer returns a logger that writes every level into a buffer.
func logBuffer() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), &buf
}

// wantOutcome is what a call should end with.
type wantOutcome struct {
	// kind is the failure kind; empty means success.
	kind       chat.ErrorKind
	status     int
	retryAfter time.Duration
	// msgHas lists texts the failure message must contain.
	msgHas []string

	texts   []string
	content string
	calls   []chat.ToolCall
	stop    string
	usage   chat.Usage
}

// check asserts the recorded events match w.
func (w wantOutcome) check(t *testing.T, rec *recorder) {
	t.Helper()
	last := rec.terminal(t)
	if w.kind != "" {
		f, ok := last.(Failed)
		require.Truef(t, ok, "want Failed(%s), got %#v", w.kind, last)
		assert.Equal(t, w.kind, f.Err.Kind, "kind; message: %s", f.Err.Message)
		assert.Equal(t, w.status, f.Err.StatusCode, "status")
		assert.Equal(t, w.retryAfter, f.Err.RetryAfter, "retry after")
		for _, s := range w.msgHas {
			assert.Contains(t, f.Err.Message, s)
		}
		assert.NotContains(t, f.Err.Message, testKey)
		assert.Equal(t, w.texts, rec.texts(), "deltas before the failure")
		return
	}
	c, ok := last.(Completed)
	require.Truef(t, ok, "want Completed, got %#v", last)
	assert.Equal(t, w.texts, rec.texts(), "text deltas")
	assert.Equal(t, strings.Join(rec.texts(), ""), c.Response.Message.Content, "content = concatenated deltas")
	assert.Equal(t, w.content, c.Response.Message.Content)
	assert.Equal(t, chat.RoleAssistant, c.Response.Message.Role)
	assert.Equal(t, w.stop, c.Response.StopReason)
	assert.Equal(t, w.usage, c.Response.Usage)
	if w.usage != (chat.Usage{}) {
		var reported chat.Usage // the last Usage event, which precedes Completed
		for _, ev := range rec.events {
			if u, ok := ev.(Usage); ok {
				reported = u.Usage
			}
		}
		assert.Equal(t, w.usage, reported, "the last Usage event reports the whole usage")
	}
	require.Len(t, c.Response.Message.ToolCalls, len(w.calls))
	args, order := rec.toolArgs()
	for i, want := range w.calls {
		got := c.Response.Message.ToolCalls[i]
		assert.Equal(t, want.ID, got.ID)
		assert.Equal(t, want.Name, got.Name)
		assert.JSONEq(t, string(want.Arguments), string(got.Arguments))
		if want.Malformed != "" {
			assert.Contains(t, got.Malformed, want.Malformed)
		} else {
			assert.Empty(t, got.Malformed)
		}
		if want.ID != "" && order != nil {
			assert.Equal(t, want.ID, order[i], "tool call deltas in the LLM's order")
			if frag := args[want.ID]; frag != "" && want.Malformed == "" {
				assert.Equal(t, string(got.Arguments), frag, "arguments = concatenated fragments")
			}
		}
	}
}
