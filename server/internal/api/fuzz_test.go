package api_test

// FuzzAPI runs on the in-memory store: this package's tests must not link
// SQLite (its cold build takes minutes); the HTTP tests on SQLite are in
// server/internal/api/apitest. `go list -deps -test ./server/internal/api | grep sqlite`
// must stay empty.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/server/internal/api"
	"github.com/fsmgen/fsmgen/server/internal/apikey"
	jobsengine "github.com/fsmgen/fsmgen/server/internal/jobengine"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/store/memory"
	"github.com/fsmgen/fsmgen/server/internal/web"
	"github.com/fsmgen/fsmgen/server/internal/webhook"
	"github.com/fsmgen/fsmgen/server/jobs"
	"github.com/fsmgen/fsmgen/server/monitors"
)

// The tokens of the fuzzed server's keys: admin and read-only.
const (
	fuzzToken   = "fsm_fuzz"
	fuzzROToken = "fsm_fuzz_read_only"
)

// fuzzNow is the clock of the fuzzed server: fixed, so that no timer fires
// while an input runs, and an input does the same every time.
var fuzzNow = time.Date(2025, 3, 8, 12, 0, 0, 0, time.UTC)

// fuzzStack is a server with a few monitors, fresh for each input.
type fuzzStack struct {
	handler http.Handler
	// fill replaces the placeholders of an input: {token} (the admin
	// key's), {ro} (a read-only key's), {key} (the
	// ping key of monitor job), {off} (of a disabled monitor), {run} (a
	// running check-in of job), {done} (a finished one).
	fill *strings.Replacer
	stop func()
}

func newFuzzStack(t *testing.T) *fuzzStack {
	ctx := context.Background()
	st := memory.New()
	for _, k := range []*store.Key{
		{ID: apikey.AdminID, Name: "admin", Scope: apikey.ScopeAdmin, Hash: apikey.Hash(fuzzToken), CreatedAt: fuzzNow},
		{ID: "key_ro", Name: "read only", Scope: apikey.ScopeReadOnly, Hash: apikey.Hash(fuzzROToken), CreatedAt: fuzzNow},
	} {
		if _, err := st.AddKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	engine, err := monitorengine.New(ctx, monitorengine.Config{Store: st, Now: func() time.Time { return fuzzNow }, Webhooks: noNetwork})
	if err != nil {
		t.Fatal(err)
	}
	noop := &jobs.Job{ID: "noop", Name: "noop", Func: func(ctx context.Context) (string, error) { return "", nil }, Enabled: true,
		Settings: jobs.Settings{Schedule: monitors.Schedule{Type: "interval", Seconds: 3600}, Timeout: time.Minute, BackoffBase: time.Second, BackoffCap: time.Second}}
	jobEngine, err := jobsengine.New(ctx, jobsengine.Config{Store: st, Jobs: []*jobs.Job{noop}, Now: func() time.Time { return fuzzNow }})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	stopped := make(chan error, 2)
	go func() { stopped <- engine.Run(runCtx) }()
	go func() { stopped <- jobEngine.Run(runCtx) }()
	// The health check reports an engine that is not running yet as
	// unhealthy: the inputs are served once both run, as a server's are.
	for waited := time.Duration(0); !engine.Running() || !jobEngine.Running(); waited += time.Millisecond {
		if waited > 10*time.Second {
			cancel()
			t.Fatal("the engines did not start in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	stop := func() {
		cancel()
		for range 2 {
			if err := <-stopped; err != nil {
				t.Errorf("Run: %v", err)
			}
		}
	}
	must := func(err error) {
		if err != nil {
			stop()
			t.Fatal(err)
		}
	}
	str := func(s string) *string { return &s }
	job, err := engine.Create(ctx, &monitorengine.Input{Slug: str("job"), Schedule: &monitorengine.Schedule{Type: "interval", Seconds: 3600}})
	must(err)
	off, err := engine.Create(ctx, &monitorengine.Input{Slug: str("off"), Schedule: &monitorengine.Schedule{Type: "cron", Expression: "30 2 * * *"}, Timezone: str("America/New_York")})
	must(err)
	_, err = engine.Patch(ctx, "off", &monitorengine.Input{Status: str(monitorengine.StatusDisabled)})
	must(err)
	done, err := engine.Check(ctx, monitorengine.Ping{Key: job.PingKey, Kind: monitorengine.PingStart, Source: monitorengine.SourcePing})
	must(err)
	_, err = engine.Check(ctx, monitorengine.Ping{Key: job.PingKey, Kind: monitorengine.PingOK, Checkin: done, Source: monitorengine.SourcePing})
	must(err)
	run, err := engine.Check(ctx, monitorengine.Ping{Key: job.PingKey, Kind: monitorengine.PingStart, Source: monitorengine.SourcePing})
	must(err)
	h := api.New(api.Config{
		Engine:   engine,
		Jobs:     jobEngine,
		Store:    st,
		PingRate: 0.5, // a burst of 1: the second ping of a key is limited
		Page:     web.Page(),
		Now:      func() time.Time { return fuzzNow },
	})
	return &fuzzStack{
		handler: h,
		fill:    strings.NewReplacer("{token}", fuzzToken, "{ro}", fuzzROToken, "{key}", job.PingKey, "{off}", off.PingKey, "{run}", run, "{done}", done),
		stop:    stop,
	}
}

// noNetwork guards the fuzzed server's webhooks: a fuzzed monitor may have
// any webhook, and none is resolved (no DNS server is asked) or dialled.
var noNetwork = (&webhook.Guard{}).WithHooks(
	&net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS while fuzzing")
	}},
	func(string, netip.AddrPort) error { return errors.New("no network while fuzzing") })

// streamRecorder is a ResponseRecorder that ends the request once an event
// stream has flushed: the stream would wait for events until the client
// left.
type streamRecorder struct {
	*httptest.ResponseRecorder
	leave context.CancelFunc
}

func (s *streamRecorder) Flush() {
	s.ResponseRecorder.Flush()
	if strings.HasPrefix(s.Header().Get("Content-Type"), "text/event-stream") {
		s.leave()
	}
}

var codeRE = regexp.MustCompile(`^[a-z][a-z_]*[a-z]$`)

// validHeader reports whether a header line is one the HTTP server would
// hand to a handler.
func validHeader(name, value string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if c > 0x7e || c <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c) {
			return false
		}
	}
	for _, c := range []byte(value) {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

func FuzzAPI(f *testing.F) {
	auth := "Authorization: Bearer {token}\n"
	asJSON := auth + "Content-Type: application/json\n"
	for _, s := range []struct {
		method, path, query, headers, body string
	}{
		// Valid requests.
		{"GET", "/health", "", "", ""},
		{"GET", "/", "", "", ""},
		{"GET", "/api/crons/monitors", "", auth, ""},
		{"POST", "/api/crons/monitors", "", asJSON, `{"slug": "new", "schedule": {"type": "cron", "expression": "*/15 9-17 * * MON-FRI"}, "timezone": "Europe/Berlin", "checkin_margin_seconds": 300, "max_runtime_seconds": 3600, "failure_threshold": 2, "recovery_threshold": 3, "alert_webhook_url": "https://example.com/hook"}`},
		{"POST", "/api/crons/monitors", "", asJSON, `{"slug": "every", "schedule": {"type": "interval", "seconds": 60}, "name": "Every minute"}`},
		{"GET", "/api/crons/monitors/job", "", auth, ""},
		{"PATCH", "/api/crons/monitors/job", "", asJSON, `{"status": "paused"}`},
		{"PATCH", "/api/crons/monitors/off", "", asJSON, `{"status": "active", "schedule": {"type": "cron", "expression": "@daily"}}`},
		{"PATCH", "/api/crons/monitors/job", "", asJSON, `{"slug": "renamed", "name": "Renamed"}`},
		{"DELETE", "/api/crons/monitors/job", "", auth, ""},
		{"GET", "/api/crons/monitors/job/checkins", "limit=2", auth, ""},
		{"POST", "/api/crons/monitors/job/checkins", "", asJSON, `{"status": "ok", "checkin_id": "{run}", "exit_code": 0, "output": "done"}`},
		{"POST", "/api/crons/monitors/job/checkins", "", asJSON, `{"status": "in_progress"}`},
		{"GET", "/api/crons/preview", "schedule=30+2+*+*+*&timezone=America/New_York&after=2025-03-08T12:00:00Z&count=3", auth, ""},
		{"GET", "/api/crons/preview", "interval_seconds=90&count=1000", auth, ""},
		{"GET", "/api/crons/stream", "", auth, ""},
		{"GET", "/ping/{key}", "", "", ""},
		{"POST", "/ping/{key}/start", "", "", "starting"},
		{"POST", "/ping/{key}/fail", "checkin_id={run}", "", "it broke\n"},
		{"GET", "/ping/{key}/0", "checkin_id={run}", "", ""},
		{"HEAD", "/ping/{key}/7", "", "", ""},
		{"GET", "/ping/{key}", "exit_code=3", "", ""},
		{"GET", "/api/jobs", "", auth, ""},
		{"GET", "/api/jobs/noop/runs", "limit=5", auth, ""},
		{"POST", "/api/jobs/noop/trigger", "", auth, ""},
		{"POST", "/api/jobs/runs/0123/cancel", "", auth, ""},
		{"GET", "/api/keys", "", auth, ""},
		{"POST", "/api/keys", "", asJSON, `{"name": "ci", "scope": "read-only"}`},
		{"DELETE", "/api/keys/key_ro", "", auth, ""},
		{"GET", "/api/threads", "limit=5", auth, ""},
		// Invalid ones.
		{"GET", "/api/crons/monitors", "", "Authorization: Basic eDp5\n", ""},
		{"GET", "/api/crons/monitors", "", "Authorization: Bearer fsm_wrong\n", ""},
		{"POST", "/api/crons/monitors", "", asJSON, `{"slug": }`},
		{"POST", "/api/crons/monitors", "", asJSON, `{"slug": "x", "schedule": {"type": "interval", "seconds": 60}}}`},
		{"POST", "/api/crons/monitors", "", asJSON, `{"slug": "x", "colour": 1}`},
		{"POST", "/api/crons/monitors", "", asJSON, `{"slug": 5, "schedule": {"type": "interval", "seconds": "60"}}`},
		{"POST", "/api/crons/monitors", "", auth + "Content-Type: text/plain\n", `{}`},
		{"POST", "/api/crons/monitors", "", asJSON, `{"slug": "x", "schedule": {"type": "cron", "expression": "60 0 * * *"}, "timezone": "Mars/Olympus"}`},
		{"POST", "/api/crons/monitors", "", asJSON, `{"slug": "job", "schedule": {"type": "interval", "seconds": 0}, "checkin_margin_seconds": -1}`},
		{"POST", "/api/crons/monitors", "", asJSON, `{"slug": "x", "schedule": {"type": "interval", "seconds": 60}, "alert_webhook_url": "ftp://x"}`},
		{"GET", "/api/crons/monitors/nope", "", auth, ""},
		{"GET", "/api/crons/monitors/job/checkins", "limit=0", auth, ""},
		{"GET", "/api/crons/preview", "schedule=@daily&interval_seconds=5&after=x&count=1001&timezone=Local", auth, ""},
		{"PUT", "/api/crons/monitors", "", auth, ""},
		{"POST", "/api/keys", "", asJSON, `{"name": "\u0007", "scope": "root"}`},
		{"DELETE", "/api/keys/nope", "", auth, ""},
		{"GET", "/api/keys", "", "Authorization: Bearer {ro}\n", ""},
		{"POST", "/api/crons/monitors", "", "Authorization: Bearer {ro}\nContent-Type: application/json\n", `{"slug": "x", "schedule": {"type": "interval", "seconds": 60}}`},
		{"GET", "/ping/nope", "", "", ""},
		{"GET", "/ping/{key}/256", "", "", ""},
		{"GET", "/ping/{key}/start", "checkin_id={run}", "", ""},
		{"GET", "/ping/{key}", "checkin_id={done}", "", ""},
		{"GET", "/ping/{key}", "checkin_id=nope&exit_code=-1", "", ""},
		{"GET", "/ping/{off}", "", "", ""},
		{"POST", "/ping/{key}", "", "", strings.Repeat("\xe2\x82\xac", 4000)},
		{"GET", "/api/crons/monitors/../../ping/{key}", "", "", ""},
		{"DELETE", "//x/%2F..", "", "", ""},
	} {
		f.Add(s.method, s.path, s.query, s.headers, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method, path, query, headers string, body []byte) {
		st := newFuzzStack(t)
		defer st.stop()
		method = st.fill.Replace(method)
		u := &url.URL{Scheme: "http", Host: "example.com", Path: st.fill.Replace(path), RawQuery: st.fill.Replace(query)}
		body = []byte(st.fill.Replace(string(body)))
		header := http.Header{}
		for line := range strings.Lines(st.fill.Replace(headers)) {
			name, value, _ := strings.Cut(strings.TrimSuffix(line, "\n"), ":")
			value = strings.Trim(value, " \t")
			if validHeader(name, value) {
				header.Add(name, value)
			}
		}
		// Twice: the first may change what the second finds (a monitor
		// created, a run closed, a ping key's bucket emptied).
		for range 2 {
			ctx, leave := context.WithTimeout(context.Background(), time.Minute)
			r, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
			if err != nil {
				leave()
				return // no server would hand it to a handler
			}
			r.Header = header.Clone()
			r.RequestURI = r.URL.RequestURI()
			w := &streamRecorder{ResponseRecorder: httptest.NewRecorder(), leave: leave}
			st.handler.ServeHTTP(w, r)
			leave()
			check(t, r, w.Result())
		}
	})
}

// check checks an answer: never a 5xx; an error is JSON with a code and a
// message; everything else the API answers is JSON but the page and the
// event stream.
func check(t *testing.T, r *http.Request, resp *http.Response) {
	t.Helper()
	data, _ := io.ReadAll(resp.Body)
	where := r.Method + " " + r.URL.String()
	if resp.StatusCode >= 500 {
		t.Fatalf("%s: %d %s", where, resp.StatusCode, data)
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case resp.StatusCode >= 400:
		if ct != "application/json" {
			t.Fatalf("%s: %d with Content-Type %q: %s", where, resp.StatusCode, ct, data)
		}
		var e struct {
			Error *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil || e.Error == nil || !codeRE.MatchString(e.Error.Code) || e.Error.Message == "" {
			t.Fatalf("%s: %d is not a JSON error (%v): %s", where, resp.StatusCode, err, data)
		}
		want := map[int]string{401: "WWW-Authenticate", 405: "Allow", 429: "Retry-After"}[resp.StatusCode]
		if want != "" && resp.Header.Get(want) == "" {
			t.Fatalf("%s: %d without %s: %s", where, resp.StatusCode, want, data)
		}
	case resp.StatusCode >= 300 || resp.StatusCode == http.StatusNoContent:
		// The mux's redirects to a clean path; a deletion.
	case strings.HasPrefix(ct, "text/event-stream"):
		if r.URL.Path != "/api/crons/stream" || r.Method != "GET" {
			t.Fatalf("%s: an event stream", where)
		}
	case strings.HasPrefix(ct, "text/html"):
		if r.URL.Path != "/" {
			t.Fatalf("%s: the page", where)
		}
	default:
		if ct != "application/json" || !json.Valid(data) {
			t.Fatalf("%s: %d with Content-Type %q is not JSON: %s", where, resp.StatusCode, ct, data)
		}
	}
}
