package apitest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
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

const token = "fsm_test-token"

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestOnPostgres runs every other test again on Postgres, in a child
// process, beside this one's.
func TestOnPostgres(t *testing.T) {
	t.Parallel()
	pgtest.Again(t)
}

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

func TestAuth(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	v := s.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 3600}}`)
	tests := []struct {
		name   string
		method string
		path   string
		auth   string
		status int
		code   string
	}{
		{"no header", "GET", "/api/crons/monitors", "", 401, "unauthorized"},
		{"empty bearer", "GET", "/api/crons/monitors", "Bearer ", 401, "unauthorized"},
		{"basic scheme", "GET", "/api/crons/monitors", "Basic Zm9vOmJhcg==", 401, "unauthorized"},
		{"the token without a scheme", "GET", "/api/crons/monitors", token, 401, "unauthorized"},
		{"wrong token", "GET", "/api/crons/monitors", "Bearer fsm_wrong", 401, "invalid_token"},
		{"the token with a suffix", "GET", "/api/crons/monitors", "Bearer " + token + "x", 401, "invalid_token"},
		{"another scheme with the token", "GET", "/api/crons/monitors", "Token " + token, 401, "unauthorized"},
		{"wrong token on a monitor", "DELETE", "/api/crons/monitors/job", "Bearer fsm_wrong", 401, "invalid_token"},
		{"no token on the stream", "GET", "/api/crons/stream", "", 401, "unauthorized"},
		{"no token on the preview", "GET", "/api/crons/preview?schedule=@daily", "", 401, "unauthorized"},
		{"no token before the method", "PUT", "/api/crons/monitors", "", 401, "unauthorized"},
		{"the token", "GET", "/api/crons/monitors", "Bearer " + token, 200, ""},
		{"the scheme is case-insensitive", "GET", "/api/crons/monitors", "bearer " + token, 200, ""},
		{"a ping needs no token", "GET", "/ping/" + v.PingKey, "", 200, ""},
		{"a ping ignores a wrong token", "POST", "/ping/" + v.PingKey + "/fail", "Bearer fsm_wrong", 200, ""},
		{"health needs no token", "GET", "/health", "", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := s.do(req{method: tt.method, path: tt.path, header: map[string]string{"Authorization": tt.auth}})
			if tt.code == "" {
				assert.Equal(t, tt.status, a.status, "%s", a.body)
				return
			}
			requireError(t, a, tt.status, tt.code)
			assert.Contains(t, a.header.Get("WWW-Authenticate"), "Bearer")
		})
	}
	assert.Equal(t, []string{monitorengine.CheckinError, monitorengine.CheckinOK}, statuses(s.checkins("job", 0)), "the pings were recorded")
}

// statuses returns the check-ins' statuses, as listed (newest first).
func statuses(list []monitorengine.CheckinView) []string {
	var out []string
	for _, c := range list {
		out = append(out, c.Status)
	}
	return out
}

// TestBadRequests sends every kind of malformed request: each gets its
// documented 4xx, with a JSON error whose code is stable and whose message
// says what is wrong.
func TestBadRequests(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	job := s.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 3600}}`)
	off := s.create(`{"slug": "off", "schedule": {"type": "interval", "seconds": 3600}}`)
	s.patch("off", `{"status": "disabled"}`)
	finished := s.ping("GET", job.PingKey+"/start", "")
	s.ping("GET", job.PingKey+"?checkin_id="+finished, "")
	running := s.ping("GET", job.PingKey+"/start", "")
	other := s.create(`{"slug": "other", "schedule": {"type": "interval", "seconds": 3600}}`)
	otherRun := s.ping("GET", other.PingKey+"/start", "")

	valid := func(extra string) string {
		return `{"slug": "new", "schedule": {"type": "interval", "seconds": 60}` + extra + `}`
	}
	cron := func(expr string) string {
		return `{"slug": "new", "schedule": {"type": "cron", "expression": "` + expr + `"}}`
	}
	asJSON := map[string]string{"Content-Type": "application/json"}
	big := strings.Repeat(" ", 64<<10) + valid("")
	tests := []struct {
		name    string
		method  string
		path    string
		header  map[string]string
		body    string
		status  int
		code    string
		message []string
	}{
		// The body.
		{"bad JSON", "POST", "/api/crons/monitors", asJSON, `{"slug": }`, 400, "bad_json", []string{"invalid JSON at byte 10"}},
		{"JSON cut short", "POST", "/api/crons/monitors", asJSON, `{"slug": "x"`, 400, "bad_json", []string{"ends too early"}},
		{"trailing value", "POST", "/api/crons/monitors", asJSON, valid("") + ` {}`, 400, "bad_json", []string{"data after the JSON object", "send one JSON object"}},
		{"trailing brace", "POST", "/api/crons/monitors", asJSON, valid("") + `}`, 400, "bad_json", []string{"after the JSON object"}},
		{"trailing bracket", "POST", "/api/crons/monitors", asJSON, valid("") + `]`, 400, "bad_json", []string{"after the JSON object"}},
		{"trailing garbage", "POST", "/api/crons/monitors", asJSON, valid("") + `x`, 400, "bad_json", []string{"after the JSON object"}},
		{"unknown field", "POST", "/api/crons/monitors", asJSON, valid(`, "colour": "red"`), 400, "bad_json", []string{`unknown field "colour"`}},
		{"unknown nested field", "POST", "/api/crons/monitors", asJSON, `{"slug": "new", "schedule": {"type": "interval", "every": 60}}`, 400, "bad_json", []string{`unknown field "every"`}},
		{"wrong type", "POST", "/api/crons/monitors", asJSON, `{"slug": 5}`, 400, "bad_json", []string{"field slug", "want a string", "found number"}},
		{"wrong nested type", "POST", "/api/crons/monitors", asJSON, `{"slug": "new", "schedule": {"type": "interval", "seconds": "60"}}`, 400, "bad_json", []string{"field schedule.seconds", "want a whole number", "found string"}},
		{"fraction", "POST", "/api/crons/monitors", asJSON, valid(`, "checkin_margin_seconds": 1.5`), 400, "bad_json", []string{"field checkin_margin_seconds: want a whole number (digits, no fraction or exponent), found 1.5"}},
		{"nested fraction", "POST", "/api/crons/monitors", asJSON, `{"slug": "new", "schedule": {"type": "interval", "seconds": 1.5}}`, 400, "bad_json", []string{"field schedule.seconds: want a whole number (digits, no fraction or exponent), found 1.5"}},
		{"huge number", "POST", "/api/crons/monitors", asJSON, valid(`, "max_runtime_seconds": 1e30`), 400, "bad_json", []string{"field max_runtime_seconds: want a whole number (digits, no fraction or exponent), found 1e30"}},
		{"number out of range", "POST", "/api/crons/monitors", asJSON, valid(`, "max_runtime_seconds": 99999999999999999999`), 400, "bad_json", []string{"field max_runtime_seconds: want a whole number in range, found 99999999999999999999"}},
		{"not an object", "POST", "/api/crons/monitors", asJSON, `[1, 2]`, 400, "bad_json", []string{"want a JSON object", "found array"}},
		{"empty body", "POST", "/api/crons/monitors", asJSON, ``, 400, "bad_json", []string{"empty"}},
		{"blank body", "POST", "/api/crons/monitors", asJSON, " \n\t", 400, "bad_json", []string{"empty"}},
		{"JSON with a charset", "PATCH", "/api/crons/monitors/job", map[string]string{"Content-Type": "application/json; charset=utf-8"}, `{"name": nope}`, 400, "bad_json", nil},
		{"text/plain", "POST", "/api/crons/monitors", map[string]string{"Content-Type": "text/plain"}, valid(""), 415, "unsupported_media_type", []string{"text/plain", "application/json"}},
		{"a JSON look-alike type", "POST", "/api/crons/monitors", map[string]string{"Content-Type": "application/jsonp"}, valid(""), 415, "unsupported_media_type", []string{"application/jsonp"}},
		{"too large", "POST", "/api/crons/monitors", asJSON, big, 413, "body_too_large", []string{"65536"}},
		{"bad JSON on a patch", "PATCH", "/api/crons/monitors/job", asJSON, `{"name": nope}`, 400, "bad_json", []string{"invalid JSON"}},
		{"unknown field on a patch", "PATCH", "/api/crons/monitors/job", asJSON, `{"ping_key": "mine"}`, 400, "bad_json", []string{`unknown field "ping_key"`}},

		// The monitor's fields.
		{"no slug", "POST", "/api/crons/monitors", nil, `{"schedule": {"type": "interval", "seconds": 60}}`, 400, "invalid_slug", []string{"missing"}},
		{"slug with capitals", "POST", "/api/crons/monitors", nil, `{"slug": "Backup", "schedule": {"type": "interval", "seconds": 60}}`, 400, "invalid_slug", []string{`"Backup" is not a slug`}},
		{"slug with a space", "POST", "/api/crons/monitors", nil, `{"slug": "a b", "schedule": {"type": "interval", "seconds": 60}}`, 400, "invalid_slug", nil},
		{"slug starting with -", "POST", "/api/crons/monitors", nil, `{"slug": "-a", "schedule": {"type": "interval", "seconds": 60}}`, 400, "invalid_slug", nil},
		{"empty slug", "POST", "/api/crons/monitors", nil, `{"slug": "", "schedule": {"type": "interval", "seconds": 60}}`, 400, "invalid_slug", nil},
		{"slug of 65", "POST", "/api/crons/monitors", nil, `{"slug": "` + strings.Repeat("a", 65) + `", "schedule": {"type": "interval", "seconds": 60}}`, 400, "invalid_slug", []string{"1 to 64"}},
		{"blank name", "POST", "/api/crons/monitors", nil, valid(`, "name": "  "`), 400, "invalid_name", []string{"1 to 200"}},
		{"name of 201", "POST", "/api/crons/monitors", nil, valid(`, "name": "` + strings.Repeat("é", 201) + `"`), 400, "invalid_name", []string{"1 to 200"}},
		{"no schedule", "POST", "/api/crons/monitors", nil, `{"slug": "new"}`, 400, "invalid_schedule", []string{"missing"}},
		{"schedule without a type", "POST", "/api/crons/monitors", nil, `{"slug": "new", "schedule": {}}`, 400, "invalid_schedule", []string{"no type"}},
		{"unknown schedule type", "POST", "/api/crons/monitors", nil, `{"slug": "new", "schedule": {"type": "weekly"}}`, 400, "invalid_schedule", []string{`"weekly"`}},
		{"minute out of range", "POST", "/api/crons/monitors", nil, cron("60 0 * * *"), 400, "invalid_schedule", []string{`minute field "60"`, "0-59"}},
		{"hour out of range", "POST", "/api/crons/monitors", nil, cron("0 24 * * *"), 400, "invalid_schedule", []string{`hour field "24"`}},
		{"four fields", "POST", "/api/crons/monitors", nil, cron("* * * *"), 400, "invalid_schedule", []string{"4 fields, want 5"}},
		{"six fields", "POST", "/api/crons/monitors", nil, cron("0 * * * * *"), 400, "invalid_schedule", []string{"6 fields", "seconds"}},
		{"empty expression", "POST", "/api/crons/monitors", nil, cron(""), 400, "invalid_schedule", []string{"empty expression"}},
		{"bad day of week", "POST", "/api/crons/monitors", nil, cron("0 0 * * FOO"), 400, "invalid_schedule", []string{"day-of-week"}},
		{"never runs", "POST", "/api/crons/monitors", nil, cron("0 0 30 2 *"), 400, "invalid_schedule", []string{"day-of-month"}},
		{"@reboot", "POST", "/api/crons/monitors", nil, cron("@reboot"), 400, "invalid_schedule", []string{"@reboot"}},
		{"interval 0", "POST", "/api/crons/monitors", nil, `{"slug": "new", "schedule": {"type": "interval", "seconds": 0}}`, 400, "invalid_schedule", []string{"at least 1 second"}},
		{"interval negative", "POST", "/api/crons/monitors", nil, `{"slug": "new", "schedule": {"type": "interval", "seconds": -5}}`, 400, "invalid_schedule", []string{"at least 1 second"}},
		{"interval over a year", "POST", "/api/crons/monitors", nil, `{"slug": "new", "schedule": {"type": "interval", "seconds": 31622401}}`, 400, "invalid_schedule", []string{"366 days"}},
		{"unknown time zone", "POST", "/api/crons/monitors", nil, `{"slug": "new", "schedule": {"type": "cron", "expression": "@daily"}, "timezone": "Mars/Olympus"}`, 400, "invalid_timezone", []string{`"Mars/Olympus"`}},
		{"unknown time zone with an interval", "POST", "/api/crons/monitors", nil, valid(`, "timezone": "Mars/Olympus"`), 400, "invalid_timezone", []string{`"Mars/Olympus"`}},
		{"Local is no time zone", "POST", "/api/crons/monitors", nil, valid(`, "timezone": "Local"`), 400, "invalid_timezone", nil},
		{"a path is no time zone", "POST", "/api/crons/monitors", nil, valid(`, "timezone": "../../etc/passwd"`), 400, "invalid_timezone", nil},
		{"negative margin", "POST", "/api/crons/monitors", nil, valid(`, "checkin_margin_seconds": -1`), 400, "invalid_checkin_margin_seconds", []string{"-1", "0 and 604800"}},
		{"margin over a week", "POST", "/api/crons/monitors", nil, valid(`, "checkin_margin_seconds": 604801`), 400, "invalid_checkin_margin_seconds", nil},
		{"max runtime 0", "POST", "/api/crons/monitors", nil, valid(`, "max_runtime_seconds": 0`), 400, "invalid_max_runtime_seconds", []string{"1 and 604800"}},
		{"max runtime over a week", "POST", "/api/crons/monitors", nil, valid(`, "max_runtime_seconds": 604801`), 400, "invalid_max_runtime_seconds", nil},
		{"failure threshold 0", "POST", "/api/crons/monitors", nil, valid(`, "failure_threshold": 0`), 400, "invalid_failure_threshold", []string{"1 and 1000"}},
		{"recovery threshold 1001", "POST", "/api/crons/monitors", nil, valid(`, "recovery_threshold": 1001`), 400, "invalid_recovery_threshold", []string{"1001"}},
		{"webhook not http", "POST", "/api/crons/monitors", nil, valid(`, "alert_webhook_url": "ftp://example.com/x"`), 400, "invalid_alert_webhook_url", []string{"http or https"}},
		{"webhook not a URL", "POST", "/api/crons/monitors", nil, valid(`, "alert_webhook_url": "example.com/hook"`), 400, "invalid_alert_webhook_url", nil},
		{"webhook without host", "POST", "/api/crons/monitors", nil, valid(`, "alert_webhook_url": "https:///hook"`), 400, "invalid_alert_webhook_url", nil},
		{"webhook on loopback", "POST", "/api/crons/monitors", nil, valid(`, "alert_webhook_url": "http://127.0.0.1:9000/hook"`), 400, "webhook_refused", []string{"127.0.0.1 is a loopback address", "-webhook-allow"}},
		{"webhook on localhost", "POST", "/api/crons/monitors", nil, valid(`, "alert_webhook_url": "http://localhost/hook"`), 400, "webhook_refused", []string{"localhost is a loopback address"}},
		{"webhook on [::1]", "POST", "/api/crons/monitors", nil, valid(`, "alert_webhook_url": "http://[::1]:8080/"`), 400, "webhook_refused", []string{"loopback"}},
		{"webhook to the metadata", "POST", "/api/crons/monitors", nil, valid(`, "alert_webhook_url": "http://169.254.169.254/latest/meta-data/"`), 400, "webhook_refused", []string{"cloud metadata"}},
		{"webhook on a private address", "PATCH", "/api/crons/monitors/job", nil, `{"alert_webhook_url": "https://192.168.1.10/hook"}`, 400, "webhook_refused", []string{"private"}},
		{"webhook on 0.0.0.0", "PATCH", "/api/crons/monitors/job", nil, `{"alert_webhook_url": "http://0.0.0.0:8080/"}`, 400, "webhook_refused", []string{"unspecified"}},
		{"new monitor paused", "POST", "/api/crons/monitors", nil, valid(`, "status": "paused"`), 400, "invalid_status", []string{"active"}},
		{"duplicate slug", "POST", "/api/crons/monitors", nil, `{"slug": "job", "schedule": {"type": "interval", "seconds": 60}}`, 409, "slug_taken", []string{`"job"`}},
		{"patch unknown status", "PATCH", "/api/crons/monitors/job", nil, `{"status": "sleeping"}`, 400, "invalid_status", []string{`"sleeping"`}},
		{"patch bad schedule", "PATCH", "/api/crons/monitors/job", nil, `{"schedule": {"type": "cron", "expression": "60 0 * * *"}}`, 400, "invalid_schedule", []string{"minute"}},
		{"patch a cron zone", "PATCH", "/api/crons/monitors/job", nil, `{"schedule": {"type": "cron", "expression": "@daily"}, "timezone": "Nowhere"}`, 400, "invalid_timezone", nil},
		{"patch to a taken slug", "PATCH", "/api/crons/monitors/job", nil, `{"slug": "off"}`, 409, "slug_taken", []string{`"off"`}},
		{"patch bad slug", "PATCH", "/api/crons/monitors/job", nil, `{"slug": "A"}`, 400, "invalid_slug", nil},

		// Unknown things.
		{"get unknown monitor", "GET", "/api/crons/monitors/nope", nil, "", 404, "monitor_not_found", []string{`"nope"`}},
		{"patch unknown monitor", "PATCH", "/api/crons/monitors/nope", nil, `{"name": "x"}`, 404, "monitor_not_found", nil},
		{"delete unknown monitor", "DELETE", "/api/crons/monitors/nope", nil, "", 404, "monitor_not_found", nil},
		{"check-ins of unknown monitor", "GET", "/api/crons/monitors/nope/checkins", nil, "", 404, "monitor_not_found", nil},
		{"check-in to unknown monitor", "POST", "/api/crons/monitors/nope/checkins", nil, `{"status": "ok"}`, 404, "monitor_not_found", nil},
		{"unknown ping key", "GET", "/ping/nope", nil, "", 404, "unknown_ping_key", []string{"ping key"}},
		{"unknown ping key start", "POST", "/ping/nope/start", nil, "", 404, "unknown_ping_key", nil},
		{"unknown path", "GET", "/api/crons/nothing", nil, "", 404, "not_found", []string{`"/api/crons/nothing"`}},
		{"unknown top path", "GET", "/favicon.ico", nil, "", 404, "not_found", nil},
		{"too deep a ping", "GET", "/ping/" + job.PingKey + "/start/now", nil, "", 404, "not_found", nil},
		{"too deep a monitor", "GET", "/api/crons/monitors/job/checkins/x", nil, "", 404, "not_found", nil},

		// Pings.
		{"exit code 256 in the path", "GET", "/ping/" + job.PingKey + "/256", nil, "", 404, "not_found", []string{`"256"`, "0-255"}},
		{"negative exit code in the path", "GET", "/ping/" + job.PingKey + "/-1", nil, "", 404, "not_found", nil},
		{"unknown ping kind", "GET", "/ping/" + job.PingKey + "/finish", nil, "", 404, "not_found", []string{`"finish"`}},
		{"exit code not a number", "GET", "/ping/" + job.PingKey + "?exit_code=x", nil, "", 400, "invalid_exit_code", []string{`"x"`, "0 to 255"}},
		{"exit code 256", "GET", "/ping/" + job.PingKey + "?exit_code=256", nil, "", 400, "invalid_exit_code", nil},
		{"exit code twice", "GET", "/ping/" + job.PingKey + "/1?exit_code=2", nil, "", 400, "invalid_exit_code", []string{"exit code 1", "the query 2"}},
		{"checkin_id on a start", "GET", "/ping/" + job.PingKey + "/start?checkin_id=" + running, nil, "", 400, "invalid_checkin_id", []string{"leave checkin_id out"}},
		{"unknown checkin_id", "GET", "/ping/" + job.PingKey + "?checkin_id=0123456789abcdef0123456789abcdef", nil, "", 404, "checkin_not_found", []string{`"0123456789abcdef0123456789abcdef"`}},
		{"another monitor's checkin_id", "GET", "/ping/" + job.PingKey + "?checkin_id=" + otherRun, nil, "", 404, "checkin_not_found", nil},
		{"finished checkin_id", "GET", "/ping/" + job.PingKey + "/fail?checkin_id=" + finished, nil, "", 409, "checkin_finished", []string{"already finished (ok)"}},
		{"disabled monitor", "GET", "/ping/" + off.PingKey, nil, "", 409, "monitor_disabled", []string{`"off"`, "disabled"}},
		{"disabled monitor start", "POST", "/ping/" + off.PingKey + "/start", nil, "", 409, "monitor_disabled", nil},
		{"ping body over 1 MiB", "POST", "/ping/" + job.PingKey, nil, strings.Repeat("x", 1<<20+1), 413, "body_too_large", []string{"1048576"}},

		// Check-ins through the API.
		{"check-in unknown status", "POST", "/api/crons/monitors/job/checkins", nil, `{"status": "done"}`, 400, "invalid_status", []string{`"done"`}},
		{"check-in missing status", "POST", "/api/crons/monitors/job/checkins", nil, `{}`, 400, "invalid_status", nil},
		{"check-in in progress with an id", "POST", "/api/crons/monitors/job/checkins", nil, `{"status": "in_progress", "checkin_id": "` + running + `"}`, 400, "invalid_checkin_id", nil},
		{"check-in unknown id", "POST", "/api/crons/monitors/job/checkins", nil, `{"status": "ok", "checkin_id": "abc"}`, 404, "checkin_not_found", nil},
		{"check-in finished id", "POST", "/api/crons/monitors/job/checkins", nil, `{"status": "ok", "checkin_id": "` + finished + `"}`, 409, "checkin_finished", nil},
		{"check-in bad exit code", "POST", "/api/crons/monitors/job/checkins", nil, `{"status": "ok", "exit_code": 300}`, 400, "invalid_exit_code", []string{"300"}},
		{"check-in negative exit code", "POST", "/api/crons/monitors/job/checkins", nil, `{"status": "error", "exit_code": -1}`, 400, "invalid_exit_code", nil},
		{"check-in disabled", "POST", "/api/crons/monitors/off/checkins", nil, `{"status": "ok"}`, 409, "monitor_disabled", nil},
		{"check-in unknown field", "POST", "/api/crons/monitors/job/checkins", nil, `{"status": "ok", "duration": 5}`, 400, "bad_json", []string{`"duration"`}},

		// Query parameters.
		{"limit 0", "GET", "/api/crons/monitors/job/checkins?limit=0", nil, "", 400, "invalid_limit", []string{"1 to 10000"}},
		{"limit 10001", "GET", "/api/crons/monitors/job/checkins?limit=10001", nil, "", 400, "invalid_limit", nil},
		{"limit not a number", "GET", "/api/crons/monitors/job/checkins?limit=ten", nil, "", 400, "invalid_limit", []string{`"ten"`}},
		{"preview without a schedule", "GET", "/api/crons/preview", nil, "", 400, "invalid_schedule", []string{"interval_seconds"}},
		{"preview bad expression", "GET", "/api/crons/preview?schedule=60+0+*+*+*", nil, "", 400, "invalid_schedule", []string{"minute"}},
		{"preview both", "GET", "/api/crons/preview?schedule=@daily&interval_seconds=60", nil, "", 400, "invalid_schedule", []string{"not both"}},
		{"preview interval not a number", "GET", "/api/crons/preview?interval_seconds=1m", nil, "", 400, "invalid_interval_seconds", []string{`"1m"`}},
		{"preview interval 0", "GET", "/api/crons/preview?interval_seconds=0", nil, "", 400, "invalid_interval_seconds", []string{"at least 1 second"}},
		{"preview unknown zone", "GET", "/api/crons/preview?schedule=@daily&timezone=Mars/Olympus", nil, "", 400, "invalid_timezone", []string{`"Mars/Olympus"`}},
		{"preview unknown zone with an interval", "GET", "/api/crons/preview?interval_seconds=60&timezone=Mars/Olympus", nil, "", 400, "invalid_timezone", nil},
		{"preview bad after", "GET", "/api/crons/preview?schedule=@daily&after=yesterday", nil, "", 400, "invalid_after", []string{"RFC 3339"}},
		{"preview count 0", "GET", "/api/crons/preview?schedule=@daily&count=0", nil, "", 400, "invalid_count", []string{"1 to 1000"}},
		{"preview count 1001", "GET", "/api/crons/preview?schedule=@daily&count=1001", nil, "", 400, "invalid_count", nil},
		{"unknown parameter", "GET", "/api/crons/monitors?colour=red", nil, "", 400, "unknown_parameter", []string{`unknown query parameter "colour"`, "/api/crons/monitors takes no query parameter"}},
		{"misspelt limit", "GET", "/api/crons/monitors/job/checkins?limit=5&lmit=3", nil, "", 400, "unknown_parameter", []string{`"lmit"`, "takes limit"}},
		{"limit twice", "GET", "/api/crons/monitors/job/checkins?limit=5&limit=6", nil, "", 400, "invalid_limit", []string{"limit is given 2 times"}},
		{"misspelt time zone", "GET", "/api/crons/preview?schedule=@daily&tz=Europe/Paris", nil, "", 400, "unknown_parameter", []string{`"tz"`, "schedule, interval_seconds, timezone, after, count"}},
		{"unknown ping parameter", "GET", "/ping/" + job.PingKey + "?exitcode=3", nil, "", 400, "unknown_parameter", []string{`"exitcode"`, "exit_code, checkin_id"}},
		{"unknown parameter on a patch", "PATCH", "/api/crons/monitors/job?dry_run=1", nil, `{"name": "x"}`, 400, "unknown_parameter", []string{`"dry_run"`}},
		{"bad query", "GET", "/api/crons/monitors/job/checkins?limit=%zz", nil, "", 400, "bad_query", []string{"not valid"}},

		// Methods.
		{"PUT on monitors", "PUT", "/api/crons/monitors", nil, valid(""), 405, "method_not_allowed", []string{"PUT", "GET or POST"}},
		{"POST on a monitor", "POST", "/api/crons/monitors/job", nil, `{}`, 405, "method_not_allowed", nil},
		{"DELETE on health", "DELETE", "/health", nil, "", 405, "method_not_allowed", nil},
		{"DELETE on a ping", "DELETE", "/ping/" + job.PingKey, nil, "", 405, "method_not_allowed", nil},
		{"POST on the stream", "POST", "/api/crons/stream", nil, "", 405, "method_not_allowed", nil},
		{"POST on the page", "POST", "/", nil, "", 405, "method_not_allowed", nil},
	}
	allow := map[string]string{
		"PUT on monitors":    "GET, POST",
		"POST on a monitor":  "DELETE, GET, PATCH",
		"DELETE on health":   "GET",
		"DELETE on a ping":   "GET, HEAD, POST",
		"POST on the stream": "GET",
		"POST on the page":   "GET",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := s.do(req{method: tt.method, path: tt.path, body: tt.body, header: tt.header})
			requireError(t, a, tt.status, tt.code, tt.message...)
			if tt.status == 405 {
				assert.Equal(t, allow[tt.name], a.header.Get("Allow"))
			}
		})
	}

	// Nothing of it changed anything.
	var list struct {
		Monitors []monitorengine.View `json:"monitors"`
	}
	s.json("GET", "/api/crons/monitors", "", 200, &list)
	var slugs []string
	for _, m := range list.Monitors {
		slugs = append(slugs, m.Slug)
	}
	assert.Equal(t, []string{"job", "off", "other"}, slugs)
	v := s.get("job")
	assert.Equal(t, running, v.RunningCheckinID)
	assert.Equal(t, monitorengine.Schedule{Type: "interval", Seconds: 3600}, v.Schedule)
	assert.Equal(t, []string{monitorengine.CheckinInProgress, monitorengine.CheckinOK}, statuses(s.checkins("job", 0)))
	assert.Empty(t, s.checkins("off", 0))
}

func TestMonitorLifecycle(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})

	// Create, with the defaults.
	a := s.do(req{method: "POST", path: "/api/crons/monitors", body: `{"slug": "nightly-backup", "schedule": {"type": "interval", "seconds": 3600}}`,
		header: map[string]string{"Content-Type": "application/json; charset=utf-8"}})
	require.Equal(t, http.StatusCreated, a.status, "%s", a.body)
	assert.Equal(t, "/api/crons/monitors/nightly-backup", a.header.Get("Location"))
	assert.Equal(t, "application/json", a.header.Get("Content-Type"))
	var v monitorengine.View
	require.NoError(t, json.Unmarshal(a.body, &v))
	assert.Equal(t, "nightly-backup", v.Name, "the name defaults to the slug")
	assert.Equal(t, "UTC", v.Timezone)
	assert.Equal(t, 60, v.CheckinMarginSeconds)
	assert.Equal(t, 1800, v.MaxRuntimeSeconds)
	assert.Equal(t, 1, v.FailureThreshold)
	assert.Equal(t, 1, v.RecoveryThreshold)
	assert.Equal(t, monitorengine.StatusActive, v.Status)
	assert.Equal(t, monitorengine.HealthUnknown, v.Health)
	assert.Equal(t, "Fresh", v.State)
	assert.Len(t, v.PingKey, 32, "192 bits in base64")
	require.NotNil(t, v.NextExpectedAt)
	assert.Equal(t, v.CreatedAt.Add(time.Hour), *v.NextExpectedAt, "an interval counts from the creation")
	assert.Nil(t, v.LastCheckinAt)
	assert.Equal(t, &v, s.get("nightly-backup"))

	// Every field, and the content types curl sends.
	full := s.do(req{method: "POST", path: "/api/crons/monitors", body: `{"slug": "a-job_2", "name": " Nightly backup ", "schedule": {"type": "cron", "expression": "30 2 * * *"},
		"timezone": "America/New_York", "checkin_margin_seconds": 300, "max_runtime_seconds": 3600, "failure_threshold": 2, "recovery_threshold": 3,
		"alert_webhook_url": "https://example.com/hooks/crons", "status": "active"}`,
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
	require.Equal(t, http.StatusCreated, full.status, "%s", full.body)
	var f monitorengine.View
	require.NoError(t, json.Unmarshal(full.body, &f))
	assert.Equal(t, "Nightly backup", f.Name, "trimmed")
	assert.Equal(t, monitorengine.Schedule{Type: "cron", Expression: "30 2 * * *"}, f.Schedule)
	assert.Equal(t, "America/New_York", f.Timezone)
	assert.Equal(t, []int{300, 3600, 2, 3}, []int{f.CheckinMarginSeconds, f.MaxRuntimeSeconds, f.FailureThreshold, f.RecoveryThreshold})
	assert.Equal(t, "https://example.com/hooks/crons", f.AlertWebhookURL)
	require.NotNil(t, f.NextExpectedAt)
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	next := f.NextExpectedAt.In(ny)
	assert.Equal(t, []int{2, 30}, []int{next.Hour(), next.Minute()}, "02:30 in New York: %s", next)
	s.create(`{"slug": "0-first", "schedule": {"type": "interval", "seconds": 60}}`)

	// The list, by slug.
	var list struct {
		Monitors []monitorengine.View `json:"monitors"`
	}
	s.json("GET", "/api/crons/monitors", "", http.StatusOK, &list)
	var slugs []string
	for _, m := range list.Monitors {
		slugs = append(slugs, m.Slug)
	}
	assert.Equal(t, []string{"0-first", "a-job_2", "nightly-backup"}, slugs)

	// Pause, resume, disable.
	p := s.patch("nightly-backup", `{"status": "paused"}`)
	assert.Equal(t, monitorengine.StatusPaused, p.Status)
	assert.Equal(t, "Paused", p.State)
	assert.Nil(t, p.NextExpectedAt, "a paused monitor expects nothing")
	s.ping("GET", v.PingKey+"/fail", "")
	p = s.get("nightly-backup")
	assert.Equal(t, monitorengine.HealthUnknown, p.Health, "a paused monitor records check-ins and changes nothing")
	assert.Equal(t, []string{monitorengine.CheckinError}, statuses(s.checkins("nightly-backup", 0)))
	r := s.patch("nightly-backup", `{"status": "active"}`)
	assert.Equal(t, monitorengine.StatusActive, r.Status)
	assert.Equal(t, "Fresh", r.State)
	assert.Equal(t, r.UpdatedAt.Add(time.Hour), *r.NextExpectedAt, "resumed afresh")
	d := s.patch("nightly-backup", `{"status": "disabled"}`)
	assert.Equal(t, monitorengine.StatusDisabled, d.Status)
	assert.Nil(t, d.NextExpectedAt)
	requireError(t, s.do(req{method: "GET", path: "/ping/" + v.PingKey}), 409, "monitor_disabled")
	r = s.patch("nightly-backup", `{"status": "active"}`)
	assert.Equal(t, "Fresh", r.State)

	// A change of schedule starts afresh on the new one.
	c := s.patch("nightly-backup", `{"schedule": {"type": "cron", "expression": "0 3 * * *"}, "timezone": "Europe/Berlin", "name": "Backup"}`)
	assert.Equal(t, "Backup", c.Name)
	assert.Equal(t, monitorengine.Schedule{Type: "cron", Expression: "0 3 * * *"}, c.Schedule)
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	next = c.NextExpectedAt.In(berlin)
	assert.Equal(t, []int{3, 0}, []int{next.Hour(), next.Minute()}, "03:00 in Berlin: %s", next)
	assert.True(t, c.NextExpectedAt.After(c.UpdatedAt))
	assert.False(t, c.NextExpectedAt.After(c.UpdatedAt.Add(24*time.Hour)), "the first 03:00 after the change")
	assert.Equal(t, v.PingKey, c.PingKey, "the ping key stays")

	// Rename: the old slug is gone, the ping key stays.
	n := s.patch("nightly-backup", `{"slug": "backup"}`)
	assert.Equal(t, "backup", n.Slug)
	requireError(t, s.do(req{method: "GET", path: "/api/crons/monitors/nightly-backup"}), 404, "monitor_not_found")
	assert.Equal(t, v.PingKey, s.get("backup").PingKey)
	assert.Len(t, s.checkins("backup", 0), 1, "the check-ins follow")

	// Delete.
	a = s.do(req{method: "DELETE", path: "/api/crons/monitors/backup"})
	assert.Equal(t, http.StatusNoContent, a.status)
	assert.Empty(t, a.body)
	requireError(t, s.do(req{method: "GET", path: "/api/crons/monitors/backup"}), 404, "monitor_not_found")
	requireError(t, s.do(req{method: "GET", path: "/api/crons/monitors/backup/checkins"}), 404, "monitor_not_found")
	requireError(t, s.do(req{method: "GET", path: "/ping/" + v.PingKey}), 404, "unknown_ping_key")
	requireError(t, s.do(req{method: "DELETE", path: "/api/crons/monitors/backup"}), 404, "monitor_not_found")
	again := s.create(`{"slug": "backup", "schedule": {"type": "interval", "seconds": 60}}`)
	assert.Empty(t, s.checkins("backup", 0), "a new monitor of the slug starts without check-ins")
	assert.NotEqual(t, v.PingKey, again.PingKey)
}

func TestPings(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	v := s.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 3600}}`)
	code := func(n int) *int { return &n }
	tests := []struct {
		name     string
		method   string
		path     string // after the key
		status   string
		exitCode *int
		health   string
	}{
		{"ok", "GET", "", monitorengine.CheckinOK, nil, monitorengine.HealthHealthy},
		{"fail", "GET", "/fail", monitorengine.CheckinError, nil, monitorengine.HealthFailing},
		{"ok by POST", "POST", "", monitorengine.CheckinOK, nil, monitorengine.HealthHealthy},
		{"fail by POST", "POST", "/fail", monitorengine.CheckinError, nil, monitorengine.HealthFailing},
		{"exit 0 in the path", "GET", "/0", monitorengine.CheckinOK, code(0), monitorengine.HealthHealthy},
		{"exit 3 in the path", "GET", "/3", monitorengine.CheckinError, code(3), monitorengine.HealthFailing},
		{"exit 255 in the path", "POST", "/255", monitorengine.CheckinError, code(255), monitorengine.HealthFailing},
		{"exit 0 in the query", "GET", "?exit_code=0", monitorengine.CheckinOK, code(0), monitorengine.HealthHealthy},
		{"exit 5 in the query", "GET", "?exit_code=5", monitorengine.CheckinError, code(5), monitorengine.HealthFailing},
		{"the same code in both", "GET", "/7?exit_code=7", monitorengine.CheckinError, code(7), monitorengine.HealthFailing},
		{"a fail with exit 0", "GET", "/fail?exit_code=0", monitorengine.CheckinError, code(0), monitorengine.HealthFailing},
		{"HEAD", "HEAD", "", monitorengine.CheckinOK, nil, monitorengine.HealthHealthy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := s.do(req{method: tt.method, path: "/ping/" + v.PingKey + tt.path, header: map[string]string{"Authorization": ""}})
			require.Equal(t, http.StatusOK, a.status, "%s", a.body)
			last := s.checkins("job", 1)
			require.Len(t, last, 1)
			if tt.method != "HEAD" {
				var out struct {
					CheckinID string `json:"checkin_id"`
				}
				require.NoError(t, json.Unmarshal(a.body, &out))
				assert.Equal(t, last[0].ID, out.CheckinID)
			}
			assert.Equal(t, tt.status, last[0].Status)
			assert.Equal(t, monitorengine.SourcePing, last[0].Source)
			assert.Equal(t, tt.exitCode, last[0].ExitCode)
			assert.Nil(t, last[0].Output, "a ping without a body keeps no output")
			assert.Equal(t, last[0].CreatedAt, *last[0].FinishedAt, "a ping's check-in is finished at once")
			got := s.get("job")
			assert.Equal(t, tt.health, got.Health)
			assert.Equal(t, last[0].CreatedAt, *got.LastCheckinAt)
			assert.Equal(t, last[0].CreatedAt.Add(time.Hour), *got.NextExpectedAt)
		})
	}
	assert.Len(t, s.checkins("job", 0), len(tests), "one check-in a ping")
}

func TestRuns(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	v := s.create(`{"slug": "etl", "schedule": {"type": "interval", "seconds": 3600}, "failure_threshold": 2}`)

	// A start, and a finishing ping that names it.
	run := s.ping("POST", v.PingKey+"/start", "starting")
	got := s.get("etl")
	assert.Equal(t, "Running", got.State)
	assert.Equal(t, run, got.RunningCheckinID)
	list := s.checkins("etl", 0)
	require.Len(t, list, 1)
	assert.Equal(t, monitorengine.CheckinInProgress, list[0].Status)
	assert.Nil(t, list[0].FinishedAt)
	assert.Nil(t, list[0].DurationMS)
	assert.Equal(t, "starting", *list[0].Output)
	id := s.ping("POST", v.PingKey+"/4?checkin_id="+run, "done badly")
	assert.Equal(t, run, id, "the finishing ping closes the run")
	list = s.checkins("etl", 0)
	require.Len(t, list, 1, "no check-in of its own")
	c := list[0]
	assert.Equal(t, monitorengine.CheckinError, c.Status)
	require.NotNil(t, c.FinishedAt)
	require.NotNil(t, c.DurationMS)
	// SQLite reads times to the millisecond (julianday): the duration may
	// be a millisecond off the one rounded from the times.
	assert.InDelta(t, c.FinishedAt.Sub(c.CreatedAt).Round(time.Millisecond).Milliseconds(), *c.DurationMS, 1)
	assert.Equal(t, 4, *c.ExitCode)
	assert.Equal(t, "done badly", *c.Output, "the finishing ping's output")
	got = s.get("etl")
	assert.Equal(t, "Up", got.State)
	assert.Empty(t, got.RunningCheckinID)
	assert.Equal(t, 1, got.ConsecutiveFailures)
	assert.Equal(t, monitorengine.HealthHealthy, got.Health, "one failure of two")

	// A finishing ping without an id closes the run in progress.
	run = s.ping("GET", v.PingKey+"/start", "")
	assert.Equal(t, run, s.ping("GET", v.PingKey+"?exit_code=0", ""))
	list = s.checkins("etl", 1)
	assert.Equal(t, monitorengine.CheckinOK, list[0].Status)
	assert.Equal(t, run, list[0].ID)
	assert.NotNil(t, list[0].DurationMS)
	assert.Equal(t, 0, s.get("etl").ConsecutiveFailures)

	// A second start supersedes the run in progress.
	first := s.ping("GET", v.PingKey+"/start", "")
	second := s.ping("GET", v.PingKey+"/start", "")
	assert.Equal(t, second, s.get("etl").RunningCheckinID)
	list = s.checkins("etl", 2)
	assert.Equal(t, []string{second, first}, []string{list[0].ID, list[1].ID})
	assert.Equal(t, monitorengine.CheckinError, list[1].Status)
	assert.Equal(t, "superseded by a new start", *list[1].Output)
	requireError(t, s.do(req{method: "GET", path: "/ping/" + v.PingKey + "?checkin_id=" + first}), 409, "checkin_finished", "error")
	s.ping("GET", v.PingKey+"/fail?checkin_id="+second, "")
	got = s.get("etl")
	assert.Equal(t, 1, got.ConsecutiveFailures)
	assert.Equal(t, "Up", got.State)
}

func TestPingOutput(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	v := s.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 3600}}`)
	const limit = 10 << 10
	tests := []struct {
		name string
		body string
		want string
	}{
		{"text", "backed up 3 files\n", "backed up 3 files\n"},
		{"exactly the limit", strings.Repeat("a", limit), strings.Repeat("a", limit)},
		{"one byte over", strings.Repeat("a", limit+1), strings.Repeat("a", limit) + "...[truncated]"},
		{"cut inside a character", strings.Repeat("a", limit-1) + "€" + "tail", strings.Repeat("a", limit-1) + "...[truncated]"},
		{"cut after a character", strings.Repeat("a", limit-3) + "€" + "tail", strings.Repeat("a", limit-3) + "€...[truncated]"},
		{"a 4-byte character at the cut", strings.Repeat("a", limit-2) + "😀" + "tail", strings.Repeat("a", limit-2) + "...[truncated]"},
		{"a megabyte", strings.Repeat("é", 1<<19), strings.Repeat("é", limit/2) + "...[truncated]"},
		{"invalid UTF-8", "ok \xff\xfe done", "ok \uFFFD done"},
		{"invalid UTF-8 at the cut", strings.Repeat("\x80", limit+10), "\uFFFD...[truncated]"},
		{"invalid UTF-8 that grows when replaced", strings.Repeat("\xffa", limit/2+1), strings.Repeat("\uFFFDa", limit/4) + "...[truncated]"},
		{"invalid UTF-8 that grows past the limit", strings.Repeat("\xffa", limit/2), strings.Repeat("\uFFFDa", limit/4) + "...[truncated]"},
		{"a NUL byte", "a\x00b", "a\x00b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := s.ping("POST", v.PingKey, tt.body)
			last := s.checkins("job", 1)
			require.Equal(t, id, last[0].ID)
			require.NotNil(t, last[0].Output)
			assert.Equal(t, tt.want, *last[0].Output)
			assert.LessOrEqual(t, len(strings.TrimSuffix(*last[0].Output, "...[truncated]")), limit)
		})
	}
	requireError(t, s.do(req{method: "POST", path: "/ping/" + v.PingKey, body: strings.Repeat("x", 1<<20+1)}), 413, "body_too_large")
	a := s.do(req{method: "POST", path: "/ping/" + v.PingKey, body: strings.Repeat("x", 1<<20)})
	assert.Equal(t, http.StatusOK, a.status, "a body of exactly 1 MiB is taken")
}

func TestAPICheckins(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	s.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 3600}}`)
	post := func(body string) string {
		var out struct {
			CheckinID string `json:"checkin_id"`
		}
		s.json("POST", "/api/crons/monitors/job/checkins", body, http.StatusAccepted, &out)
		require.Len(t, out.CheckinID, 32)
		return out.CheckinID
	}
	run := post(`{"status": "in_progress"}`)
	assert.Equal(t, run, s.get("job").RunningCheckinID)
	assert.Equal(t, run, post(`{"status": "ok", "checkin_id": "`+run+`", "exit_code": 0, "output": "done"}`))
	one := post(`{"status": "error", "exit_code": 2}`)
	list := s.checkins("job", 0)
	require.Len(t, list, 2)
	assert.Equal(t, one, list[0].ID)
	assert.Equal(t, monitorengine.CheckinError, list[0].Status)
	assert.Equal(t, 2, *list[0].ExitCode)
	assert.Equal(t, run, list[1].ID)
	assert.Equal(t, monitorengine.CheckinOK, list[1].Status)
	assert.Equal(t, "done", *list[1].Output)
	assert.NotNil(t, list[1].DurationMS)
	for _, c := range list {
		assert.Equal(t, monitorengine.SourceAPI, c.Source)
	}
	assert.Equal(t, monitorengine.HealthFailing, s.get("job").Health)
}

func TestCheckinsNewestFirst(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	v := s.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 3600}}`)
	var ids []string
	for range 7 {
		ids = append(ids, s.ping("GET", v.PingKey, ""))
	}
	tests := []struct {
		limit int
		want  []string
	}{
		{0, []string{ids[6], ids[5], ids[4], ids[3], ids[2], ids[1], ids[0]}},
		{1, []string{ids[6]}},
		{3, []string{ids[6], ids[5], ids[4]}},
		{10000, []string{ids[6], ids[5], ids[4], ids[3], ids[2], ids[1], ids[0]}},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.limit), func(t *testing.T) {
			list := s.checkins("job", tt.limit)
			var got []string
			for i, c := range list {
				got = append(got, c.ID)
				if i > 0 {
					assert.False(t, c.CreatedAt.After(list[i-1].CreatedAt), "newest first")
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestPreview(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	tests := []struct {
		name  string
		query string
		zone  string
		runs  []string
	}{
		{"spring forward: 02:30 runs at 03:00 EDT", "schedule=30+2+*+*+*&timezone=America/New_York&after=2025-03-08T12:00:00Z&count=3", "America/New_York",
			[]string{"2025-03-09T07:00:00Z", "2025-03-10T06:30:00Z", "2025-03-11T06:30:00Z"}},
		{"fall back: 01:30 runs once, in EDT", "schedule=30+1+*+*+*&timezone=America/New_York&after=2025-11-01T12:00:00Z&count=2", "America/New_York",
			[]string{"2025-11-02T05:30:00Z", "2025-11-03T06:30:00Z"}},
		{"real time: every 30 minutes skips the missing hour", "schedule=*/30+*+*+*+*&timezone=America/New_York&after=2025-03-09T06:15:00Z&count=3", "America/New_York",
			[]string{"2025-03-09T06:30:00Z", "2025-03-09T07:00:00Z", "2025-03-09T07:30:00Z"}},
		{"UTC by default", "schedule=@daily&after=2025-03-08T12:00:00Z&count=2", "UTC",
			[]string{"2025-03-09T00:00:00Z", "2025-03-10T00:00:00Z"}},
		{"an interval", "interval_seconds=90&after=2025-03-08T12:00:00Z&count=2", "UTC",
			[]string{"2025-03-08T12:01:30Z", "2025-03-08T12:03:00Z"}},
		{"an offset in after", "schedule=0+12+*+*+*&after=2025-03-08T12:00:00%2B01:00&count=1", "UTC",
			[]string{"2025-03-08T12:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out struct {
				Schedule monitorengine.Schedule `json:"schedule"`
				Timezone string                 `json:"timezone"`
				After    time.Time              `json:"after"`
				Runs     []time.Time            `json:"runs"`
			}
			s.json("GET", "/api/crons/preview?"+tt.query, "", http.StatusOK, &out)
			assert.Equal(t, tt.zone, out.Timezone)
			require.Len(t, out.Runs, len(tt.runs))
			for i, want := range tt.runs {
				w, err := time.Parse(time.RFC3339, want)
				require.NoError(t, err)
				assert.True(t, w.Equal(out.Runs[i]), "run %d: %s, want %s", i, out.Runs[i], want)
			}
		})
	}
	var out struct {
		After time.Time   `json:"after"`
		Runs  []time.Time `json:"runs"`
	}
	s.json("GET", "/api/crons/preview?schedule=*+*+*+*+*", "", http.StatusOK, &out)
	assert.Len(t, out.Runs, 10, "ten runs by default")
	assert.False(t, out.After.IsZero(), "after now by default")
	assert.True(t, out.Runs[0].After(out.After))
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	// A hundredth of a ping a second: one ping, then a wait of 100 s.
	s := start(t, api.Config{PingRate: 0.01})
	a := s.create(`{"slug": "a", "schedule": {"type": "interval", "seconds": 3600}}`)
	b := s.create(`{"slug": "b", "schedule": {"type": "interval", "seconds": 3600}}`)
	s.ping("GET", a.PingKey, "")
	for _, path := range []string{a.PingKey, a.PingKey + "/start", a.PingKey + "/fail"} {
		r := s.do(req{method: "POST", path: "/ping/" + path})
		requireError(t, r, http.StatusTooManyRequests, "rate_limited", "wait")
		retry, err := strconv.Atoi(r.header.Get("Retry-After"))
		require.NoError(t, err, "Retry-After %q", r.header.Get("Retry-After"))
		assert.Positive(t, retry)
		assert.LessOrEqual(t, retry, 100)
	}
	s.ping("GET", b.PingKey, "") // another key has its own bucket
	assert.Len(t, s.checkins("a", 0), 1, "the pings refused are not recorded")
	var h map[string]any
	s.json("GET", "/api/crons/monitors/a", "", http.StatusOK, &h) // the API is not limited
}

func TestHealth(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	s.create(`{"slug": "a", "schedule": {"type": "interval", "seconds": 3600}}`)
	s.create(`{"slug": "b", "schedule": {"type": "interval", "seconds": 3600}}`)
	s.patch("b", `{"status": "paused"}`)
	a := s.do(req{method: "GET", path: "/health", header: map[string]string{"Authorization": ""}})
	require.Equal(t, http.StatusOK, a.status)
	var h struct {
		Status     string `json:"status"`
		Components struct {
			Store    struct{ Status string } `json:"store"`
			Alerts   struct{ Status string } `json:"alerts"`
			Monitors struct {
				Status      string `json:"status"`
				Monitors    int    `json:"monitors"`
				Timers      int    `json:"timers"`
				Subscribers int    `json:"subscribers"`
			} `json:"monitors"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(a.body, &h))
	assert.Equal(t, "ok", h.Status)
	assert.Equal(t, "ok", h.Components.Store.Status)
	assert.Equal(t, "ok", h.Components.Alerts.Status)
	assert.Equal(t, "ok", h.Components.Monitors.Status)
	assert.Equal(t, 2, h.Components.Monitors.Monitors)
	assert.Equal(t, 2, h.Components.Monitors.Timers, "the active monitor's late and missed timers")
	assert.Zero(t, h.Components.Monitors.Subscribers)
}

// TestHealthAlerts checks the alerts' component: the next attempt is that
// of an alert the server may post (not of one waiting behind a failing
// one of its webhook, which the server cannot post yet), and delivery is
// degraded once an alert waits 5 minutes after it was raised.
func TestHealthAlerts(t *testing.T) {
	t.Parallel()
	// Far ahead, so that the engine's sender, on the real clock, leaves
	// them alone.
	t0 := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	s := start(t, api.Config{Now: func() time.Time { return now }})
	ctx := context.Background()
	require.NoError(t, s.store.Apply(ctx, &store.Batch{Ops: []store.Op{
		store.InsertAlert{URL: "https://hooks.example.com/a", Payload: []byte(`{"n": 1}`), At: t0},
		store.InsertAlert{URL: "https://hooks.example.com/a", Payload: []byte(`{"n": 2}`), At: t0.Add(10 * time.Second)},
	}}))
	pending, err := s.store.PendingAlerts(ctx, t0, 10)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	require.NoError(t, s.store.AlertFailed(ctx, pending[0].ID, t0, t0.Add(30*time.Minute), "503"))
	health := func() (status string, next, since time.Time) {
		var h struct {
			Components struct {
				Alerts struct {
					Status       string    `json:"status"`
					NextAttempt  time.Time `json:"next_attempt_at"`
					WaitingSince time.Time `json:"waiting_since"`
				} `json:"alerts"`
			} `json:"components"`
		}
		s.json("GET", "/health", "", http.StatusOK, &h)
		a := h.Components.Alerts
		return a.Status, a.NextAttempt, a.WaitingSince
	}
	now = t0.Add(time.Minute)
	status, next, since := health()
	assert.Equal(t, "ok", status)
	assert.Equal(t, t0.Add(30*time.Minute), next, "the failing alert's retry: the second waits for it")
	assert.Equal(t, t0, since)
	now = t0.Add(5*time.Minute + time.Second)
	status, _, _ = health()
	assert.Equal(t, "degraded", status, "an alert raised more than 5 minutes ago waits")
}

// sse is a client of the event stream.
type sse struct {
	t      *testing.T
	events chan event
}

type event struct {
	kind string
	data string
}

// stream connects to the event stream and reads it until the test ends.
func (s *stack) stream() *sse {
	s.t.Helper()
	return s.streamWith(token)
}

// streamWith is stream with another API key's token.
func (s *stack) streamWith(token string) *sse {
	s.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	hr, err := http.NewRequestWithContext(ctx, "GET", s.url+"/api/crons/stream", nil)
	require.NoError(s.t, err)
	hr.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(hr)
	require.NoError(s.t, err)
	require.Equal(s.t, http.StatusOK, resp.StatusCode)
	require.Equal(s.t, "text/event-stream", resp.Header.Get("Content-Type"))
	c := &sse{t: s.t, events: make(chan event, 1024)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(c.events)
		sc := bufio.NewScanner(resp.Body)
		var ev event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.kind = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			case line == "" && ev.kind != "":
				c.events <- ev
				ev = event{}
			}
		}
	}()
	s.t.Cleanup(func() {
		cancel()
		resp.Body.Close()
		<-done
	})
	// The stream is subscribed once /health counts it.
	require.Eventually(s.t, func() bool {
		var h struct {
			Components struct {
				Monitors struct {
					Subscribers int `json:"subscribers"`
				} `json:"monitors"`
			} `json:"components"`
		}
		s.json("GET", "/health", "", http.StatusOK, &h)
		return h.Components.Monitors.Subscribers > 0
	}, 10*time.Second, 5*time.Millisecond)
	return c
}

// waitEnd waits for the server to end the stream, failing after a
// generous wait.
func (c *sse) waitEnd() {
	c.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case _, ok := <-c.events:
			if !ok {
				return
			}
		case <-deadline:
			require.FailNow(c.t, "the stream goes on")
		}
	}
}

// next returns the next event of kind whose data satisfies match, failing
// after a generous wait.
func (c *sse) next(kind string, match func(data string) bool) string {
	c.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-c.events:
			require.True(c.t, ok, "the stream ended while waiting for a %s event", kind)
			if ev.kind == kind && (match == nil || match(ev.data)) {
				return ev.data
			}
		case <-deadline:
			require.FailNow(c.t, "no "+kind+" event")
		}
	}
}

func TestStream(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	c := s.stream()

	v := s.create(`{"slug": "fast", "name": "Fast job", "schedule": {"type": "interval", "seconds": 1}, "checkin_margin_seconds": 0}`)
	var m monitorengine.MonitorEvent
	require.NoError(t, json.Unmarshal([]byte(c.next("monitor", nil)), &m))
	assert.Equal(t, monitorengine.MonitorEvent{Slug: "fast", Change: "created"}, m)

	// With a margin of 0, the run is missed as soon as it is due: the
	// missed check-in, then the change of health.
	var ce monitorengine.CheckinEvent
	require.NoError(t, json.Unmarshal([]byte(c.next("checkin", nil)), &ce))
	assert.Equal(t, "fast", ce.Slug)
	assert.Equal(t, monitorengine.CheckinMissed, ce.Checkin.Status)
	assert.Equal(t, monitorengine.SourceSystem, ce.Checkin.Source)
	require.NotNil(t, ce.Checkin.ExpectedAt)
	assert.True(t, v.NextExpectedAt.Equal(*ce.Checkin.ExpectedAt), "expected at %s, want %s", ce.Checkin.ExpectedAt, v.NextExpectedAt)
	assert.True(t, v.NextExpectedAt.Equal(ce.Checkin.CreatedAt), "recorded at its deadline: %s, want %s", ce.Checkin.CreatedAt, v.NextExpectedAt)
	var h monitorengine.HealthChange
	require.NoError(t, json.Unmarshal([]byte(c.next("health", nil)), &h))
	assert.Equal(t, "fast", h.Slug)
	assert.Equal(t, "Fast job", h.Name)
	assert.Equal(t, []string{monitorengine.HealthUnknown, monitorengine.HealthMissed}, []string{h.From, h.To})
	assert.True(t, v.NextExpectedAt.Equal(h.At), "missed at its deadline: %s, want %s", h.At, v.NextExpectedAt)
	missed := s.checkins("fast", 0)
	require.NotEmpty(t, missed)
	assert.Equal(t, monitorengine.CheckinMissed, missed[len(missed)-1].Status, "stored before it was sent")

	// A ping brings it back: a check-in, then the change of health.
	id := s.ping("GET", v.PingKey, "")
	require.NoError(t, json.Unmarshal([]byte(c.next("checkin", func(d string) bool { return strings.Contains(d, id) })), &ce))
	assert.Equal(t, monitorengine.CheckinOK, ce.Checkin.Status)
	assert.Equal(t, monitorengine.SourcePing, ce.Checkin.Source)
	require.NoError(t, json.Unmarshal([]byte(c.next("health", func(d string) bool { return strings.Contains(d, `"to":"healthy"`) })), &h))
	assert.Equal(t, monitorengine.HealthMissed, h.From)

	s.patch("fast", `{"status": "paused"}`)
	require.NoError(t, json.Unmarshal([]byte(c.next("monitor", nil)), &m))
	assert.Equal(t, monitorengine.MonitorEvent{Slug: "fast", Change: "updated"}, m)
	require.Equal(t, http.StatusNoContent, s.do(req{method: "DELETE", path: "/api/crons/monitors/fast"}).status)
	require.NoError(t, json.Unmarshal([]byte(c.next("monitor", nil)), &m))
	assert.Equal(t, monitorengine.MonitorEvent{Slug: "fast", Change: "deleted"}, m)
}
