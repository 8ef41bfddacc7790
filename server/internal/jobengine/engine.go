// Package jobengine is the server's background-jobs engine: it keeps every
// job's machine (package gen/job) in memory, fires its timers, starts its
// runs (commands in their own process group, or Go functions), records
// each run in the store and checks each run in to a monitor of its own
// (job-<id>, in the cron-monitoring engine, in-process).
//
// One goroutine, Run, owns the machines, and works in rounds as the
// monitors engine does: it takes every request waiting (triggers,
// cancels), every run that ended and every timer due, applies each to its
// job's machine, starts the runs that are due as far as the limit on runs
// at once allows (the others wait, queued, in the order they became due),
// writes everything the round changed (the machines as Save saved them,
// the runs' rows, alerts) in one transaction, and only then performs the
// round's effects: it starts or stops processes, answers the requests.
// So a run is recorded running before its process starts, a trigger is
// acknowledged only once it is stored, a burst of triggers shares one
// commit, and a kill -9 at any moment leaves either no run or a run
// marked running (which the next start closes as failed, "interrupted by
// a restart", telling the machine, which retries it per its policy) or
// queued (which the next start queues again).
//
// Start-up reads every job's row and last run in one query each, decodes
// the machines on every CPU, and writes only what changed (new jobs, new
// settings) in one transaction; the jobs' monitors are made or changed in
// rounds of their own (monitorengine.Engine.Ensure). A restart with nothing
// changed writes nothing.
//
// Time enters as input: a request's step happens at the engine's clock, a
// timer's firing at its deadline, even when handled late.
//
// On a store several instances share (Postgres), the jobs belong to the
// lease of one shard, store.JobsShard, which the monitors engine keeps:
// only the instance that holds it runs the jobs (shared.go).
package jobengine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsmgen/fsmgen/gen/job"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/timerset"
	"github.com/fsmgen/fsmgen/server/jobs"
)

var _ job.Behavior = (*jobs.Behavior)(nil)

// Config is what an Engine is made with.
type Config struct {
	// Store keeps the jobs and their runs. It must not be nil.
	Store store.Store
	// Monitors is the cron-monitoring engine each run checks in to; no
	// check-ins when nil.
	Monitors *monitorengine.Engine
	// Jobs are the jobs to run.
	Jobs []*jobs.Job
	// MaxRunning bounds the runs in progress at once, over all jobs: a
	// run that becomes due while as many are in progress waits, queued,
	// and starts when one ends, in the order the runs became due. No
	// bound when 0.
	MaxRunning int
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
	store      store.Store
	monitors   *monitorengine.Engine
	now        func() time.Time
	log        *slog.Logger
	webhook    string
	behavior   *jobs.Behavior
	maxRunning int

	reqs      chan *request
	results   chan *result
	stopping  chan struct{} // closed when Run begins to stop
	stopped   chan struct{} // closed when Run has stopped
	ready     chan struct{} // closed when Run first runs the jobs
	readyOnce sync.Once
	running   atomic.Bool
	// runs are the goroutines of the runs in progress (Run waits for them
	// when it stops).
	runs sync.WaitGroup

	// list holds the jobs in their configured order; byID indexes them.
	// Neither changes after New. Each job's fields are Run's, but its
	// view, which readers load.
	list []*jobState
	byID map[string]*jobState

	// Run's: the armed timers of every job; the jobs whose run waits for
	// a slot, and the count that numbers them; how many runs are in
	// progress; the step being applied; when due timers and the results
	// of a round that failed to write are tried again, and those results.
	timers     *timerset.Set[*jobState]
	queue      runQueue
	queueSeq   uint64
	inProgress int
	cur        *step
	retryAt    time.Time
	retry      []*result

	// On a shared store: the store and this instance. active says
	// whether this instance runs the jobs (Run's; always on one
	// instance), holding the same for the readers; lease is the hold on
	// store.JobsShard the jobs run under; retakeAt is when a failed
	// takeover is tried again.
	shared   store.Shared
	instance string
	active   bool
	holding  atomic.Bool
	lease    monitorengine.Lease
	retakeAt time.Time
}

// jobState is a job as the engine keeps it.
type jobState struct {
	def     *jobs.Job
	index   int // in the configured order
	machine *job.Machine
	handler *handler
	// row is the job as last committed (Machine is nil before the job is
	// first stored).
	row store.Job
	// timers are the machine's armed timers (one at most).
	timers timerset.Armed[*jobState]
	// exec is the run in progress, when one is; waiting the run queued
	// for a slot (the machine is Starting), and queueSeq its place in the
	// queue; behind the manual run queued behind the run in progress
	// (overlap queue: the machine is Running, queued), which StartRun
	// starts when that run ends.
	exec     *execution
	waiting  *store.Run
	queueSeq uint64
	behind   *store.Run
	// last is the job's last run, nil when none.
	last *store.Run
	view atomic.Pointer[View]
}

// ErrStopped is returned for requests made when the engine does not run
// (503).
var ErrStopped error = &monitorengine.Error{Status: 503, Code: "shutting_down", Message: "the server is shutting down: retry in a moment"}

// New loads every job's machine from the store (making a machine for a new
// job), reconfigures those whose settings changed, and closes the runs a
// killed server left running, telling their machines; it writes all of it
// in one transaction, and nothing when nothing changed. On a shared store
// it loads none: Run does, when this instance takes the jobs' lease.
func New(ctx context.Context, c Config) (*Engine, error) {
	e := &Engine{
		store: c.Store, monitors: c.Monitors, now: c.Now, log: c.Log, webhook: c.AlertWebhook,
		maxRunning: max(c.MaxRunning, 0),
		behavior:   &jobs.Behavior{},
		reqs:       make(chan *request, 4096),
		results:    make(chan *result, 1024),
		stopping:   make(chan struct{}),
		stopped:    make(chan struct{}),
		ready:      make(chan struct{}),
		byID:       map[string]*jobState{},
		timers:     timerset.New(armedOf),
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
		j := &jobState{def: def, index: len(e.list)}
		j.handler = &handler{e: e, job: j}
		e.list = append(e.list, j)
		e.byID[def.ID] = j
		if e.monitors != nil {
			e.monitors.Reserve(monitorSlug(def.ID), def.ID)
		}
	}
	if sh, ok := c.Store.(store.Shared); ok {
		if c.Instance == "" || c.Monitors == nil {
			return nil, errors.New("jobs: a shared store needs the instance's name and the monitors engine that keeps its leases (Config.Instance, Config.Monitors)")
		}
		e.shared, e.instance = sh, c.Instance
		// The jobs as defined, until Run loads them (here load does).
		e.eachJob(func(j *jobState) { j.publish() })
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
// new job), reconfigures those whose settings changed, queues the runs
// left queued, and closes the runs left running as failed with the error
// why, telling their machines: all in one round, written in one
// transaction (none when nothing changed).
func (e *Engine) load(ctx context.Context, why string) error {
	rows, err := e.store.Jobs(ctx)
	if err != nil {
		return fmt.Errorf("read the jobs: %w", err)
	}
	lastRuns, err := e.store.LastRuns(ctx)
	if err != nil {
		return fmt.Errorf("read the jobs' last runs: %w", err)
	}
	running, err := e.store.RunningRuns(ctx)
	if err != nil {
		return fmt.Errorf("read the runs in progress: %w", err)
	}
	saved := make(map[string]*store.Job, len(rows))
	for _, r := range rows {
		saved[r.ID] = r
	}
	last := make(map[string]*store.Run, len(lastRuns))
	for _, r := range lastRuns {
		last[r.JobID] = r
	}
	if err := e.decode(saved); err != nil {
		return err
	}
	rs := e.newRound()
	if fresh := len(e.list) - len(saved); fresh > 0 {
		// Sized for the new jobs (all of them on a first start), which
		// the round changes.
		rs.before, rs.order = make(map[*jobState]snapshot, fresh), make([]*jobState, 0, fresh)
	}
	for _, j := range e.list {
		if err := e.open(rs, j, saved[j.def.ID], last[j.def.ID]); err != nil {
			e.rollback(rs)
			return fmt.Errorf("job %s: %w", j.def.ID, err)
		}
	}
	if err := e.closeInterrupted(rs, running, why); err != nil {
		e.rollback(rs)
		return err
	}
	if err := e.commit(ctx, rs); err != nil {
		return err
	}
	// The jobs the round changed, commit published.
	e.eachJob(func(j *jobState) {
		if _, changed := rs.before[j]; !changed {
			j.publish()
		}
	})
	return nil
}

// eachJob calls f for every job, on every CPU: f must touch nothing but
// its job.
func (e *Engine) eachJob(f func(j *jobState)) {
	inParallel(len(e.list), 256, func(from, to int) {
		for _, j := range e.list[from:to] {
			f(j)
		}
	})
}

// inParallel calls f for the ranges [from, to) of at most chunk that
// cover [0, n): on every CPU, and returns once all are done; on the
// caller's goroutine alone when n is at most chunk. Each call of f must
// touch nothing another touches.
func inParallel(n, chunk int, f func(from, to int)) {
	if n <= chunk {
		f(0, n)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for from := int(next.Add(int64(chunk)) - int64(chunk)); from < n; from = int(next.Add(int64(chunk)) - int64(chunk)) {
				f(from, min(from+chunk, n))
			}
		})
	}
	wg.Wait()
}

// decode makes the machines of the jobs that have a row, on every CPU
// (the bulk of a start-up's work), and arms their timers at their saved
// deadlines (made with the machines, armed in one pass: see armLoaded).
func (e *Engine) decode(saved map[string]*store.Job) error {
	errs := make([]error, len(e.list))
	now := e.now()
	e.eachJob(func(j *jobState) {
		row := saved[j.def.ID]
		if row == nil {
			return
		}
		m, err := job.Load(job.Config{Behavior: e.behavior, Handler: j.handler}, row.Machine)
		if err != nil {
			errs[j.index] = fmt.Errorf("job %s: load its machine: %w", j.def.ID, err)
			return
		}
		j.machine, j.row = m, *row
		j.timers = j.timers[:0]
		for _, t := range m.Timers() {
			j.timers = append(j.timers, &timerEntry{Owner: j, ID: t.Timer, Deadline: deadline(m, t, now)})
		}
	})
	if err := errors.Join(errs...); err != nil {
		for _, j := range e.list {
			j.timers = nil
		}
		return err
	}
	e.armLoaded()
	return nil
}

// open brings j, whose machine decode made from its row (none for a new
// job), to the job's settings and enabled state in round rs; last is its
// last run. A new job gets a new machine.
func (e *Engine) open(rs *roundState, j *jobState, row *store.Job, last *store.Run) error {
	s := j.def.Settings
	now := rs.now
	if row == nil {
		rs.touch(j)
		st := &step{job: j, at: now}
		e.cur = st
		m, err := job.New(job.Config{Behavior: e.behavior, Handler: j.handler, Initial: job.Scheduled{Settings: s, At: now, NextRun: e.behavior.Next(s, now)}})
		e.cur = nil
		if err != nil {
			return err
		}
		j.machine = m
		if !j.def.Enabled {
			return e.step(rs, j, now, &job.Disable{}, nil)
		}
		return nil
	}
	j.last = last
	if s, ok := j.machine.State().(job.Running); ok && s.Queued && last != nil && last.Status == jobs.RunQueued {
		// A manual run waited behind the run in progress: it does again
		// (the run in progress, interrupted, is closed next, and it
		// starts then).
		r := *last
		j.behind = &r
	}
	if j.machine.Kind() == job.StateStarting {
		// A run was queued for a slot when the server stopped: it waits
		// again, in the order it was queued.
		if err := e.requeue(rs, j, last); err != nil {
			return err
		}
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
		if err := e.step(rs, j, now, ev, nil); err != nil {
			return err
		}
	}
	return nil
}

// requeue queues again the run a job loaded in Starting was waiting with:
// its last run, queued. (Should the row be missing, the run is queued
// anew.) Runs queued again keep the order they were queued in: a round
// that loads several sorts them (sortQueue).
func (e *Engine) requeue(rs *roundState, j *jobState, last *store.Run) error {
	if last != nil && last.Status == jobs.RunQueued {
		r := *last
		j.waiting = &r
		rs.requeued = append(rs.requeued, j)
		return nil
	}
	s, ok := j.machine.State().(job.Starting)
	if !ok {
		return fmt.Errorf("its machine is %v, not starting", j.machine.Kind())
	}
	rs.touch(j)
	e.queueRun(rs, j, &store.Run{ID: newID(), JobID: j.def.ID, Attempt: s.Attempt, TriggeredBy: s.Trigger}, false, rs.now)
	return nil
}

// stepWriteTimeout bounds the write of a round.
const stepWriteTimeout = 30 * time.Second

// closeInterrupted closes the runs a killed server (or, on a shared store,
// the instance that ran the jobs before) left running, as failed with the
// error why, and tells their machines, in round rs.
func (e *Engine) closeInterrupted(rs *roundState, runs []*store.Run, why string) error {
	if len(runs) == 0 {
		return nil
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	// The processes the runs left on this machine go before the runs are
	// closed, and so before their retries can start.
	killed, err := killLeftovers(ids)
	if err != nil {
		return fmt.Errorf("close the interrupted runs: %w", err)
	}
	now := rs.now
	for _, r := range runs {
		if n := killed[r.ID]; n > 0 {
			e.log.Warn("killed what an interrupted run left running", "run", r.ID, "processes", n)
		}
		finish := &store.FinishRun{ID: r.ID, Status: jobs.RunFailed, FinishedAt: now, Duration: now.Sub(r.StartedAt), Error: why}
		j := e.byID[r.JobID]
		if j == nil || j.machine == nil || j.machine.Kind() != job.StateRunning || j.exec != nil {
			// A job no longer configured, or one whose machine was
			// saved after the run ended.
			rs.batch.Add(*finish)
			continue
		}
		rs.touch(j)
		j.exec = &execution{run: *r}
		e.inProgress++
		if err := e.step(rs, j, now, &job.Interrupted{Now: now}, finish); err != nil {
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
	st := h.e.cur
	if st == nil || st.job != h.job {
		panic("jobs: an action outside a step")
	}
	return st
}

// StartRun notes the run to queue (and start, when a slot is free): the
// run that waited behind the one in progress, when there is one.
func (h *handler) StartRun(attempt int, trigger string) {
	st := h.current()
	if b := h.job.behind; b != nil {
		r := *b
		r.Attempt, r.TriggeredBy = attempt, trigger
		st.start, st.stored = &r, true
		h.job.behind = nil
		return
	}
	st.start = &store.Run{ID: newID(), JobID: h.job.def.ID, Attempt: attempt, TriggeredBy: trigger}
}

// QueueRun notes the manual run to record waiting behind the run in
// progress.
func (h *handler) QueueRun() {
	st := h.current()
	st.behind = &store.Run{ID: newID(), JobID: h.job.def.ID, TriggeredBy: jobs.TriggerManual}
}

// TimeOutRun notes that the run in progress is stopped and failed.
func (h *handler) TimeOutRun() { h.current().stop = jobs.RunFailed }

// CancelRun notes that the run in progress (or queued) is stopped and
// cancelled.
func (h *handler) CancelRun() { h.current().stop = jobs.RunCancelled }

// StartTimer arms the timer at the step's time plus delay.
func (h *handler) StartTimer(id fsmrt.TimerID, delay time.Duration) time.Time {
	deadline := h.current().at.Add(delay)
	h.e.arm(h.job, id, deadline)
	return deadline
}

// CancelTimer disarms the timer.
func (h *handler) CancelTimer(id fsmrt.TimerID) { h.e.disarm(h.job, id) }

// sortQueue queues the runs a load found queued, in the order they were
// queued (then in the jobs' order).
func (e *Engine) sortQueue(list []*jobState) {
	list = slices.DeleteFunc(list, func(j *jobState) bool { return j.waiting == nil })
	slices.SortStableFunc(list, func(a, b *jobState) int {
		if c := a.waiting.StartedAt.Compare(b.waiting.StartedAt); c != 0 {
			return c
		}
		return a.index - b.index
	})
	for _, j := range list {
		e.enqueue(j)
	}
}
