// Package memory is a store.Store in memory, for the tests that must not
// link a database (the fuzz targets of the HTTP handlers, the jobs
// engine's tests with a fake clock). It keeps what
// a database keeps, with the same rules (a failed batch writes nothing, a
// finished check-in is not finished again), and loses it all when the
// process ends: the server never uses it.
package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// Store is a database in memory. The zero Store is not usable: call New.
type Store struct {
	mu       sync.Mutex
	meta     map[string]string
	monitors map[int64]store.Monitor
	checkins []store.Checkin // in insertion order
	alerts   []alert
	jobs     map[string]store.Job
	runs     []store.Run // in insertion order
	threads  map[threadKey]store.Thread
	keys     map[string]store.Key
}

// threadKey names a thread: its owner and its ID.
type threadKey struct{ owner, id string }

type alert struct {
	store.Alert
	next      time.Time
	raised    time.Time
	delivered bool
	givenUp   bool
}

var _ store.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{meta: map[string]string{}, monitors: map[int64]store.Monitor{}, jobs: map[string]store.Job{}, threads: map[threadKey]store.Thread{}, keys: map[string]store.Key{}}
}

// Meta returns the value stored under key.
func (s *Store) Meta(ctx context.Context, key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.meta[key]
	return v, ok, nil
}

// SetMeta stores value under key.
func (s *Store) SetMeta(ctx context.Context, key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.meta[key] = value
	return nil
}

// Monitors returns every monitor, by id.
func (s *Store) Monitors(ctx context.Context) ([]*store.Monitor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*store.Monitor
	for _, m := range s.monitors {
		m.Machine = slices.Clone(m.Machine)
		out = append(out, &m)
	}
	slices.SortFunc(out, func(a, b *store.Monitor) int { return int(a.ID - b.ID) })
	return out, nil
}

// Checkins returns a monitor's last limit check-ins, newest first.
func (s *Store) Checkins(ctx context.Context, monitorID int64, limit int) ([]*store.Checkin, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*store.Checkin
	for i := len(s.checkins) - 1; i >= 0 && len(out) < limit; i-- {
		if c := s.checkins[i]; c.MonitorID == monitorID {
			out = append(out, &c)
		}
	}
	return out, nil
}

// Checkin returns one check-in of a monitor, or nil.
func (s *Store) Checkin(ctx context.Context, monitorID int64, id string) (*store.Checkin, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.checkins {
		if c.MonitorID == monitorID && c.ID == id {
			return &c, nil
		}
	}
	return nil, nil
}

// CheckinsByID returns the check-ins of the ids that exist.
func (s *Store) CheckinsByID(ctx context.Context, ids []string) ([]*store.Checkin, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*store.Checkin
	for _, c := range s.checkins {
		if slices.Contains(ids, c.ID) {
			out = append(out, &c)
		}
	}
	return out, nil
}

// Apply applies the batch, all of it or, on an error, nothing.
func (s *Store) Apply(ctx context.Context, b *store.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	monitors := make(map[int64]store.Monitor, len(s.monitors))
	for id, m := range s.monitors {
		monitors[id] = m
	}
	checkins := slices.Clone(s.checkins)
	alerts := slices.Clone(s.alerts)
	jobs := make(map[string]store.Job, len(s.jobs))
	for id, j := range s.jobs {
		jobs[id] = j
	}
	runs := slices.Clone(s.runs)
	for _, op := range b.Ops {
		switch op := op.(type) {
		case store.InsertMonitor:
			if _, taken := monitors[op.Monitor.ID]; taken {
				return fmt.Errorf("monitor %d exists", op.Monitor.ID)
			}
			for _, m := range monitors {
				if m.Slug == op.Monitor.Slug || m.PingKey == op.Monitor.PingKey {
					return fmt.Errorf("monitor %s: slug or ping key taken", op.Monitor.Slug)
				}
			}
			monitors[op.Monitor.ID] = op.Monitor
		case store.UpdateMonitor:
			old, ok := monitors[op.Monitor.ID]
			if !ok {
				continue
			}
			m := op.Monitor
			m.CreatedAt = old.CreatedAt
			monitors[m.ID] = m
		case store.SaveMachine:
			m, ok := monitors[op.ID]
			if !ok {
				continue
			}
			m.Machine, m.Health, m.LastCheckinAt, m.UpdatedAt = op.Machine, op.Health, op.LastCheckinAt, op.UpdatedAt
			monitors[op.ID] = m
		case store.DeleteMonitor:
			delete(monitors, op.ID)
			checkins = slices.DeleteFunc(checkins, func(c store.Checkin) bool { return c.MonitorID == op.ID })
		case store.InsertCheckin:
			if _, ok := monitors[op.Checkin.MonitorID]; !ok {
				return fmt.Errorf("check-in %s: no monitor %d", op.Checkin.ID, op.Checkin.MonitorID)
			}
			checkins = append(checkins, op.Checkin)
		case store.FinishCheckin:
			for i := range checkins {
				c := &checkins[i]
				if c.MonitorID == op.MonitorID && c.ID == op.ID && c.Status == "in_progress" {
					c.Status, c.FinishedAt = op.Status, op.At
					d := op.At.Sub(c.CreatedAt).Round(time.Millisecond)
					c.Duration = &d
					if op.ExitCode != nil {
						c.ExitCode = op.ExitCode
					}
					if op.Output != nil {
						c.Output = op.Output
					}
				}
			}
		case store.InsertAlert:
			alerts = append(alerts, alert{Alert: store.Alert{ID: int64(len(alerts) + 1), URL: op.URL, Payload: op.Payload}, next: op.At, raised: op.At})
		case store.SaveJob:
			jobs[op.Job.ID] = op.Job
		case store.InsertRun:
			for _, r := range runs {
				if r.ID == op.Run.ID {
					return fmt.Errorf("run %s exists", r.ID)
				}
			}
			runs = append(runs, op.Run)
		case store.StartQueuedRun:
			for i := range runs {
				if r := &runs[i]; r.ID == op.ID && r.Status == "queued" {
					r.Status, r.StartedAt = "running", op.StartedAt
				}
			}
		case store.FinishRun:
			for i := range runs {
				r := &runs[i]
				if r.ID == op.ID && (r.Status == "running" || r.Status == "queued") {
					d := op.Duration.Round(time.Millisecond)
					r.Status, r.FinishedAt, r.Duration = op.Status, op.FinishedAt, &d
					r.Output, r.Truncated, r.ExitCode, r.Error = op.Output, op.Truncated, op.ExitCode, op.Error
				}
			}
		case store.DeleteRuns:
			runs = slices.DeleteFunc(runs, func(r store.Run) bool {
				return r.Status != "running" && r.Status != "queued" && r.StartedAt.Before(op.Before)
			})
		case store.DeleteCheckins:
			checkins = slices.DeleteFunc(checkins, func(c store.Checkin) bool {
				return c.MonitorID == op.MonitorID && c.Status != "in_progress" && c.CreatedAt.Before(op.Before)
			})
		default:
			return fmt.Errorf("unknown write %T", op)
		}
	}
	s.monitors, s.checkins, s.alerts, s.jobs, s.runs = monitors, checkins, alerts, jobs, runs
	return nil
}

// PendingAlerts returns up to limit undelivered alerts due at now.
func (s *Store) PendingAlerts(ctx context.Context, now time.Time, limit int) ([]*store.Alert, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*store.Alert
	waiting := map[string]bool{} // URLs with an older alert undelivered
	for _, a := range s.alerts {
		if a.delivered || a.givenUp {
			continue
		}
		if !waiting[a.URL] && !a.next.After(now) && len(out) < limit {
			out = append(out, &a.Alert)
		}
		waiting[a.URL] = true
	}
	return out, nil
}

// NextAlertAt returns when the next undelivered alert is due, of each
// URL's oldest.
func (s *Store) NextAlertAt(ctx context.Context) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var next time.Time
	waiting := map[string]bool{} // URLs with an older alert undelivered
	for _, a := range s.alerts {
		if a.delivered || a.givenUp {
			continue
		}
		if !waiting[a.URL] && (next.IsZero() || a.next.Before(next)) {
			next = a.next
		}
		waiting[a.URL] = true
	}
	return next, nil
}

// OldestAlertAt returns when the oldest undelivered alert was raised.
func (s *Store) OldestAlertAt(ctx context.Context) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var oldest time.Time
	for _, a := range s.alerts {
		if !a.delivered && !a.givenUp && (oldest.IsZero() || a.raised.Before(oldest)) {
			oldest = a.raised
		}
	}
	return oldest, nil
}

// AlertDelivered records a delivery.
func (s *Store) AlertDelivered(ctx context.Context, id int64, now time.Time) error {
	return s.alert(id, func(a *alert) { a.delivered = true; a.Attempts++ })
}

// AlertFailed records a failed attempt.
func (s *Store) AlertFailed(ctx context.Context, id int64, now, next time.Time, why string) error {
	return s.alert(id, func(a *alert) {
		a.Attempts++
		a.next, a.givenUp = next, next.IsZero()
	})
}

func (s *Store) alert(id int64, f func(*alert)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.alerts {
		if s.alerts[i].ID == id {
			f(&s.alerts[i])
			return nil
		}
	}
	return fmt.Errorf("no alert %d", id)
}

// Jobs returns every job's row, by id.
func (s *Store) Jobs(ctx context.Context) ([]*store.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*store.Job
	for _, j := range s.jobs {
		j.Machine = slices.Clone(j.Machine)
		out = append(out, &j)
	}
	slices.SortFunc(out, func(a, b *store.Job) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Runs returns a job's last limit runs, newest first.
func (s *Store) Runs(ctx context.Context, jobID string, limit int) ([]*store.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*store.Run
	for i := len(s.runs) - 1; i >= 0 && len(out) < limit; i-- {
		if r := s.runs[i]; r.JobID == jobID {
			out = append(out, &r)
		}
	}
	return out, nil
}

// Run returns one run, or nil.
func (s *Store) Run(ctx context.Context, id string) (*store.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.runs {
		if r.ID == id {
			return &r, nil
		}
	}
	return nil, nil
}

// RunningRuns returns the runs marked running, oldest first.
func (s *Store) RunningRuns(ctx context.Context) ([]*store.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*store.Run
	for _, r := range s.runs {
		if r.Status == "running" {
			out = append(out, &r)
		}
	}
	return out, nil
}

// LastRuns returns the newest run of every job that has one.
func (s *Store) LastRuns(ctx context.Context) ([]*store.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	var out []*store.Run
	for i := len(s.runs) - 1; i >= 0; i-- {
		if r := s.runs[i]; !seen[r.JobID] && s.jobs[r.JobID].ID != "" {
			seen[r.JobID] = true
			out = append(out, &r)
		}
	}
	slices.Reverse(out)
	return out, nil
}

// Close does nothing.
func (s *Store) Close() error { return nil }
