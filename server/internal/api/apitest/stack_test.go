package apitest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/api"
	"github.com/fsmgen/fsmgen/server/internal/apikey"
	jobsengine "github.com/fsmgen/fsmgen/server/internal/jobengine"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/pgtest"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/store/postgres"
	"github.com/fsmgen/fsmgen/server/internal/store/sqlite"
	"github.com/fsmgen/fsmgen/server/jobs"
)

// stack is the server in-process: SQLite in a temporary directory (or a
// Postgres database, in the run of TestOnPostgres), the engine running,
// the handlers on an httptest server.
type stack struct {
	t      *testing.T
	url    string
	engine *monitorengine.Engine
	store  store.Store
}

// start starts the stack; c's Engine and Store are filled in, and the
// store holds the admin key of token.
func start(t *testing.T, c api.Config) *stack {
	t.Helper()
	return startJobs(t, c)
}

// startJobs is start with the background jobs defs run by a jobs engine
// (c.Jobs), when there are any.
func startJobs(t *testing.T, c api.Config, defs ...*jobs.Job) *stack {
	t.Helper()
	ctx := context.Background()
	var st store.Store
	var err error
	if pgtest.OnPostgres() {
		st, err = postgres.Open(ctx, pgtest.DB(t))
	} else {
		st, err = sqlite.Open(ctx, filepath.Join(t.TempDir(), "server.db"))
	}
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	engine, err := monitorengine.New(ctx, monitorengine.Config{Store: st, Instance: "test"})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- engine.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		assert.NoError(t, <-stopped)
	})
	c.Engine = engine
	c.Store = st
	if len(defs) > 0 {
		c.Jobs, err = jobsengine.New(ctx, jobsengine.Config{Store: st, Monitors: engine, Jobs: defs, Instance: "test"})
		require.NoError(t, err)
		jobsCtx, stopJobs := context.WithCancel(ctx)
		jobsStopped := make(chan error, 1)
		go func() { jobsStopped <- c.Jobs.Run(jobsCtx) }()
		t.Cleanup(func() {
			stopJobs()
			assert.NoError(t, <-jobsStopped)
		})
		// A trigger before the jobs are taken over is refused with 503
		// (jobs_loading), as it should be: the tests start once they run.
		select {
		case <-c.Jobs.Ready():
		case err := <-jobsStopped:
			require.FailNow(t, "the jobs engine stopped before it ran the jobs", "%v", err)
		case <-time.After(time.Minute):
			require.FailNow(t, "the jobs engine did not run the jobs within a minute")
		}
	}
	_, err = st.AddKey(ctx, &store.Key{ID: apikey.AdminID, Name: "admin", Scope: apikey.ScopeAdmin, Hash: apikey.Hash(token), CreatedAt: time.Now().UTC().Truncate(time.Microsecond)})
	require.NoError(t, err)
	srv := httptest.NewServer(api.New(c))
	t.Cleanup(func() {
		engine.Hub().Close() // the event streams end, as on a shutdown
		srv.Close()
	})
	return &stack{t: t, url: srv.URL, engine: engine, store: st}
}

// req is a request to the stack.
type req struct {
	method, path string
	body         string
	header       map[string]string // Authorization: the token unless set ("" for none)
}

// answer is the stack's answer.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (s *stack) do(r req) answer {
	s.t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr, err := http.NewRequest(r.method, s.url+r.path, body)
	require.NoError(s.t, err)
	if _, ok := r.header["Authorization"]; !ok {
		hr.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range r.header {
		if v != "" {
			hr.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(hr)
	require.NoError(s.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	return answer{status: resp.StatusCode, header: resp.Header, body: data}
}

// json sends a request and decodes its answer into out, requiring status.
func (s *stack) json(method, path, body string, status int, out any) answer {
	s.t.Helper()
	a := s.do(req{method: method, path: path, body: body})
	require.Equal(s.t, status, a.status, "%s %s: %s", method, path, a.body)
	if out != nil {
		require.NoError(s.t, json.Unmarshal(a.body, out), "%s", a.body)
	}
	return a
}

func (s *stack) create(body string) *monitorengine.View {
	s.t.Helper()
	var v monitorengine.View
	s.json("POST", "/api/crons/monitors", body, http.StatusCreated, &v)
	return &v
}

func (s *stack) get(slug string) *monitorengine.View {
	s.t.Helper()
	var v monitorengine.View
	s.json("GET", "/api/crons/monitors/"+slug, "", http.StatusOK, &v)
	return &v
}

func (s *stack) patch(slug, body string) *monitorengine.View {
	s.t.Helper()
	var v monitorengine.View
	s.json("PATCH", "/api/crons/monitors/"+slug, body, http.StatusOK, &v)
	return &v
}

// ping pings path (after /ping/) and returns the check-in's id.
func (s *stack) ping(method, path, body string) string {
	s.t.Helper()
	var out struct {
		CheckinID string `json:"checkin_id"`
	}
	a := s.do(req{method: method, path: "/ping/" + path, body: body, header: map[string]string{"Authorization": ""}})
	require.Equal(s.t, http.StatusOK, a.status, "ping %s: %s", path, a.body)
	require.NoError(s.t, json.Unmarshal(a.body, &out))
	require.Len(s.t, out.CheckinID, 32)
	return out.CheckinID
}

func (s *stack) checkins(slug string, limit int) []monitorengine.CheckinView {
	s.t.Helper()
	var out struct {
		Checkins []monitorengine.CheckinView `json:"checkins"`
	}
	path := "/api/crons/monitors/" + slug + "/checkins"
	if limit > 0 {
		path += "?limit=" + strconv.Itoa(limit)
	}
	s.json("GET", path, "", http.StatusOK, &out)
	return out.Checkins
}

// apiError is the body of every error.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// requireError checks that a is the error status with code, as JSON, and
// that its message holds each of message.
func requireError(t *testing.T, a answer, status int, code string, message ...string) {
	t.Helper()
	require.Equal(t, status, a.status, "%s", a.body)
	assert.Equal(t, "application/json", a.header.Get("Content-Type"))
	var e apiError
	require.NoError(t, json.Unmarshal(a.body, &e), "the error is JSON: %s", a.body)
	assert.Equal(t, code, e.Error.Code, "%s", a.body)
	for _, m := range message {
		assert.Contains(t, e.Error.Message, m)
	}
}
