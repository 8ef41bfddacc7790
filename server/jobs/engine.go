// Package jobs is the server's background-jobs engine: it keeps every
// job's machine (package gen/job) in memory, fires its timers, starts its
// runs (commands in their own process group, or Go functions), records
// each run in the store and checks each run in to a monitor of its own
// (job-<id>, in the cron-monitoring engine, in-process).
//
// One goroutine, Run, owns the machines, as the monitors engine does: it
// takes one request, timer or run result at a time, applies it to its
// machine, writes what the step changed (the machine as Save saved it, the
// run's row, an alert) in one transaction, and only then performs the
// step's effects: it starts or stops a process, answers the request. So a
// run is recorded running before its process starts, and a kill -9 at any
// moment leaves either no run or a run marked running, which the next
// start closes as failed ("interrupted by a restart") and tells the
// machine, which retries it per its policy.
//
// Time enters as input: a request's step happens at the engine's clock, a
// timer's firing at its deadline, even when handled late.
//
// On a store several instances share (Postgres), the jobs belong to the
// lease of one shard, store.JobsShard, which the monitors engine keeps:
// only the instance that holds it runs the jobs (shared.go).
package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsmgen/fsmgen/gen/job"
	"github.com/fsmgen/fsmgen/jobs"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
	"github.com/fsmgen/fsmgen/server/monitors"
	"github.com/fsmgen/fsmgen/server/store"
)

var _ job.Behavior = (*jobs.Behavior)(nil)

// Config is what an Engine is made with.
type Config struct {
	// Store keeps the jobs and their runs. It must not be nil.
	Store store.Store
	// Monitors is the cron-monitoring engine each run checks in to; no
	// check-ins when nil.
	Monitors *monitors.Engine
	// Jobs are the jobs to run.
	Jobs []*jobs.Job
	// AlertWebhook is the URL alerts go to; none when empty.
	AlertWebhook string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Log receives the engine's messages; slog.Default() when nil.
	Log *slog.Logger
	// Instance names this instance when Store is a store.Shared that
	// several instances share: it runs the jobs while it holds the lease
	// of store.JobsShard, which Monitors (then required) keeps.
	Instance string
}

// Engine runs the jobs.
type Engine struct {
	store    store.Store
	monitors *monitors.Engine
	now      func() time.Time
	log      *slog.Logger
	webhook  string
	behavior *jobs.Behavior

	reqs     chan *request
	results  chan *result
	stopping chan struct{} // closed when Run begins to stop
	stopped  chan struct{} // closed when Run has stopped
	running  atomic.Bool
	// runs are the goroutines of the runs in progress (Run waits for them
	// when it stops).
	runs sync.WaitGroup

	// list holds the jobs in their configured order; byID indexes them.
	// Neither changes after New. Each job's fields are Run's, but its
	// view, which readers load.
	list []*jobState
	byID map[string]*jobState
	step *step // the step being applied

	// On a shared store: the store and this instance. active says
	// whether this instance runs the jobs (Run's; always on one
	// instance), holding the same for the readers; lease is the hold on
	// store.JobsShard the jobs run under; retakeAt is when a failed
	// takeover is tried again.
	shared   store.Shared
	instance string
	active   bool
	holding  atomic.Bool
	lease    monitors.Lease
	retakeAt time.Time
}

// jobState is a job as the engine keeps it.
type jobState struct {
	def     *jobs.Job
	machine *job.Machine
	handler *handler
	row     store.Job
	// timers are the machine's armed timers, with their deadlines.
	timers map[fsmrt.TimerID]time.Time
	// exec is the run in progress, when one is.
	exec *execution
	// last is the job's last run, nil when none.
	last *store.Run
	view atomic.Pointer[View]
}

// request is what the API asks of Run.
type request struct {
	apply func() (any, error)
	done  chan reply
}

type reply struct {
	v   any
	err error
}

// ErrStopped is returned for requests made when the engine does not run
// (503).
var ErrStopped error = &monitors.Error{Status: 503, Code: "shutting_down", Message: "the server is shutting down: retry in a moment"}

// New loads every job's machine from the store (making a machine for a new
// job), reconfigures those whose settings changed, and closes the runs a
// killed server left running, telling their machines. On a shared store
// it loads none: Run does, when this instance takes the jobs' lease.
func New(ctx context.Context, c Config) (*Engine, error) {
	e := &Engine{
		store: c.Store, monitors: c.Monitors, now: c.Now, log: c.Log, webhook: c.AlertWebhook,
		behavior: &jobs.Behavior{},
		reqs:     make(chan *request, 64),
		results:  make(chan *result, 64),
		stopping: make(chan struct{}),
		stopped:  make(chan struct{}),
		byID:     map[string]*jobState{},
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	for _, def := range c.Jobs {
		if e.byID[def.ID] != nil {
			return nil, fmt.Errorf("job %q is given twice: give each job its own id", def.ID)
		}
		j := &jobState{def: def, timers: map[fsmrt.TimerID]time.Time{}}
		j.handler = &handler{e: e, job: j}
		e.list = append(e.list, j)
		e.byID[def.ID] = j
	}
	if sh, ok := c.Store.(store.Shared); ok {
		if c.Instance == "" || c.Monitors == nil {
			return nil, errors.New("jobs: a shared store needs the instance's name and the monitors engine that keeps its leases (Config.Instance, Config.Monitors)")
		}
		e.shared, e.instance = sh, c.Instance
		return e, nil
	}
	if err := e.load(ctx, ErrInterrupted); err != nil {
		return nil, err
	}
	e.active = true
	e.holding.Store(true)
	return e, nil
}

// load loads every job's machine from the store (making a machine for a
// new job), reconfigures those whose settings changed, and closes the
// runs left running as failed with the error why, telling their machines.
func (e *Engine) load(ctx context.Context, why string) error {
	rows, err := e.store.Jobs(ctx)
	if err != nil {
		return fmt.Errorf("read the jobs: %w", err)
	}
	saved := map[string]*store.Job{}
	for _, r := range rows {
		saved[r.ID] = r
	}
	now := e.now().UTC()
	for _, j := range e.list {
		if err := e.open(ctx, j, saved[j.def.ID], now); err != nil {
			return fmt.Errorf("job %s: %w", j.def.ID, err)
		}
	}
	return e.closeInterrupted(ctx, now, why)
}

// open makes j's machine: loaded from its row, or new; then brought to the
// job's settings and enabled state.
func (e *Engine) open(ctx context.Context, j *jobState, row *store.Job, now time.Time) error {
	s := j.def.Settings
	if row == nil {
		j.row = store.Job{ID: j.def.ID, Health: jobs.HealthHealthy}
		return e.apply(ctx, j, now, nil, func() error {
			m, err := job.New(job.Config{Behavior: e.behavior, Handler: j.handler, Initial: job.Scheduled{Settings: s, At: now, NextRun: e.behavior.Next(s, now)}})
			j.machine = m
			if err != nil {
				return err
			}
			if !j.def.Enabled {
				return m.HandleEvent(&job.Disable{})
			}
			return nil
		})
	}
	j.row = *row
	if err := e.loadMachine(j); err != nil {
		return err
	}
	runs, err := e.store.Runs(ctx, j.def.ID, 1)
	if err != nil {
		return err
	}
	if len(runs) > 0 {
		j.last = runs[0]
	}
	var events []job.Event
	if settingsOf(j.machine.State()) != s {
		events = append(events, &job.Reconfigure{Now: now, NewSettings: s})
	}
	switch enabled := j.machine.Kind() != job.StateDisabled; {
	case enabled && !j.def.Enabled:
		events = append(events, &job.Disable{})
	case !enabled && j.def.Enabled:
		events = append(events, &job.Enable{Now: now})
	}
	for _, ev := range events {
		if err := e.apply(ctx, j, now, nil, func() error { return j.machine.HandleEvent(ev) }); err != nil {
			return err
		}
	}
	j.publish()
	return nil
}

// loadMachine makes j's machine from its row and arms its timers at their
// saved deadlines.
func (e *Engine) loadMachine(j *jobState) error {
	m, err := job.Load(job.Config{Behavior: e.behavior, Handler: j.handler}, j.row.Machine)
	if err != nil {
		return fmt.Errorf("load its machine: %w", err)
	}
	j.machine = m
	clear(j.timers)
	for _, t := range m.Timers() {
		deadline := m.Deadline(t.Timer)
		if deadline.IsZero() {
			deadline = e.now().Add(t.Delay)
		}
		j.timers[t.Timer] = deadline
	}
	return nil
}

// stepWriteTimeout bounds the write of a job's step.
const stepWriteTimeout = 30 * time.Second

// closeInterrupted closes the runs a killed server (or, on a shared store,
// the instance that ran the jobs before) left running, as failed with the
// error why, and tells their machines.
func (e *Engine) closeInterrupted(ctx context.Context, now time.Time, why string) error {
	runs, err := e.store.RunningRuns(ctx)
	if err != nil {
		return err
	}
	for _, r := range runs {
		// The processes the run left on this machine go before the run is
		// closed, and so before its retry can start.
		n, err := killLeftovers(r.ID)
		if err != nil {
			return fmt.Errorf("close the interrupted run %s: %w", r.ID, err)
		}
		if n > 0 {
			e.log.Warn("killed what an interrupted run left running", "run", r.ID, "processes", n)
		}
		finish := &store.FinishRun{ID: r.ID, Status: jobs.RunFailed, FinishedAt: now, Duration: now.Sub(r.StartedAt), Error: why}
		j := e.byID[r.JobID]
		if j == nil || j.machine.Kind() != job.StateRunning {
			// A job no longer configured, or one whose machine was
			// saved after the run ended.
			b := &store.Batch{Fence: e.fence()}
			b.Add(*finish)
			if err := e.store.Apply(ctx, b); err != nil {
				return fmt.Errorf("close the interrupted run %s: %w", r.ID, err)
			}
			continue
		}
		j.exec = &execution{run: *r}
		if err := e.apply(ctx, j, now, finish, func() error { return j.machine.HandleEvent(&job.Interrupted{Now: now}) }); err != nil {
			return fmt.Errorf("close the interrupted run %s: %w", r.ID, err)
		}
		e.log.Warn("a run was interrupted", "job", j.def.ID, "run", r.ID, "error", why)
	}
	return nil
}

// ErrInterrupted is the error of a run a restart interrupted;
// ErrInterruptedInstance, on a shared store, that of a run the instance
// that ran the jobs left when it stopped (killed, or cut from the
// database past its lease).
const (
	ErrInterrupted         = "interrupted by a restart"
	ErrInterruptedInstance = "interrupted: the instance running it stopped"
)

// newID returns a run id: 128 random bits, in hex.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// step is one event applied to one job's machine: the handler's methods
// write into it.
type step struct {
	job   *jobState
	at    time.Time
	start *store.Run // the run StartRun starts
	stop  string     // the status of the run TimeOutRun or CancelRun stops
}

// apply applies one step to j at time at: do hands the machine its event;
// then what the step changed is written in one transaction (finish, when
// not nil, closes the run in progress), and only then are its effects
// performed (a run started or stopped). When do or the write fails, j is
// as before.
func (e *Engine) apply(ctx context.Context, j *jobState, at time.Time, finish *store.FinishRun, do func() error) error {
	if !e.leased() {
		return errMoved
	}
	st := &step{job: j, at: at}
	prev := 0
	if j.machine != nil {
		prev = failuresOf(j.machine.State())
	}
	e.step = st
	err := do()
	if err == nil && st.start != nil {
		// The run starts now (later than its time, after a restart): its
		// timeout counts from now.
		if now := e.now().UTC(); now.After(st.at) {
			st.at = now
		}
		now := st.at
		st.start.StartedAt = now
		err = j.machine.HandleEvent(&job.Started{Now: now})
	}
	e.step = nil
	if err != nil {
		e.revert(j)
		return err
	}
	b := &store.Batch{Fence: e.fence()}
	ended := j.exec
	if finish != nil {
		b.Add(*finish)
	} else if st.stop != "" && ended != nil {
		f := store.FinishRun{ID: ended.run.ID, Status: st.stop, FinishedAt: at, Duration: at.Sub(ended.run.StartedAt)}
		if st.stop == jobs.RunFailed {
			f.Error = fmt.Sprintf("timed out after %v", j.def.Settings.Timeout)
		}
		finish = &f
		b.Add(f)
	}
	if st.start != nil {
		b.Add(store.InsertRun{Run: *st.start})
	}
	saved, err := j.machine.Save()
	if err != nil {
		e.revert(j)
		return fmt.Errorf("save the machine of job %s: %w", j.def.ID, err)
	}
	health := healthOf(j.machine)
	b.Add(store.SaveJob{Job: store.Job{ID: j.def.ID, Machine: saved, Health: health, UpdatedAt: at}})
	alert := e.alert(j, prev, at)
	if alert != nil {
		b.Add(*alert)
	}
	// A step decided is written even while the engine stops (a run
	// recorded cancelled at shutdown, say): its write outlives ctx,
	// within a bound.
	wctx, cancel := e.leaseBound(context.WithoutCancel(ctx), stepWriteTimeout)
	err = e.store.Apply(wctx, b)
	cancel()
	if err != nil {
		e.revert(j)
		if errors.Is(err, store.ErrFenced) {
			e.log.Warn("a job's step was not written: another instance runs the jobs now", "job", j.def.ID)
			return errMoved
		}
		e.log.Error("write a job's step", "job", j.def.ID, "err", err)
		return &monitors.Error{Status: 503, Code: "storage_failed", Message: "the server could not store the change; nothing was changed: retry"}
	}
	j.row = store.Job{ID: j.def.ID, Machine: saved, Health: health, UpdatedAt: at}
	// The effects, now that the step is stored.
	if finish != nil && ended != nil {
		last := ended.run
		finishRun(&last, finish)
		j.last = &last
		if ended.cancel != nil {
			ended.cancel(errors.New(finish.Status))
		}
		j.exec = nil
	}
	if st.start != nil {
		r := *st.start
		j.last = &r
		e.launch(j, r)
	}
	if alert != nil && e.monitors != nil {
		e.monitors.NudgeAlerts()
	}
	j.publish()
	return nil
}

// revert puts j back as it was last stored.
func (e *Engine) revert(j *jobState) {
	if j.row.Machine == nil {
		return // a new job: New fails
	}
	if err := e.loadMachine(j); err != nil {
		e.log.Error("reload a job after a failed step", "job", j.def.ID, "err", err)
	}
}

// finishRun sets on r what f records.
func finishRun(r *store.Run, f *store.FinishRun) {
	d := f.Duration
	r.Status, r.FinishedAt, r.Duration = f.Status, f.FinishedAt, &d
	r.Output, r.Truncated, r.ExitCode, r.Error = f.Output, f.Truncated, f.ExitCode, f.Error
}

// alert returns the alert a step raises: when the job reaches
// UnhealthyAfter consecutive failures (once in a streak), and when it
// recovers from them.
func (e *Engine) alert(j *jobState, prev int, at time.Time) *store.InsertAlert {
	if e.webhook == "" {
		return nil
	}
	now := failuresOf(j.machine.State())
	var event string
	switch {
	case prev < jobs.UnhealthyAfter && now >= jobs.UnhealthyAfter:
		event = "job_failing"
	case prev >= jobs.UnhealthyAfter && now == 0:
		event = "job_recovered"
	default:
		return nil
	}
	payload, _ := json.Marshal(Alert{Event: event, Job: j.def.ID, Name: j.def.Name, ConsecutiveFailures: now, At: at.UTC()})
	return &store.InsertAlert{URL: e.webhook, Payload: payload, At: at}
}

// Alert is what the alert webhook receives.
type Alert struct {
	Event               string    `json:"event"` // job_failing or job_recovered
	Job                 string    `json:"job"`
	Name                string    `json:"name"`
	ConsecutiveFailures int       `json:"consecutive_failures"`
	At                  time.Time `json:"at"`
}

// handler performs one job's actions, within the step being applied.
type handler struct {
	e   *Engine
	job *jobState
}

func (h *handler) current() *step {
	st := h.e.step
	if st == nil || st.job != h.job {
		panic("jobs: an action outside a step")
	}
	return st
}

// StartRun notes the run to start once the step is stored; the step
// tells the machine it started (Started).
func (h *handler) StartRun(attempt int, trigger string) {
	st := h.current()
	st.start = &store.Run{ID: newID(), JobID: h.job.def.ID, Status: jobs.RunRunning, Attempt: attempt, TriggeredBy: trigger}
}

// TimeOutRun notes that the run in progress is stopped and failed.
func (h *handler) TimeOutRun() { h.current().stop = jobs.RunFailed }

// CancelRun notes that the run in progress is stopped and cancelled.
func (h *handler) CancelRun() { h.current().stop = jobs.RunCancelled }

// StartTimer arms the timer at the step's time plus delay.
func (h *handler) StartTimer(id fsmrt.TimerID, delay time.Duration) time.Time {
	deadline := h.current().at.Add(delay)
	h.job.timers[id] = deadline
	return deadline
}

// CancelTimer disarms the timer.
func (h *handler) CancelTimer(id fsmrt.TimerID) { delete(h.job.timers, id) }
