package apitest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/api"
	"github.com/fsmgen/fsmgen/server/internal/apikey"
	"github.com/fsmgen/fsmgen/server/jobs"
	"github.com/fsmgen/fsmgen/server/monitors"
)

// bearer is the Authorization header of tok.
func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

// newKey creates a key through the API, with the admin key, and returns
// it with its token.
func (s *stack) newKey(name, scope string) api.KeyView {
	s.t.Helper()
	var v api.KeyView
	a := s.json("POST", "/api/keys", `{"name": "`+name+`", "scope": "`+scope+`"}`, http.StatusCreated, &v)
	require.Equal(s.t, "/api/keys/"+v.ID, a.header.Get("Location"))
	require.NotEmpty(s.t, v.Token)
	return v
}

// keys lists the keys through the API.
func (s *stack) keys() []api.KeyView {
	s.t.Helper()
	var out struct{ Keys []api.KeyView }
	s.json("GET", "/api/keys", "", http.StatusOK, &out)
	return out.Keys
}

// TestKeys creates, lists and revokes keys through the API: a key's token
// is shown once, a revoked key is refused at once and listed as revoked.
func TestKeys(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	list := s.keys()
	require.Len(t, list, 1)
	assert.Equal(t, []string{"admin", "admin", "admin"}, []string{list[0].ID, list[0].Name, list[0].Scope})
	require.NotNil(t, list[0].LastUsedAt, "the admin key was used to list the keys")

	ci := s.newKey("ci", apikey.ScopeReadOnly)
	laptop := s.newKey("laptop agent", apikey.ScopeReadWrite)
	assert.Regexp(t, `^key_[0-9a-f]{16}$`, ci.ID)
	assert.Regexp(t, `^fsm_[A-Za-z0-9_-]{43}$`, ci.Token)
	assert.NotEqual(t, ci.Token, laptop.Token)
	assert.Nil(t, ci.RevokedAt)
	assert.Nil(t, ci.LastUsedAt)

	// Each works with its scope.
	for _, tok := range []string{ci.Token, laptop.Token} {
		a := s.do(req{method: "GET", path: "/api/crons/monitors", header: bearer(tok)})
		assert.Equal(t, http.StatusOK, a.status, "%s", a.body)
	}

	list = s.keys()
	require.Len(t, list, 3, "oldest first")
	assert.Equal(t, []string{"admin", ci.ID, laptop.ID}, []string{list[0].ID, list[1].ID, list[2].ID})
	for _, k := range list {
		assert.Empty(t, k.Token, "a list shows no token")
	}
	assert.Equal(t, "laptop agent", list[2].Name)
	assert.Equal(t, apikey.ScopeReadWrite, list[2].Scope)
	require.NotNil(t, list[1].LastUsedAt, "ci was used")
	a := s.do(req{method: "GET", path: "/api/keys"})
	assert.NotContains(t, string(a.body), "fsm_", "no token, nor its hash, in the list")
	assert.NotContains(t, string(a.body), apikey.Hash(ci.Token))

	// Revoked: refused at once, listed revoked; revoking again keeps the
	// first time.
	var revoked api.KeyView
	s.json("DELETE", "/api/keys/"+ci.ID, "", http.StatusOK, &revoked)
	require.NotNil(t, revoked.RevokedAt)
	requireError(t, s.do(req{method: "GET", path: "/api/crons/monitors", header: bearer(ci.Token)}), 401, "invalid_token", `"ci"`, "revoked")
	var again api.KeyView
	s.json("DELETE", "/api/keys/"+ci.ID, "", http.StatusOK, &again)
	assert.Equal(t, revoked.RevokedAt, again.RevokedAt)
	list = s.keys()
	require.NotNil(t, list[1].RevokedAt)
	assert.Equal(t, revoked.RevokedAt, list[1].RevokedAt)
	assert.Nil(t, list[2].RevokedAt, "the other key lives")
	requireError(t, s.do(req{method: "DELETE", path: "/api/keys/key_0000000000000000"}), 404, "not_found", "key_0000000000000000")

	// The admin key revokes itself: nothing is served to it any more.
	s.json("DELETE", "/api/keys/admin", "", http.StatusOK, nil)
	requireError(t, s.do(req{method: "GET", path: "/api/keys"}), 401, "invalid_token", "revoked")
	a = s.do(req{method: "GET", path: "/api/crons/monitors", header: bearer(laptop.Token)})
	assert.Equal(t, http.StatusOK, a.status, "the other keys live on")
}

// TestKeysBadRequests sends what POST /api/keys refuses.
func TestKeysBadRequests(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	tests := []struct {
		name, body, code, message string
	}{
		{"no name", `{"scope": "read-only"}`, "invalid_name", "name"},
		{"a blank name", `{"name": "  ", "scope": "read-only"}`, "invalid_name", "name"},
		{"a control character", `{"name": "ci\u0007", "scope": "read-only"}`, "invalid_name", "control character"},
		{"a long name", `{"name": "` + strings.Repeat("é", 101) + `", "scope": "read-only"}`, "invalid_name", "at most 100 characters"},
		{"no scope", `{"name": "ci"}`, "invalid_scope", "read-only, read-write, admin"},
		{"an unknown scope", `{"name": "ci", "scope": "root"}`, "invalid_scope", `"root"`},
		{"an unknown field", `{"name": "ci", "scope": "read-only", "expires": 1}`, "bad_json", "expires"},
		{"a token asked for", `{"name": "ci", "scope": "read-only", "token": "fsm_mine"}`, "bad_json", "token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireError(t, s.do(req{method: "POST", path: "/api/keys", body: tt.body}), 400, tt.code, tt.message)
		})
	}
	assert.Len(t, s.keys(), 1, "no key was made")
}

// TestScopes goes through every route of the API with a key of each
// scope: a read-only key reads and is refused every change (403
// read_only_key), a read-write key does everything but the keys (403
// admin_key_required), an admin key everything; pings need no key.
func TestScopes(t *testing.T) {
	t.Parallel()
	sched := jobs.Settings{Schedule: monitors.Schedule{Type: "cron", Expression: "0 3 1 1 *"}, Timezone: "UTC", Timeout: time.Minute, BackoffBase: time.Second, BackoffCap: time.Second}
	s := startJobs(t, api.Config{}, &jobs.Job{ID: "noop", Name: "noop", Enabled: true, Settings: sched, Func: func(ctx context.Context) (string, error) { return "", nil }})
	ro := s.newKey("reader", apikey.ScopeReadOnly)
	rw := s.newKey("writer", apikey.ScopeReadWrite)
	spare := s.newKey("spare", apikey.ScopeReadOnly)
	th := pushBody(t, 1, threadJSON(t, "t-1", 1, "hello"))
	routes := []struct {
		method, path, body string
		need               string
	}{
		{"GET", "/api/crons/monitors", "", apikey.ScopeReadOnly},
		{"POST", "/api/crons/monitors", `{"slug": "new-{scope}", "schedule": {"type": "interval", "seconds": 3600}}`, apikey.ScopeReadWrite},
		{"GET", "/api/crons/monitors/job", "", apikey.ScopeReadOnly},
		{"PATCH", "/api/crons/monitors/job", `{"name": "Job"}`, apikey.ScopeReadWrite},
		{"DELETE", "/api/crons/monitors/new-{scope}", "", apikey.ScopeReadWrite},
		{"GET", "/api/crons/monitors/job/checkins", "", apikey.ScopeReadOnly},
		{"POST", "/api/crons/monitors/job/checkins", `{"status": "ok"}`, apikey.ScopeReadWrite},
		{"GET", "/api/crons/preview?schedule=@daily", "", apikey.ScopeReadOnly},
		{"GET", "/api/jobs", "", apikey.ScopeReadOnly},
		{"GET", "/api/jobs/noop/runs", "", apikey.ScopeReadOnly},
		{"POST", "/api/jobs/noop/trigger", "", apikey.ScopeReadWrite},
		{"POST", "/api/jobs/runs/nope/cancel", "", apikey.ScopeReadWrite},
		{"GET", "/api/threads", "", apikey.ScopeReadOnly},
		{"GET", "/api/threads/t-1", "", apikey.ScopeReadOnly},
		{"PUT", "/api/threads/t-1", th, apikey.ScopeReadWrite},
		{"GET", "/api/keys", "", apikey.ScopeAdmin},
		{"POST", "/api/keys", `{"name": "by {scope}", "scope": "read-only"}`, apikey.ScopeAdmin},
		{"DELETE", "/api/keys/" + spare.ID, "", apikey.ScopeAdmin},
	}
	v := s.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 3600}}`)
	for _, key := range []struct{ scope, token string }{{apikey.ScopeReadOnly, ro.Token}, {apikey.ScopeReadWrite, rw.Token}, {apikey.ScopeAdmin, token}} {
		for _, r := range routes {
			t.Run(key.scope+" "+r.method+" "+r.path, func(t *testing.T) {
				fill := strings.NewReplacer("{scope}", key.scope)
				header := bearer(key.token)
				if r.body != "" {
					header["Content-Type"] = "application/json"
				}
				a := s.do(req{method: r.method, path: r.path, body: fill.Replace(r.body), header: header})
				if apikey.Allows(key.scope, r.need) {
					assert.NotContains(t, []int{401, 403}, a.status, "%s", a.body)
					assert.Less(t, a.status, 500, "%s", a.body)
					return
				}
				code := "read_only_key"
				if r.need == apikey.ScopeAdmin {
					code = "admin_key_required"
				}
				requireError(t, a, 403, code, key.scope)
			})
		}
	}
	// A stream is a read; pings need no key.
	s.streamWith(ro.Token)
	a := s.do(req{method: "GET", path: "/ping/" + v.PingKey, header: map[string]string{"Authorization": ""}})
	assert.Equal(t, http.StatusOK, a.status, "%s", a.body)
}

// TestThreadsOwned pushes threads with two keys: each lists and reads its
// own only (another key's thread is not found, as if absent), and a push
// of an ID another key holds makes a thread of the pusher's, leaving the
// other alone.
func TestThreadsOwned(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	alice := s.newKey("alice", apikey.ScopeReadWrite)
	bob := s.newKey("bob", apikey.ScopeReadWrite)
	push := func(tok, id string, rev int64, prompt string, status int) {
		t.Helper()
		a := s.do(req{method: "PUT", path: "/api/threads/" + id, body: pushBody(t, rev, threadJSON(t, id, rev, prompt)), header: bearer(tok)})
		require.Equal(t, status, a.status, "%s", a.body)
	}
	read := func(tok, id string) (api.ThreadView, int) {
		t.Helper()
		a := s.do(req{method: "GET", path: "/api/threads/" + id, header: bearer(tok)})
		var v api.ThreadView
		if a.status == http.StatusOK {
			require.NoError(t, json.Unmarshal(a.body, &v))
		} else {
			requireError(t, a, 404, "not_found", id)
		}
		return v, a.status
	}
	list := func(tok string) []string {
		t.Helper()
		a := s.do(req{method: "GET", path: "/api/threads", header: bearer(tok)})
		require.Equal(t, http.StatusOK, a.status, "%s", a.body)
		var out struct{ Threads []api.ThreadView }
		require.NoError(t, json.Unmarshal(a.body, &out))
		var ids []string
		for _, th := range out.Threads {
			ids = append(ids, th.ID+" "+th.FirstPrompt)
		}
		return ids
	}

	push(alice.Token, "t-1", 10, "alice's secret", http.StatusOK)
	push(alice.Token, "t-2", 1, "alice's other", http.StatusOK)
	_, status := read(bob.Token, "t-1")
	assert.Equal(t, http.StatusNotFound, status, "bob reads no thread of alice")
	_, status = read(token, "t-1")
	assert.Equal(t, http.StatusNotFound, status, "nor does the admin key")
	assert.Empty(t, list(bob.Token))
	assert.Empty(t, list(token))

	// Bob pushes t-1, at an older revision and a newer one: his own.
	push(bob.Token, "t-1", 5, "bob's", http.StatusOK)
	push(bob.Token, "t-1", 50, "bob's, newer", http.StatusOK)
	mine, _ := read(alice.Token, "t-1")
	assert.Equal(t, int64(10), mine.Revision, "alice's t-1 is hers, unchanged")
	assert.Equal(t, "alice's secret", mine.FirstPrompt)
	his, _ := read(bob.Token, "t-1")
	assert.Equal(t, int64(50), his.Revision)
	assert.Equal(t, "bob's, newer", his.FirstPrompt)
	assert.Equal(t, []string{"t-1 alice's secret", "t-2 alice's other"}, list(alice.Token))
	assert.Equal(t, []string{"t-1 bob's, newer"}, list(bob.Token))
	// Alice's revisions still count against hers only.
	push(alice.Token, "t-1", 9, "older", http.StatusConflict)
	push(alice.Token, "t-1", 11, "alice's newer", http.StatusOK)
	his, _ = read(bob.Token, "t-1")
	assert.Equal(t, int64(50), his.Revision)
}

// TestRevokedWithinTTL revokes a key and resets the admin key behind the
// server's back, as another instance does: the server refuses both once
// apikey.TTL has passed on its clock, and not before; an event stream of
// the revoked key ends.
func TestRevokedWithinTTL(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{at: time.Now()}
	s := start(t, api.Config{Now: clk.now})
	rw := s.newKey("writer", apikey.ScopeReadWrite)
	ok := func(tok string) int {
		t.Helper()
		return s.do(req{method: "GET", path: "/api/crons/monitors", header: bearer(tok)}).status
	}
	require.Equal(t, http.StatusOK, ok(rw.Token))
	require.Equal(t, http.StatusOK, ok(token))
	c := s.streamWith(rw.Token)

	// Another instance, or -reset-token, writes to the store.
	st := s.store
	_, err := st.RevokeKey(context.Background(), rw.ID, time.Now())
	require.NoError(t, err)
	_, err = apikey.Bootstrap(context.Background(), st, true, time.Now())
	require.NoError(t, err)
	clk.add(apikey.TTL - time.Millisecond)
	assert.Equal(t, http.StatusOK, ok(rw.Token), "read less than TTL ago")
	assert.Equal(t, http.StatusOK, ok(token), "read less than TTL ago")
	clk.add(time.Millisecond)
	requireError(t, s.do(req{method: "GET", path: "/api/crons/monitors", header: bearer(rw.Token)}), 401, "invalid_token", "revoked")
	requireError(t, s.do(req{method: "GET", path: "/api/crons/monitors"}), 401, "invalid_token", "not one of")

	// The stream looks the key up again every TTL (of the real clock,
	// its ticker's), and ends.
	c.waitEnd()
}

// fakeClock is the API's clock, moved by the test.
type fakeClock struct {
	mu sync.Mutex
	at time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(d)
}
