// Package api is the server's HTTP interface: the cron monitors', the
// background jobs', the agent's synced threads' and the API keys' JSON API
// (a bearer token: an API key of package apikey, whose scope each request
// needs), the pings (no token: the ping key is the secret), the event
// stream, the health check and the web page.
//
// Every request that goes wrong gets a 4xx (or, when the server cannot
// store a change, a 503) with a JSON body {"error": {"code": …, "message":
// …}} that says what is wrong; no input makes it answer 500 or panic.
package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fsmgen/fsmgen/server/internal/apikey"
	"github.com/fsmgen/fsmgen/server/internal/jobengine"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/store"
)

// Config is what a Server is made with.
type Config struct {
	// Engine runs the monitors. It must not be nil.
	Engine *monitorengine.Engine
	// Jobs runs the background jobs; no /api/jobs when nil.
	Jobs *jobengine.Engine
	// Store is the database, whose health /health reports and whose API
	// keys (store.Keys) the API's requests need. It must not be nil.
	Store store.Store
	// PingRate is how many pings a second each ping key may make, on
	// average (DefaultPingRate when 0); a key may burst to twice as many.
	PingRate float64
	// Page serves the web page at /; none when nil.
	Page http.Handler
	// Log receives a line for each failure the server answers 5xx.
	Log *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// MaxThreadBytes is the largest thread a push to /api/threads may
	// carry (DefaultMaxThread when 0).
	MaxThreadBytes int64
}

// DefaultPingRate is how many pings a second a ping key may make by
// default.
const DefaultPingRate = 100

// Limits on what a request may send.
const (
	maxBody      = 64 << 10 // an API request's JSON
	maxOutput    = 10 << 10 // the output a ping keeps
	maxPingBody  = 1 << 20  // what a ping may send at all
	maxCheckins  = 10000
	defCheckins  = 100
	maxPreview   = 1000
	defPreview   = 10
	truncatedTag = "...[truncated]"
)

// Server handles the HTTP requests.
type Server struct {
	engine *monitorengine.Engine
	jobs   *jobengine.Engine
	store  store.Store
	keys   *apikey.Checker
	limits *keyLimits
	page   http.Handler
	log    *slog.Logger
	now    func() time.Time
	mux    *http.ServeMux
	// maxThread is Config.MaxThreadBytes.
	maxThread int64
}

// New returns the server.
func New(c Config) *Server {
	s := &Server{engine: c.Engine, jobs: c.Jobs, store: c.Store, page: c.Page, log: c.Log, now: c.Now}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.keys = apikey.NewChecker(c.Store, s.now, s.log)
	rate := c.PingRate
	if rate <= 0 {
		rate = DefaultPingRate
	}
	s.limits = newKeyLimits(rate)
	s.maxThread = c.MaxThreadBytes
	if s.maxThread <= 0 {
		s.maxThread = DefaultMaxThread
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/health", s.methods(map[string]http.HandlerFunc{"GET": s.health}))
	mux.HandleFunc("/api/crons/monitors", s.auth(s.methods(map[string]http.HandlerFunc{"GET": s.listMonitors, "POST": s.createMonitor})))
	bySlug := func(r *http.Request) (string, error) { return s.engine.Route(r.Context(), r.PathValue("slug"), "") }
	mux.HandleFunc("/api/crons/monitors/{slug}", s.auth(s.methods(map[string]http.HandlerFunc{"GET": s.getMonitor, "PATCH": s.routed(bySlug, errMonitorMoved, s.patchMonitor), "DELETE": s.routed(bySlug, errMonitorMoved, s.deleteMonitor)})))
	mux.HandleFunc("/api/crons/monitors/{slug}/checkins", s.auth(s.methods(map[string]http.HandlerFunc{"GET": s.listCheckins, "POST": s.routed(bySlug, errMonitorMoved, s.postCheckin)})))
	mux.HandleFunc("/api/crons/preview", s.auth(s.methods(map[string]http.HandlerFunc{"GET": s.preview})))
	mux.HandleFunc("/api/crons/stream", s.auth(s.methods(map[string]http.HandlerFunc{"GET": s.stream})))
	if s.jobs != nil {
		mux.HandleFunc("/api/jobs", s.auth(s.methods(map[string]http.HandlerFunc{"GET": s.listJobs})))
		mux.HandleFunc("/api/jobs/{id}/runs", s.auth(s.methods(map[string]http.HandlerFunc{"GET": s.listRuns})))
		// Triggers and cancels go to the instance that runs the jobs.
		toJobs := func(r *http.Request) (string, error) { return s.jobs.Route(r.Context()) }
		mux.HandleFunc("/api/jobs/{id}/trigger", s.auth(s.methods(map[string]http.HandlerFunc{"POST": s.routed(toJobs, errJobsMoved, s.triggerJob)})))
		mux.HandleFunc("/api/jobs/runs/{run}/cancel", s.auth(s.methods(map[string]http.HandlerFunc{"POST": s.routed(toJobs, errJobsMoved, s.cancelRun)})))
	}
	// Threads are plain rows: any instance serves them, none forwards.
	mux.HandleFunc("/api/threads", s.auth(s.methods(map[string]http.HandlerFunc{"GET": s.listThreads})))
	mux.HandleFunc("/api/threads/{id}", s.auth(s.methods(map[string]http.HandlerFunc{"GET": s.getThread, "PUT": s.putThread})))
	// Keys, like threads, are rows any instance serves.
	mux.HandleFunc("/api/keys", s.admin(s.methods(map[string]http.HandlerFunc{"GET": s.listKeys, "POST": s.createKey})))
	mux.HandleFunc("/api/keys/{id}", s.admin(s.methods(map[string]http.HandlerFunc{"DELETE": s.revokeKey})))
	byKey := func(r *http.Request) (string, error) { return s.engine.Route(r.Context(), "", r.PathValue("key")) }
	routedPing := s.routed(byKey, errMonitorMoved, s.ping)
	ping := s.methods(map[string]http.HandlerFunc{"GET": routedPing, "POST": routedPing, "HEAD": routedPing})
	mux.HandleFunc("/ping/{key}", ping)
	mux.HandleFunc("/ping/{key}/{what}", ping)
	mux.HandleFunc("/{$}", s.methods(map[string]http.HandlerFunc{"GET": s.index}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &monitorengine.Error{Status: 404, Code: "not_found", Message: fmt.Sprintf("no such path %q: the API is under /api/crons/, /api/jobs, /api/threads and /api/keys, pings under /ping/", r.URL.Path)})
	})
	s.mux = mux
	return s
}

// ServeHTTP serves a request; a panic in a handler is answered 500 and
// logged, and the server goes on. A query parameter the route does not
// take is refused (input.go), and the body of a request answered with an
// error is read first (drainingWriter).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w = &drainingWriter{ResponseWriter: w, r: r}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.Error("a request panicked", "method", r.Method, "path", r.URL.Path, "panic", p)
			writeError(w, &monitorengine.Error{Status: 500, Code: "internal", Message: "the server failed on this request; it is logged"})
		}
	}()
	if _, pattern := s.mux.Handler(r); pattern != "" {
		if err := checkQuery(pattern, r); err != nil {
			writeError(w, err)
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// methods dispatches on the method, answering 405 with the allowed ones.
func (s *Server) methods(by map[string]http.HandlerFunc) http.HandlerFunc {
	var allowed []string
	for m := range by {
		allowed = append(allowed, m)
	}
	slices.Sort(allowed)
	return func(w http.ResponseWriter, r *http.Request) {
		h := by[r.Method]
		if h == nil {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			writeError(w, &monitorengine.Error{Status: 405, Code: "method_not_allowed", Message: fmt.Sprintf("%s is not allowed on %s: use %s", r.Method, r.URL.Path, strings.Join(allowed, " or "))})
			return
		}
		h(w, r)
	}
}

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// writeError answers err: an *monitors.Error as it says, anything else
// 500.
func writeError(w http.ResponseWriter, err error) {
	e := monitorengine.AsError(err)
	if e == nil {
		e = &monitorengine.Error{Status: 500, Code: "internal", Message: "the server failed on this request; it is logged"}
	}
	type body struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	writeJSON(w, e.Status, map[string]body{"error": {e.Code, e.Message}})
}

// fail answers err, logging it when it is the server's own failure (not
// an *monitors.Error: the engine logs a failed write itself).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if monitorengine.AsError(err) == nil {
		s.log.Error("a request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeError(w, err)
}

func badRequest(code, format string, args ...any) error {
	return &monitorengine.Error{Status: 400, Code: code, Message: fmt.Sprintf(format, args...)}
}

// decode reads the request's JSON body into v, strictly: one object, no
// unknown field, at most maxBody bytes.
func decode(r *http.Request, v any) error {
	// curl -d sends application/x-www-form-urlencoded: its body is read
	// as the JSON it is.
	if ct := r.Header.Get("Content-Type"); ct != "" && !jsonType(ct) {
		return &monitorengine.Error{Status: 415, Code: "unsupported_media_type", Message: fmt.Sprintf("the body is %s: send application/json", ct)}
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return badRequest("bad_body", "the body could not be read: %v", err)
	}
	if len(data) > maxBody {
		return &monitorengine.Error{Status: 413, Code: "body_too_large", Message: fmt.Sprintf("the body is larger than %d bytes", maxBody)}
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return badRequest("bad_json", "the body is empty: send a JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("bad_json", "the body is not the JSON this endpoint takes: %s", jsonProblem(err))
	}
	// Only white space may follow the object (dec.More would let a
	// closing } or ] through).
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("bad_json", "the body holds data after the JSON object (at byte %d): send one JSON object", dec.InputOffset())
	}
	return nil
}

// jsonType reports whether a request's Content-Type may hold JSON:
// application/json, a type with the +json suffix, or
// application/x-www-form-urlencoded, which curl -d sends.
func jsonType(ct string) bool {
	t, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return t == "application/json" || t == "application/x-www-form-urlencoded" ||
		(strings.HasPrefix(t, "application/") && strings.HasSuffix(t, "+json"))
}

// jsonProblem says what is wrong with a JSON body.
func jsonProblem(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("invalid JSON at byte %d: %v", syntax.Offset, err)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return fmt.Sprintf("want a JSON object, found %s", typ.Value)
		}
		kind := typ.Type.Kind().String()
		want, found := jsonKind(kind), typ.Value
		if n, ok := strings.CutPrefix(found, "number "); ok {
			// A number where a number goes: a fraction or an exponent in a
			// whole number, or a number out of its range.
			found = n
			switch {
			case !strings.HasPrefix(kind, "int") && !strings.HasPrefix(kind, "uint"):
				found += ", out of range"
			case strings.ContainsAny(n, ".eE"):
				want = "a whole number (digits, no fraction or exponent)"
			default:
				want = "a whole number in range"
			}
		}
		return fmt.Sprintf("field %s: want %s, found %s", typ.Field, want, found)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends too early"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func jsonKind(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"):
		return "a whole number"
	case strings.HasPrefix(k, "float"):
		return "a number"
	case k == "string":
		return "a string"
	case k == "bool":
		return "true or false"
	case k == "struct", k == "map":
		return "an object"
	case k == "slice":
		return "a list"
	}
	return k
}

// intParam reads an integer query parameter between lo and hi, def when
// absent.
func intParam(r *http.Request, name string, def, lo, hi int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, badRequest("invalid_"+name, "%s=%q: give a whole number from %d to %d", name, v, lo, hi)
	}
	return n, nil
}

// keepOutput returns what a check-in keeps of a job's output: valid UTF-8
// (invalid bytes replaced), at most maxOutput bytes and then a mark when
// it was cut.
func keepOutput(data []byte) *string {
	if len(data) == 0 {
		return nil
	}
	cut := len(data) > maxOutput
	if cut {
		data = data[:maxOutput]
		// Drop a character the cut split; invalid bytes are replaced
		// below.
		for i := len(data) - 1; i >= 0 && i >= len(data)-utf8.UTFMax; i-- {
			if utf8.RuneStart(data[i]) {
				if !utf8.FullRune(data[i:]) {
					data = data[:i]
				}
				break
			}
		}
	}
	s := strings.ToValidUTF8(string(data), "\uFFFD")
	if len(s) > maxOutput {
		// The replacements (3 bytes each) made it longer: cut again, at
		// a character (s is valid UTF-8 now).
		cut = true
		n := maxOutput
		for !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	if cut {
		s += truncatedTag
	}
	return &s
}

// retryAfter is the Retry-After value, in whole seconds, for a wait.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

// forwardedHeader marks a request one instance forwarded to another: it
// is not forwarded again.
const forwardedHeader = "Fsmgen-Forwarded"

// The answers to a forwarded request that finds that what it is about
// moved again.
var (
	errMonitorMoved error = &monitorengine.Error{Status: 503, Code: "monitor_moved", Message: "the monitor moved to another instance while the request was on its way; nothing was changed: retry"}
	errJobsMoved    error = &monitorengine.Error{Status: 503, Code: "jobs_moved", Message: "the jobs moved to another instance while the request was on its way; nothing was changed: retry"}
)

// routed serves a request here, or forwards it, as it came, to the
// instance route names (by its address) when several instances share a
// database: the one that runs the monitor it is about
// (monitorengine.Engine.Route), or the jobs (jobengine.Engine.Route). A request
// forwarded once is not forwarded again: it gets moved.
func (s *Server) routed(route func(*http.Request) (string, error), moved error, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		addr, err := route(r)
		if err != nil {
			w.Header().Set("Retry-After", "1")
			s.fail(w, r, err)
			return
		}
		if addr == "" {
			next(w, r)
			return
		}
		if r.Header.Get(forwardedHeader) != "" {
			w.Header().Set("Retry-After", "1")
			s.fail(w, r, moved)
			return
		}
		target, err := url.Parse(addr)
		if err != nil {
			s.fail(w, r, fmt.Errorf("the address %q of the instance to forward to: %w", addr, err))
			return
		}
		proxy := &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(target)
				pr.Out.Host = r.Host
				pr.Out.Header.Set(forwardedHeader, "1")
			},
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				w.Header().Set("Retry-After", "1")
				writeError(w, &monitorengine.Error{Status: 503, Code: "instance_unreachable", Message: fmt.Sprintf("the instance that handles this request does not answer (%v); another takes its work over when its lease runs out: retry", err)})
			},
		}
		proxy.ServeHTTP(w, r)
	}
}
