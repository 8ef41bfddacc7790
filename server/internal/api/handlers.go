package api

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/fsmgen/fsmgen/server/internal/apikey"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/monitors"
)

// index serves the web page.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	if s.page == nil {
		writeError(w, &monitorengine.Error{Status: 404, Code: "not_found", Message: "this server has no web page: use the API under /api/crons/"})
		return
	}
	s.page.ServeHTTP(w, r)
}

func (s *Server) listMonitors(w http.ResponseWriter, r *http.Request) {
	list, err := s.engine.List(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"monitors": list})
}

func (s *Server) createMonitor(w http.ResponseWriter, r *http.Request) {
	var in monitorengine.Input
	if err := decode(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	v, err := s.engine.Create(r.Context(), &in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/crons/monitors/"+v.Slug)
	writeJSON(w, http.StatusCreated, v)
}

func (s *Server) getMonitor(w http.ResponseWriter, r *http.Request) {
	v, err := s.engine.Get(r.Context(), r.PathValue("slug"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) patchMonitor(w http.ResponseWriter, r *http.Request) {
	var in monitorengine.Input
	if err := decode(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	v, err := s.engine.Patch(r.Context(), r.PathValue("slug"), &in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) deleteMonitor(w http.ResponseWriter, r *http.Request) {
	if err := s.engine.Delete(r.Context(), r.PathValue("slug")); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listCheckins(w http.ResponseWriter, r *http.Request) {
	limit, err := intParam(r, "limit", defCheckins, 1, maxCheckins)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	list, err := s.engine.Checkins(r.Context(), r.PathValue("slug"), limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"checkins": list})
}

// checkinInput is a check-in the API posts.
type checkinInput struct {
	Status    string  `json:"status"`
	CheckinID string  `json:"checkin_id"`
	ExitCode  *int    `json:"exit_code"`
	Output    *string `json:"output"`
}

// postCheckin records a check-in sent through the API (source api).
func (s *Server) postCheckin(w http.ResponseWriter, r *http.Request) {
	var in checkinInput
	if err := decode(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	p := monitorengine.Ping{Slug: r.PathValue("slug"), Checkin: in.CheckinID, ExitCode: in.ExitCode, Source: monitorengine.SourceAPI}
	switch in.Status {
	case monitorengine.CheckinInProgress:
		p.Kind = monitorengine.PingStart
		if in.CheckinID != "" {
			s.fail(w, r, badRequest("invalid_checkin_id", "a check-in in progress gets its id from the server: leave checkin_id out"))
			return
		}
	case monitorengine.CheckinOK:
		p.Kind = monitorengine.PingOK
	case monitorengine.CheckinError:
		p.Kind = monitorengine.PingFail
	default:
		s.fail(w, r, badRequest("invalid_status", "status %q: give in_progress, ok or error", in.Status))
		return
	}
	if in.ExitCode != nil && (*in.ExitCode < 0 || *in.ExitCode > 255) {
		s.fail(w, r, badRequest("invalid_exit_code", "exit_code %d: give a whole number from 0 to 255", *in.ExitCode))
		return
	}
	if in.Output != nil {
		p.Output = keepOutput([]byte(*in.Output))
	}
	id, err := s.engine.Check(r.Context(), p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"checkin_id": id})
}

// ping records a ping: /ping/{key} (ok), /ping/{key}/start,
// /ping/{key}/fail, /ping/{key}/{exit code}; ?exit_code=N and
// ?checkin_id=ID as query parameters; a POST's body is kept as output.
func (s *Server) ping(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	if wait, ok := s.limits.allow(key, s.now()); !ok {
		w.Header().Set("Retry-After", retryAfter(wait))
		writeError(w, &monitorengine.Error{Status: 429, Code: "rate_limited", Message: fmt.Sprintf("this ping key sends more than %g pings a second: wait %s", s.limits.rate, retryAfter(wait)+"s")})
		return
	}
	p := monitorengine.Ping{Key: key, Kind: monitorengine.PingOK, Source: monitorengine.SourcePing, Checkin: r.URL.Query().Get("checkin_id")}
	switch what := r.PathValue("what"); what {
	case "":
	case "start":
		p.Kind = monitorengine.PingStart
	case "fail":
		p.Kind = monitorengine.PingFail
	default:
		code, err := strconv.Atoi(what)
		if err != nil || code < 0 || code > 255 {
			s.fail(w, r, &monitorengine.Error{Status: 404, Code: "not_found", Message: fmt.Sprintf("no ping %q: ping /ping/KEY, /ping/KEY/start, /ping/KEY/fail or /ping/KEY/EXIT_CODE (0-255)", what)})
			return
		}
		p.ExitCode = &code
	}
	if v := r.URL.Query().Get("exit_code"); v != "" {
		code, err := strconv.Atoi(v)
		if err != nil || code < 0 || code > 255 {
			s.fail(w, r, badRequest("invalid_exit_code", "exit_code=%q: give a whole number from 0 to 255", v))
			return
		}
		if p.ExitCode != nil && *p.ExitCode != code {
			s.fail(w, r, badRequest("invalid_exit_code", "the path gives exit code %d and the query %d: give one", *p.ExitCode, code))
			return
		}
		p.ExitCode = &code
	}
	if p.Kind == monitorengine.PingStart && p.Checkin != "" {
		s.fail(w, r, badRequest("invalid_checkin_id", "a start ping creates a check-in: leave checkin_id out"))
		return
	}
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxPingBody+1))
		if err != nil {
			s.fail(w, r, badRequest("bad_body", "the body could not be read: %v", err))
			return
		}
		if len(body) > maxPingBody {
			s.fail(w, r, &monitorengine.Error{Status: 413, Code: "body_too_large", Message: fmt.Sprintf("a ping's body is at most %d bytes (%d are kept)", maxPingBody, maxOutput)})
			return
		}
		p.Output = keepOutput(body)
	}
	id, err := s.engine.Check(r.Context(), p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"checkin_id": id})
}

// preview answers the next run times of a schedule:
// ?schedule=EXPR (a cron expression) or ?interval_seconds=N,
// &timezone=TZ, &after=RFC3339, &count=N.
func (s *Server) preview(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sched := monitorengine.Schedule{Type: "cron", Expression: q.Get("schedule")}
	if v := q.Get("interval_seconds"); v != "" {
		if sched.Expression != "" {
			s.fail(w, r, badRequest("invalid_schedule", "give schedule or interval_seconds, not both"))
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			s.fail(w, r, badRequest("invalid_interval_seconds", "interval_seconds=%q: give a whole number of seconds", v))
			return
		}
		sched = monitorengine.Schedule{Type: "interval", Seconds: n}
	} else if sched.Expression == "" {
		s.fail(w, r, badRequest("invalid_schedule", "give schedule (a cron expression such as \"0 3 * * *\") or interval_seconds"))
		return
	}
	after := s.now()
	if v := q.Get("after"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			s.fail(w, r, badRequest("invalid_after", "after=%q: give a time in RFC 3339, as in 2025-03-09T06:00:00Z", v))
			return
		}
		after = t
	}
	count, err := intParam(r, "count", defPreview, 1, maxPreview)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	tz := q.Get("timezone")
	runs, err := monitorengine.Preview(sched, tz, after, count)
	if err != nil {
		field, why := "schedule", error(err)
		var bad *monitors.InvalidError
		if errors.As(err, &bad) {
			field, why = bad.Field, bad.Err
		}
		if field == "schedule" && sched.Type == "interval" {
			field = "interval_seconds"
		}
		s.fail(w, r, badRequest("invalid_"+field, "%s: %v", field, why))
		return
	}
	if tz == "" {
		tz = "UTC"
	}
	writeJSON(w, http.StatusOK, map[string]any{"schedule": sched, "timezone": tz, "after": after, "runs": runs})
}

// stream sends every change as a server-sent event until the client
// leaves, the server stops or the request's API key is revoked (looked up
// again every apikey.TTL): health (a monitor's health changed), checkin
// and monitor; a comment every 15 seconds keeps it open.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, &monitorengine.Error{Status: 500, Code: "internal", Message: "this connection cannot stream"})
		return
	}
	events, stop := s.engine.Hub().Subscribe()
	defer stop()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, "retry: 2000\n\n")
	flusher.Flush()
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	recheck := time.NewTicker(apikey.TTL)
	defer recheck.Stop()
	hash := requestKey(r).Hash
	for {
		select {
		case <-r.Context().Done():
			return
		case <-recheck.C:
			// A store that cannot be read does not end the stream; a
			// key no longer valid does: the client's next request is
			// refused.
			if k, err := s.keys.Lookup(r.Context(), hash); err == nil && (k == nil || !k.RevokedAt.IsZero()) {
				return
			}
		case msg, ok := <-events:
			if !ok {
				return
			}
			if _, err := w.Write(msg); err != nil {
				return
			}
			flusher.Flush()
		case <-keepAlive.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}
