package jobengine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/fsmgen/fsmgen/gen/job"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/store"
)

// Several instances on a shared store (Postgres) run the jobs one at a
// time: the jobs belong to the lease of store.JobsShard, which the
// monitors engine claims, renews and loses like any shard's. Run watches
// that lease (monitorengine.Engine.Lease, nudged through LeaseChanged):
//
//   - when this instance gets it, Run takes the jobs over: it loads their
//     machines as a start does, closes the runs left running as failed
//     (ErrInterruptedInstance, the machine told, so the retry policy
//     applies), arms the saved deadlines (an overdue one fires at once)
//     and makes the jobs' monitors, which are in that shard too;
//   - when the lease may run out (the monitors engine's time, a fifth of
//     the lease before it does) or was lost, Run stands down: it kills
//     the process group of each run at once and forgets the machines,
//     writing nothing (the next holder closes those runs);
//   - every step's write is fenced by the lease, so an instance paused
//     past it writes nothing.
//
// The API's trigger and cancel go to the holder (Route); lists and runs
// are read from the store (ListStored, Runs).

// errLeaseLost is the cause of the runs stopped when this instance stops
// running the jobs.
var errLeaseLost = errors.New("this instance no longer holds the jobs' lease")

// errMoved is the answer to a request that reached an instance that does
// not run the jobs (any more).
var errMoved error = &monitorengine.Error{Status: 503, Code: "jobs_moved", Message: "this instance does not run the jobs (another instance does, or takes them over within the lease time); nothing was changed: retry"}

// fence returns the fence of the jobs' writes: the jobs shard's lease (nil
// on one instance).
func (e *Engine) fence() *store.Fence {
	if e.shared == nil {
		return nil
	}
	return &store.Fence{Instance: e.instance, Shards: []int{store.JobsShard}}
}

// leased reports whether this instance may write the jobs' steps now: on
// one instance always; on a shared store while the lease it took the jobs
// under may not have run out.
func (e *Engine) leased() bool {
	return e.shared == nil || time.Now().Before(e.lease.Until)
}

// leaseBound returns ctx bounded by timeout (none when 0) and, on a
// shared store, by the time the jobs' lease may run out: Run must not be
// left waiting on the database past it (the database does not answer,
// this instance was paused), for it must then stand down and kill the
// runs before another instance may take the jobs over.
func (e *Engine) leaseBound(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	cancelTimeout := context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancelTimeout = context.WithTimeout(ctx, timeout)
	}
	if e.shared == nil || e.lease.Until.IsZero() {
		return ctx, cancelTimeout
	}
	ctx, cancelLease := context.WithDeadline(ctx, e.lease.Until)
	return ctx, func() {
		cancelLease()
		cancelTimeout()
	}
}

// leaseWait returns how long Run may wait before it must look at the
// lease again: until the lease may run out while it runs the jobs, until
// a failed takeover is tried again otherwise.
func (e *Engine) leaseWait() time.Duration {
	switch {
	case e.active:
		return max(time.Until(e.lease.Until), 0)
	case !e.retakeAt.IsZero():
		return max(time.Until(e.retakeAt), 0)
	}
	return time.Hour
}

// checkLease takes the jobs over or stands down as the jobs shard's lease
// says (Run's).
func (e *Engine) checkLease(ctx context.Context) {
	l := e.monitors.Lease(store.JobsShard)
	now := time.Now()
	held := now.Before(l.Until)
	switch {
	case e.active && held && l.Claim == e.lease.Claim:
		e.lease = l // renewed
	case e.active:
		// Lost, or lost and claimed again: what ran in between is in the
		// store.
		e.standDown()
		if held {
			e.takeOver(ctx, l)
		}
	case held && !now.Before(e.retakeAt):
		e.takeOver(ctx, l)
	}
}

// takeOver starts running the jobs under lease l.
func (e *Engine) takeOver(ctx context.Context, l monitorengine.Lease) {
	e.lease = l
	lctx, cancel := e.leaseBound(ctx, 0)
	err := e.load(lctx, ErrInterruptedInstance)
	cancel()
	if err != nil {
		e.forget()
		e.retakeAt = time.Now().Add(time.Second)
		if ctx.Err() == nil { // else the engine is stopping: nothing failed
			level, msg := takeOverFailed(err, l.Until, time.Now())
			e.log.Log(ctx, level, msg, "err", err)
		}
		return
	}
	e.retakeAt = time.Time{}
	e.active = true
	e.holding.Store(true)
	e.syncMonitors(ctx)
	e.readyOnce.Do(func() { close(e.ready) })
	e.log.Info("runs the jobs", "jobs", len(e.list), "lease_until", l.Until.Format(time.RFC3339Nano))
}

// standDown stops running the jobs: the runs in progress are killed
// (their process groups at once), their results dropped, the machines
// forgotten; nothing is written.
func (e *Engine) standDown() {
	e.active = false
	e.holding.Store(false)
	killed := 0
	for _, j := range e.list {
		if j.exec != nil && j.exec.cancel != nil {
			j.exec.cancel(errLeaseLost)
			killed++
		}
	}
	e.log.Warn("the jobs' lease was lost or not renewed in time: the jobs are left to the instance that takes them over", "runs_killed", killed)
	ended := make(chan struct{})
	go func() {
		e.runs.Wait()
		close(ended)
	}()
	deadline := time.NewTimer(shutdownWait)
	defer deadline.Stop()
wait:
	for {
		select {
		case <-ended:
			break wait
		case <-e.results:
			// A run that ended before it was killed: the next holder
			// closes it.
		case <-deadline.C:
			e.log.Error("runs did not end when the jobs' lease was lost: a Go job ignores its context", "waited", shutdownWait)
			break wait
		}
	}
	e.forget()
}

// forget drops the jobs' machines, timers, queue and runs from memory.
func (e *Engine) forget() {
	for _, j := range e.list {
		j.machine, j.exec, j.waiting, j.behind, j.last, j.row, j.timers = nil, nil, nil, nil, nil, store.Job{}, nil
	}
	e.queue, e.inProgress, e.retry, e.retryAt = nil, 0, nil, time.Time{}
	e.timers.Reset()
}

// Route says where a trigger or a cancel is handled: here (""), or at the
// address of the instance that runs the jobs. With one instance,
// everything is handled here.
func (e *Engine) Route(ctx context.Context) (string, error) {
	if e.shared == nil || e.holding.Load() {
		return "", nil
	}
	owner, addr, err := e.shared.Holder(ctx, store.JobsShard)
	switch {
	case err != nil:
		return "", &monitorengine.Error{Status: 503, Code: "storage_failed", Message: fmt.Sprintf("the server could not read the database (%v): retry", err)}
	case owner == e.instance:
		return "", &monitorengine.Error{Status: 503, Code: "jobs_loading", Message: "this instance is taking the jobs over: retry in a moment"}
	case owner == "" || addr == "":
		return "", &monitorengine.Error{Status: 503, Code: "jobs_unowned", Message: "no instance runs the jobs at the moment (the lease of the one that did ran out; another takes them over within the lease time): retry"}
	}
	return addr, nil
}

// Active reports whether this instance runs the jobs, and whether the
// store is shared (false: it runs them, alone).
func (e *Engine) Active() (active, shared bool) {
	return e.holding.Load(), e.shared != nil
}

// ListStored returns every job, in the configured order: on a shared
// store that this instance does not run the jobs of, as the database has
// them (another instance runs them); otherwise as List does.
func (e *Engine) ListStored(ctx context.Context) ([]*View, error) {
	if e.shared == nil || e.holding.Load() {
		return e.List(), nil
	}
	rows, err := e.store.Jobs(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the jobs: %w", err)
	}
	lastRuns, err := e.store.LastRuns(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the jobs' last runs: %w", err)
	}
	saved := make(map[string]*store.Job, len(rows))
	for _, r := range rows {
		saved[r.ID] = r
	}
	last := make(map[string]*store.Run, len(lastRuns))
	for _, r := range lastRuns {
		last[r.JobID] = r
	}
	out := make([]*View, 0, len(e.list))
	for _, j := range e.list {
		s := &jobState{def: j.def}
		if row := saved[j.def.ID]; row != nil {
			m, err := job.Load(job.Config{Behavior: e.behavior, Handler: &handler{e: e, job: s}}, row.Machine)
			if err != nil {
				return nil, fmt.Errorf("job %s: load its machine: %w", j.def.ID, err)
			}
			s.machine, s.last = m, last[j.def.ID]
		}
		out = append(out, s.newView())
	}
	return out, nil
}

// takeOverFailed says how a takeover that failed with err, under a lease
// that lasts until, is logged at now: a warning when it is this
// instance's pace and not a fault (the lease ran out, or Postgres ended
// the session of an instance paused in a transaction, before the jobs
// were loaded; a write refused, which the engine logged), an error
// otherwise.
func takeOverFailed(err error, until, now time.Time) (slog.Level, string) {
	switch {
	case !now.Before(until) || errors.Is(err, store.ErrPaused):
		return slog.LevelWarn, "take the jobs over: the lease ran out before the jobs were loaded, for this instance was slow or paused (tried again in a second)"
	case monitorengine.AsError(err) != nil:
		return slog.LevelWarn, "take the jobs over (tried again in a second)"
	}
	return slog.LevelError, "take the jobs over (tried again in a second)"
}
