package api

import (
	"context"
	"net/http"
	"time"
)

// The health of a component and of the server.
const (
	statusOK        = "ok"
	statusDegraded  = "degraded"
	statusUnhealthy = "unhealthy"
)

// alertsLate is how long after it was raised an alert may wait before
// delivery is reported degraded (its webhook keeps failing).
const alertsLate = 5 * time.Minute

// component is one part of the server as /health reports it.
type component map[string]any

// health answers GET /health: the status of each component (the store,
// the monitors engine, the jobs engine, the alerts' delivery) and the
// worst of them; 503 when one is unhealthy.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	components := map[string]component{}
	next, err := s.store.NextAlertAt(ctx)
	var oldest time.Time
	if err == nil {
		oldest, err = s.store.OldestAlertAt(ctx)
	}
	if err != nil {
		s.log.Error("the health check could not read the store", "err", err)
		components["store"] = component{"status": statusUnhealthy, "error": "the database cannot be read: see the server's log"}
	} else {
		components["store"] = component{"status": statusOK}
		alerts := component{"status": statusOK}
		if !next.IsZero() {
			alerts["next_attempt_at"] = next.UTC()
		}
		if !oldest.IsZero() {
			alerts["waiting_since"] = oldest.UTC()
			if s.now().Sub(oldest) > alertsLate {
				alerts["status"] = statusDegraded
				alerts["error"] = "alerts wait past their time: a webhook keeps failing"
			}
		}
		components["alerts"] = alerts
	}
	// The counts are of what this instance runs (on a shared database, the
	// monitors of the shards it holds).
	mon := component{"status": statusOK, "monitors": s.engine.Monitors(), "timers": s.engine.Timers(), "subscribers": s.engine.Hub().Subscribers()}
	if n, shared := s.engine.Shards(); shared {
		mon["shards"] = n
	}
	if !s.engine.Running() {
		mon["status"] = statusUnhealthy
	}
	components["monitors"] = mon
	if s.jobs != nil {
		n, running, queued, unhealthy, err := s.jobs.Counts(ctx)
		c := component{"status": statusOK, "jobs": n, "running": running, "queued": queued, "unhealthy": unhealthy}
		if active, shared := s.jobs.Active(); shared {
			// Whether this instance is the one that runs the jobs.
			c["active"] = active
		}
		switch {
		case !s.jobs.Running():
			c["status"] = statusUnhealthy
		case err != nil:
			s.log.Error("the health check could not read the jobs", "err", err)
			c["status"] = statusUnhealthy
			c["error"] = "the jobs cannot be read: see the server's log"
		case unhealthy > 0:
			c["status"] = statusDegraded
		}
		components["jobs"] = c
	}
	overall := statusOK
	for _, c := range components {
		switch c["status"] {
		case statusUnhealthy:
			overall = statusUnhealthy
		case statusDegraded:
			if overall == statusOK {
				overall = statusDegraded
			}
		}
	}
	code := http.StatusOK
	if overall == statusUnhealthy {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, map[string]any{"status": overall, "components": components})
}

// listJobs answers GET /api/jobs.
func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) {
	list, err := s.jobs.ListStored(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"jobs": list})
}

// listRuns answers GET /api/jobs/{id}/runs?limit=N, newest first.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	limit, err := intParam(r, "limit", defCheckins, 1, maxCheckins)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	runs, err := s.jobs.Runs(r.Context(), r.PathValue("id"), limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": runs})
}

// triggerJob answers POST /api/jobs/{id}/trigger: a manual run, now.
func (s *Server) triggerJob(w http.ResponseWriter, r *http.Request) {
	run, err := s.jobs.Trigger(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"run": run})
}

// cancelRun answers POST /api/jobs/runs/{run}/cancel.
func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.jobs.Cancel(r.Context(), r.PathValue("run"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"run": run})
}
