// Package jobs is the public side of the server's background jobs: a Job's
// definition (a command with its arguments, or a Go function), the
// configuration file that declares command jobs (Load, Parse), a Registry
// of the jobs a server runs, and the guards and effects of the job machine
// (package gen/job) as pure functions of values (Behavior).
//
// The engine that runs them is package server/internal/jobengine.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/fsmgen/fsmgen/server/monitors"
)

// Func is a Go job: it does its work until ctx ends (a timeout, a cancel,
// the server stopping) and returns what it has to say (kept as the run's
// output) and whether it failed.
type Func func(ctx context.Context) (output string, err error)

// Job is a job's definition: what it runs and when.
type Job struct {
	// ID names the job in the API and in its monitor (job-<id>): 1 to 64
	// of a-z, 0-9, - and _, starting with a letter or digit.
	ID string
	// Name is what people read; the ID when empty.
	Name string
	// Command is the program and its arguments (run without a shell), for
	// a command job; Func the function, for a Go job. One of them is set.
	Command []string
	Func    Func
	// Settings say when the job runs, how long a run may take and how a
	// failed run is retried.
	Settings Settings
	// Enabled jobs run; a disabled one keeps its history and does not run.
	Enabled bool
}

// The defaults of the configuration file.
const (
	DefaultRetries     = 3
	DefaultBackoffBase = 5 * time.Second
	DefaultBackoffCap  = 5 * time.Minute
	DefaultTimeout     = time.Hour
)

var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Check reports what is wrong with j, or nil.
func (j *Job) Check() error {
	var errs []error
	if !idRE.MatchString(j.ID) {
		errs = append(errs, fmt.Errorf("id %q: give 1 to 64 of a-z, 0-9, - and _, starting with a letter or digit", j.ID))
	}
	switch {
	case len(j.Command) == 0 && j.Func == nil:
		errs = append(errs, errors.New("no command: give the program and its arguments, as in [/usr/bin/backup, --full]"))
	case len(j.Command) > 0 && j.Func != nil:
		errs = append(errs, errors.New("both a command and a Go function: give one"))
	case len(j.Command) > 0 && j.Command[0] == "":
		errs = append(errs, errors.New("command: the program is empty"))
	}
	if err := j.Settings.Check(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Check reports what is wrong with s, or nil.
func (s Settings) Check() error {
	var errs []error
	if _, err := monitors.Compile(s.cron()); err != nil {
		errs = append(errs, err)
	}
	if s.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("timeout %v: give a positive duration, as in 30m", s.Timeout))
	}
	if s.Retries < 0 || s.Retries > 100 {
		errs = append(errs, fmt.Errorf("retries %d: give 0 to 100", s.Retries))
	}
	if s.Retries > 0 && s.BackoffBase <= 0 {
		errs = append(errs, fmt.Errorf("backoff base %v: give a positive duration, as in 5s", s.BackoffBase))
	}
	if s.BackoffCap < s.BackoffBase {
		errs = append(errs, fmt.Errorf("backoff cap %v is below its base %v: give a cap at least the base", s.BackoffCap, s.BackoffBase))
	}
	if s.Overlap != OverlapSkip && s.Overlap != OverlapQueue {
		errs = append(errs, fmt.Errorf("overlap %q: give skip or queue", s.Overlap))
	}
	return errors.Join(errs...)
}

// cron returns the settings as a monitor's, for their schedule.
func (s Settings) cron() monitors.Settings {
	return monitors.Settings{Schedule: s.Schedule, Timezone: s.Timezone}
}

// Registry holds the jobs a server runs, in the order they were
// registered.
type Registry struct {
	jobs []*Job
	byID map[string]*Job
}

// Register adds a job, checked; an id registered before is refused. An
// overlap of "skip" is taken as OverlapSkip.
func (r *Registry) Register(j Job) error {
	if j.Settings.Overlap == OverlapSkipName {
		j.Settings.Overlap = OverlapSkip
	}
	if err := j.Check(); err != nil {
		return fmt.Errorf("job %q: %w", j.ID, err)
	}
	if r.byID == nil {
		r.byID = map[string]*Job{}
	}
	if r.byID[j.ID] != nil {
		return fmt.Errorf("job %q is registered twice: give each job its own id", j.ID)
	}
	if j.Name == "" {
		j.Name = j.ID
	}
	r.jobs = append(r.jobs, &j)
	r.byID[j.ID] = &j
	return nil
}

// Jobs returns the registered jobs, in the order they were registered.
func (r *Registry) Jobs() []*Job { return r.jobs }

// The statuses of a run: queued while it waits for a free slot (the
// server's limit on runs at once) or, with OverlapQueue, for the job's run
// in progress to end, then running, then one of the others.
const (
	RunQueued    = "queued"
	RunRunning   = "running"
	RunSucceeded = "succeeded"
	RunFailed    = "failed"
	RunCancelled = "cancelled"
)

// A job's health: healthy; degraded with 1 to UnhealthyAfter-1
// consecutive failed runs, or when disabled; unhealthy from
// UnhealthyAfter.
const (
	HealthHealthy   = "healthy"
	HealthDegraded  = "degraded"
	HealthUnhealthy = "unhealthy"
	UnhealthyAfter  = 3
)

// Health is the health of a job with failures consecutive failed runs.
func Health(failures int, enabled bool) string {
	switch {
	case failures >= UnhealthyAfter:
		return HealthUnhealthy
	case failures > 0 || !enabled:
		return HealthDegraded
	}
	return HealthHealthy
}
