package api

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fsmgen/fsmgen/internal/threadwire"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/store"
)

// DefaultMaxThread is the largest thread a push may carry by default, in
// bytes of JSON (after gzip is undone).
const DefaultMaxThread = 32 << 20

// Limits of the threads' list.
const (
	defThreads     = 100
	maxThreads     = 1000
	maxFirstPrompt = 200
)

// ThreadView is a synced thread as the API shows it; Thread is set only
// when one thread is asked for.
type ThreadView struct {
	ID          string          `json:"id"`
	Revision    int64           `json:"revision"`
	Workspace   string          `json:"workspace"`
	Provider    string          `json:"provider"`
	Model       string          `json:"model"`
	Created     time.Time       `json:"created"`
	Updated     time.Time       `json:"updated"`
	SyncedAt    time.Time       `json:"synced_at"`
	FirstPrompt string          `json:"first_prompt"`
	Tokens      int64           `json:"tokens"`
	Messages    int             `json:"messages"`
	Thread      json.RawMessage `json:"thread,omitempty"`
}

func threadView(t *store.Thread) ThreadView {
	return ThreadView{ID: t.ID, Revision: t.Revision, Workspace: t.Workspace, Provider: t.Provider, Model: t.Model,
		Created: t.Created.UTC(), Updated: t.Updated.UTC(), SyncedAt: t.SyncedAt.UTC(), FirstPrompt: t.FirstPrompt,
		Tokens: t.Tokens, Messages: t.Messages, Thread: t.Body}
}

// threadID reads the {id} of the path, a thread ID (threadwire.CheckID).
func threadID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if err := threadwire.CheckID(id); err != nil {
		return "", badRequest("invalid_id", "%v", err)
	}
	return id, nil
}

// putThread answers PUT /api/threads/{id}: the agent's push of a thread,
// which belongs to the API key that pushes it (another key's thread of the
// same ID is another thread).
func (s *Server) putThread(w http.ResponseWriter, r *http.Request) {
	id, err := threadID(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	body, err := s.readThreadBody(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	row, err := s.checkThread(id, body)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	row.Owner = requestKey(r).ID
	row.SyncedAt = s.now().UTC().Truncate(time.Microsecond)
	out, rev, err := s.store.PutThread(r.Context(), row)
	if err != nil {
		s.log.Error("a thread could not be stored", "thread", id, "err", err)
		w.Header().Set("Retry-After", "1")
		writeError(w, &monitorengine.Error{Status: 503, Code: "store_unavailable", Message: "the thread could not be stored (see the server's log): retry"})
		return
	}
	if out == store.ThreadStale {
		writeError(w, &monitorengine.Error{Status: 409, Code: "stale_revision", Message: fmt.Sprintf("the server holds revision %d of thread %s, which is newer than revision %d or the same with other content: nothing was changed; push a newer revision", rev, id, row.Revision)})
		return
	}
	writeJSON(w, http.StatusOK, threadwire.PushReply{ID: id, Revision: rev, Stored: out == store.ThreadStored})
}

// readThreadBody reads a push's body: JSON, gzipped or not, at most
// s.maxThread bytes once unzipped.
func (s *Server) readThreadBody(r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !jsonType(ct) {
		return nil, &monitorengine.Error{Status: 415, Code: "unsupported_media_type", Message: fmt.Sprintf("the body is %s: send application/json", ct)}
	}
	// The envelope adds a few bytes to the thread.
	limit := s.maxThread + 1024
	var in io.Reader = r.Body
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(io.LimitReader(r.Body, limit+1))
		if err != nil {
			return nil, badRequest("bad_body", "the body is not gzip: %v", err)
		}
		defer zr.Close()
		in = zr
	default:
		return nil, &monitorengine.Error{Status: 415, Code: "unsupported_encoding", Message: fmt.Sprintf("Content-Encoding %q: send the body as it is, or gzip", enc)}
	}
	data, err := io.ReadAll(io.LimitReader(in, limit+1))
	if err != nil {
		return nil, badRequest("bad_body", "the body could not be read: %v", err)
	}
	if int64(len(data)) > limit {
		return nil, &monitorengine.Error{Status: 413, Code: "thread_too_large", Message: fmt.Sprintf("the thread is larger than the %d bytes this server takes (its -max-thread-bytes)", s.maxThread)}
	}
	return data, nil
}

// checkThread validates a push of thread id, strictly, and makes its row.
func (s *Server) checkThread(id string, body []byte) (*store.Thread, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, badRequest("bad_json", `the body is empty: send {"revision": N, "thread": {…}}`)
	}
	if !utf8.Valid(body) {
		return nil, badRequest("bad_json", "the body is not valid UTF-8")
	}
	var push threadwire.PushBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&push); err != nil {
		return nil, badRequest("bad_json", "the body is not a push of a thread: %s", jsonProblem(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badRequest("bad_json", "the body holds data after the JSON object (at byte %d): send one JSON object", dec.InputOffset())
	}
	if push.Revision <= 0 {
		return nil, badRequest("invalid_revision", "revision %d: give a positive number that grows with every push of the thread", push.Revision)
	}
	if len(push.Thread) == 0 || string(push.Thread) == "null" {
		return nil, badRequest("invalid_thread", `the body has no "thread"`)
	}
	if int64(len(push.Thread)) > s.maxThread {
		return nil, &monitorengine.Error{Status: 413, Code: "thread_too_large", Message: fmt.Sprintf("the thread is larger than the %d bytes this server takes (its -max-thread-bytes)", s.maxThread)}
	}
	var t threadwire.Thread
	tdec := json.NewDecoder(bytes.NewReader(push.Thread))
	tdec.DisallowUnknownFields()
	if err := tdec.Decode(&t); err != nil {
		return nil, badRequest("invalid_thread", "thread: %s", jsonProblem(err))
	}
	switch {
	case t.ID != id:
		return nil, badRequest("invalid_thread", "thread.id %q is not the %q of the path", t.ID, id)
	case t.Version != threadwire.Version:
		return nil, badRequest("invalid_thread", "thread.version %d: this server keeps threads of format version %d; run an agent and a server of the same release", t.Version, threadwire.Version)
	case t.Created.IsZero() || t.Updated.IsZero():
		return nil, badRequest("invalid_thread", "thread.created and thread.updated must be set")
	}
	msgs, err := t.Decode()
	if err != nil {
		var me *threadwire.MessageError
		if errors.As(err, &me) && !errors.Is(err, threadwire.ErrNoRole) {
			return nil, badRequest("invalid_thread", "thread.messages[%d]: %s", me.Index, jsonProblem(me.Err))
		}
		return nil, badRequest("invalid_thread", "thread.%v", err)
	}
	first := threadwire.FirstPrompt(msgs, t.QueuedInput)
	sum := sha256.Sum256(push.Thread)
	return &store.Thread{
		ID: id, Revision: push.Revision, Digest: hex.EncodeToString(sum[:]),
		Workspace: t.Workspace, Provider: t.Provider, Model: t.Model, FirstPrompt: shortLine(first, maxFirstPrompt),
		Tokens:   int64(t.Ledger.Total.InputTokens) + int64(t.Ledger.Total.OutputTokens),
		Messages: len(t.Messages),
		Created:  t.Created.UTC().Truncate(time.Microsecond), Updated: t.Updated.UTC().Truncate(time.Microsecond),
		Body: push.Thread,
	}, nil
}

// shortLine returns s on one line, cut to at most n characters.
func shortLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

// listThreads answers GET /api/threads: the threads the request's key
// pushed, the most recently updated first.
func (s *Server) listThreads(w http.ResponseWriter, r *http.Request) {
	limit, err := intParam(r, "limit", defThreads, 1, maxThreads)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	list, err := s.store.Threads(r.Context(), requestKey(r).ID, limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	views := make([]ThreadView, len(list))
	for i, t := range list {
		views[i] = threadView(t)
	}
	writeJSON(w, http.StatusOK, map[string]any{"threads": views})
}

// getThread answers GET /api/threads/{id}: the request's key's thread,
// whole. Another key's thread is not found (404), as if it did not exist.
func (s *Server) getThread(w http.ResponseWriter, r *http.Request) {
	id, err := threadID(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	t, err := s.store.Thread(r.Context(), requestKey(r).ID, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if t == nil {
		s.fail(w, r, &monitorengine.Error{Status: 404, Code: "not_found", Message: fmt.Sprintf("no thread %s has been synced to this server with this API key", id)})
		return
	}
	writeJSON(w, http.StatusOK, threadView(t))
}
