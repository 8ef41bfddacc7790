package api

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// queryParams are the query parameters each route takes, by its pattern:
// any other is refused (400 unknown_parameter), as an unknown field of a
// JSON body is, and so is one given twice. The routes not listed take
// none, but those of anyQuery.
var queryParams = map[string][]string{
	"/api/crons/monitors/{slug}/checkins": {"limit"},
	"/api/crons/preview":                  {"schedule", "interval_seconds", "timezone", "after", "count"},
	"/api/jobs/{id}/runs":                 {"limit"},
	"/api/threads":                        {"limit"},
	"/ping/{key}":                         {"exit_code", "checkin_id"},
	"/ping/{key}/{what}":                  {"exit_code", "checkin_id"},
}

// anyQuery are the routes that take any query: the page (a browser's or a
// link's additions), the health check (a load balancer's), and the answer
// to a path that does not exist (404 says so).
var anyQuery = map[string]bool{"/{$}": true, "/health": true, "/": true}

// checkQuery refuses a query the route of pattern does not take. (A
// request the mux redirects, to a cleaned path, has no pattern: it is
// checked when it comes back.)
func checkQuery(pattern string, r *http.Request) error {
	if r.URL.RawQuery == "" || anyQuery[pattern] {
		return nil
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return badRequest("bad_query", "the query string is not valid (%v): give name=value pairs joined by &, escaped", err)
	}
	allowed := queryParams[pattern]
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(allowed, name) {
			takes := "takes no query parameter"
			if len(allowed) > 0 {
				takes = "takes " + strings.Join(allowed, ", ")
			}
			return badRequest("unknown_parameter", "unknown query parameter %q: %s %s", name, r.URL.Path, takes)
		}
		if n := len(q[name]); n > 1 {
			return badRequest("invalid_"+name, "%s is given %d times: give it once", name, n)
		}
	}
	return nil
}

// A request whose answer is an error may come with a body the handler did
// not read (one too large, one sent with a wrong token). Should the server
// close the connection on it, a client that sends its whole body before
// it reads the answer (curl, most HTTP libraries) gets a reset connection,
// not the answer. So before an error's status is written, what is left of
// the body is read and dropped: up to drainBound bytes, for at most
// drainTime; past either, the answer is sent and the connection closed.
const (
	drainBound = 64 << 20
	drainTime  = 10 * time.Second
)

// drainingWriter drains its request's body before it writes a status of
// 400 or more.
type drainingWriter struct {
	http.ResponseWriter
	r       *http.Request
	written bool
}

func (d *drainingWriter) WriteHeader(code int) {
	if !d.written {
		d.written = true
		if code >= 400 {
			drain(d.ResponseWriter, d.r)
		}
	}
	d.ResponseWriter.WriteHeader(code)
}

func (d *drainingWriter) Write(p []byte) (int, error) {
	if !d.written {
		d.WriteHeader(http.StatusOK)
	}
	return d.ResponseWriter.Write(p)
}

// Flush flushes the answer (the event stream).
func (d *drainingWriter) Flush() {
	if f, ok := d.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (d *drainingWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// drain reads what is left of r's body, within drainBound and drainTime;
// when it could not read it all, the answer closes the connection.
func drain(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(drainTime))
	n, err := io.Copy(io.Discard, io.LimitReader(r.Body, drainBound))
	rc.SetReadDeadline(time.Time{})
	// (A body already read and closed, as a forwarded request's, is no
	// failure.)
	if n == drainBound || err != nil && !errors.Is(err, http.ErrBodyReadAfterClose) {
		w.Header().Set("Connection", "close")
	}
}
