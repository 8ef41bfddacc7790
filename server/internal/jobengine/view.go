package jobengine

import (
	"context"
	"time"

	"github.com/fsmgen/fsmgen/gen/job"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/jobs"
	"github.com/fsmgen/fsmgen/server/monitors"
)

// View is a job as the API shows it.
type View struct {
	ID                  string            `json:"id"`
	Name                string            `json:"name"`
	Kind                string            `json:"kind"` // command or go
	Command             []string          `json:"command,omitempty"`
	Schedule            monitors.Schedule `json:"schedule"`
	Timezone            string            `json:"timezone"`
	TimeoutSeconds      float64           `json:"timeout_seconds"`
	Retries             int               `json:"retries"`
	BackoffBaseSeconds  float64           `json:"backoff_base_seconds"`
	BackoffCapSeconds   float64           `json:"backoff_cap_seconds"`
	Overlap             string            `json:"overlap"` // skip or queue
	Enabled             bool              `json:"enabled"`
	Status              string            `json:"status"` // scheduled, queued, running, waiting_to_retry, disabled
	Health              string            `json:"health"`
	ConsecutiveFailures int               `json:"consecutive_failures"`
	NextRunAt           *time.Time        `json:"next_run_at"`
	Monitor             string            `json:"monitor"`
	LastRun             *RunView          `json:"last_run"`
}

// The statuses of a job.
const (
	StatusScheduled      = "scheduled"
	StatusQueued         = "queued"
	StatusRunning        = "running"
	StatusWaitingToRetry = "waiting_to_retry"
	StatusDisabled       = "disabled"
)

// RunView is a run as the API shows it.
type RunView struct {
	ID              string     `json:"id"`
	JobID           string     `json:"job_id"`
	Status          string     `json:"status"`
	Attempt         int        `json:"attempt"`
	TriggeredBy     string     `json:"triggered_by"`
	StartedAt       time.Time  `json:"started_at"`
	FinishedAt      *time.Time `json:"finished_at,omitempty"`
	DurationMS      *int64     `json:"duration_ms,omitempty"`
	ExitCode        *int       `json:"exit_code,omitempty"`
	Error           string     `json:"error,omitempty"`
	Output          string     `json:"output"`
	OutputTruncated bool       `json:"output_truncated"`
}

func newRunView(r *store.Run) *RunView {
	v := &RunView{ID: r.ID, JobID: r.JobID, Status: r.Status, Attempt: r.Attempt, TriggeredBy: r.TriggeredBy, StartedAt: r.StartedAt.UTC(), ExitCode: r.ExitCode, Error: r.Error, Output: r.Output, OutputTruncated: r.Truncated}
	if !r.FinishedAt.IsZero() {
		f := r.FinishedAt.UTC()
		v.FinishedAt = &f
	}
	if r.Duration != nil {
		ms := r.Duration.Milliseconds()
		v.DurationMS = &ms
	}
	return v
}

// publish makes j's committed state what readers see.
func (j *jobState) publish() { j.view.Store(j.newView()) }

// newView returns j's view; a job without a machine (not yet stored) as
// its definition says.
func (j *jobState) newView() *View {
	if j.machine == nil {
		v := &View{
			ID: j.def.ID, Name: j.def.Name, Kind: "command", Command: j.def.Command,
			Schedule: j.def.Settings.Schedule, Timezone: j.def.Settings.Timezone,
			TimeoutSeconds: j.def.Settings.Timeout.Seconds(), Retries: j.def.Settings.Retries,
			BackoffBaseSeconds: j.def.Settings.BackoffBase.Seconds(), BackoffCapSeconds: j.def.Settings.BackoffCap.Seconds(),
			Overlap: j.def.Settings.OverlapName(),
			Enabled: j.def.Enabled, Status: StatusScheduled, Health: jobs.Health(0, j.def.Enabled), Monitor: monitorSlug(j.def.ID),
		}
		if !j.def.Enabled {
			v.Status = StatusDisabled
		}
		if j.def.Func != nil {
			v.Kind = "go"
		}
		return v
	}
	// The state, made once: each State call makes a copy of it.
	state := j.machine.State()
	s, failures, enabled := settingsOf(state), failuresOf(state), j.machine.Kind() != job.StateDisabled
	v := &View{
		ID: j.def.ID, Name: j.def.Name, Kind: "command", Command: j.def.Command,
		Schedule: s.Schedule, Timezone: s.Timezone,
		TimeoutSeconds: s.Timeout.Seconds(), Retries: s.Retries,
		BackoffBaseSeconds: s.BackoffBase.Seconds(), BackoffCapSeconds: s.BackoffCap.Seconds(),
		Overlap: s.OverlapName(),
		Enabled: enabled, Health: jobs.Health(failures, enabled),
		ConsecutiveFailures: failures, Monitor: monitorSlug(j.def.ID),
	}
	if j.def.Func != nil {
		v.Kind = "go"
	}
	var next time.Time
	switch st := state.(type) {
	case job.Scheduled:
		v.Status, next = StatusScheduled, st.NextRun
	case job.Starting:
		v.Status = StatusQueued
	case job.Running:
		v.Status = StatusRunning
	case job.WaitingToRetry:
		v.Status = StatusWaitingToRetry
		for _, t := range j.machine.Timers() {
			next = j.machine.Deadline(t.Timer)
		}
	case job.Disabled:
		v.Status = StatusDisabled
	}
	if !next.IsZero() {
		next = next.UTC()
		v.NextRunAt = &next
	}
	if j.last != nil {
		v.LastRun = newRunView(j.last)
	}
	return v
}

// settingsOf returns the settings of a state: every state of a job has
// them.
func settingsOf(s job.State) jobs.Settings {
	v, _ := job.SettingsOf(s)
	return v
}

// failuresOf returns the consecutive failed runs of a state: every state
// of a job counts them.
func failuresOf(s job.State) int {
	v, _ := job.FailuresOf(s)
	return v
}

// healthOf returns the health of a job's machine.
func healthOf(m *job.Machine) string {
	return jobs.Health(failuresOf(m.State()), m.Kind() != job.StateDisabled)
}

// List returns every job, in the configured order.
func (e *Engine) List() []*View {
	out := make([]*View, 0, len(e.list))
	for _, j := range e.list {
		out = append(out, j.view.Load())
	}
	return out
}

// Runs returns a job's last limit runs, newest first.
func (e *Engine) Runs(ctx context.Context, id string, limit int) ([]*RunView, error) {
	if e.byID[id] == nil {
		return nil, notFound(id)
	}
	rows, err := e.store.Runs(ctx, id, limit)
	if err != nil {
		return nil, err
	}
	out := make([]*RunView, 0, len(rows))
	for _, r := range rows {
		out = append(out, newRunView(r))
	}
	return out, nil
}

// Counts reports how many jobs there are, how many have a run in
// progress, how many a run queued for a free slot, and how many are
// unhealthy (on a shared store, as the database has them).
func (e *Engine) Counts(ctx context.Context) (n, running, queued, unhealthy int, err error) {
	views, err := e.ListStored(ctx)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	for _, v := range views {
		switch v.Status {
		case StatusRunning:
			running++
		case StatusQueued:
			queued++
		}
		if v.Health == jobs.HealthUnhealthy {
			unhealthy++
		}
	}
	return len(views), running, queued, unhealthy, nil
}
