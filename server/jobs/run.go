package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fsmgen/fsmgen/gen/job"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
	"github.com/fsmgen/fsmgen/server/monitors"
)

// Run fires the jobs' timers, starts and records their runs and applies
// the API's requests until ctx is done. Then it cancels the runs in
// progress (recorded cancelled, their processes killed), waits for them to
// end, and returns nil. Requests still waiting fail with ErrStopped. On a
// shared store it does so while this instance holds the jobs' lease, and
// waits for it otherwise (shared.go).
func (e *Engine) Run(ctx context.Context) error {
	e.running.Store(true)
	defer e.running.Store(false)
	var leaseChanged <-chan struct{}
	if e.shared == nil {
		e.syncMonitors(ctx)
	} else {
		leaseChanged = e.monitors.LeaseChanged()
		e.checkLease(ctx)
	}
	clock := time.NewTimer(time.Hour)
	defer clock.Stop()
	for {
		wait := time.Hour
		if _, deadline := e.nextTimer(); !deadline.IsZero() {
			wait = max(deadline.Sub(e.now()), 0)
		}
		if e.shared != nil {
			wait = min(wait, e.leaseWait())
		}
		clock.Reset(wait)
		select {
		case <-ctx.Done():
			e.shutdown()
			return nil
		case <-leaseChanged:
			e.checkLease(ctx)
		case r := <-e.reqs:
			v, err := r.apply()
			r.done <- reply{v, err}
		case res := <-e.results:
			e.finished(ctx, res)
		case <-clock.C:
			if e.shared != nil {
				e.checkLease(ctx)
			}
			e.fireDue(ctx, e.now())
		}
	}
}

// nextTimer returns the job whose timer is due first, and its deadline
// (zero when no timer is armed).
func (e *Engine) nextTimer() (*jobState, time.Time) {
	var first *jobState
	var at time.Time
	for _, j := range e.list {
		for _, d := range j.timers {
			if first == nil || d.Before(at) {
				first, at = j, d
			}
		}
	}
	return first, at
}

// fireDue fires, in deadline order, every timer due at now.
func (e *Engine) fireDue(ctx context.Context, now time.Time) {
	for {
		j, deadline := e.nextTimer()
		if j == nil || deadline.After(now) {
			return
		}
		var id fsmrt.TimerID
		for t, d := range j.timers {
			if d.Equal(deadline) {
				id = t
			}
		}
		delete(j.timers, id)
		err := e.apply(ctx, j, deadline, nil, func() error { return j.machine.HandleEvent(&job.TimerFired{Timer: id}) })
		if err != nil {
			e.log.Error("a job's timer failed", "job", j.def.ID, "err", err)
			if monitors.AsError(err) != nil {
				// The write failed: the timer is armed again (revert);
				// try again in a moment rather than at once.
				j.timers[id] = now.Add(time.Second)
			}
			return
		}
	}
}

// finished records a run's end, unless the run was already ended (timed
// out or cancelled): then its result is dropped.
func (e *Engine) finished(ctx context.Context, res *result) {
	j := e.byID[res.exec.run.JobID]
	if j == nil || j.exec != res.exec {
		return
	}
	now := e.now().UTC()
	f := res.finish(now)
	var ev job.Event = &job.Succeeded{Now: now}
	if f.Status != "succeeded" {
		ev = &job.Failed{Now: now}
	}
	if err := e.apply(ctx, j, now, f, func() error { return j.machine.HandleEvent(ev) }); err != nil {
		e.log.Error("record a run's end", "job", j.def.ID, "run", res.exec.run.ID, "err", err)
	}
}

// shutdownWait bounds how long shutdown waits for the runs to end.
const shutdownWait = 15 * time.Second

// shutdown cancels the runs in progress and waits for them to end.
func (e *Engine) shutdown() {
	close(e.stopping)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, j := range e.list {
		if j.exec == nil {
			continue
		}
		now := e.now().UTC()
		if err := e.apply(ctx, j, now, nil, func() error { return j.machine.HandleEvent(&job.Cancel{Now: now}) }); err != nil {
			e.log.Error("cancel a run at shutdown", "job", j.def.ID, "err", err)
			j.exec.cancel(errors.New("shutdown"))
		}
	}
	// A command's group is killed within killGrace; a Go job that ignores
	// its context is left behind, said so.
	ended := make(chan struct{})
	go func() {
		e.runs.Wait()
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(shutdownWait):
		e.log.Error("runs did not end at shutdown: a Go job ignores its context", "waited", shutdownWait)
	}
	close(e.stopped)
	for {
		select {
		case r := <-e.reqs:
			r.done <- reply{err: ErrStopped}
		default:
			return
		}
	}
}

// do hands apply to Run and waits for its answer.
func (e *Engine) do(ctx context.Context, apply func() (any, error)) (any, error) {
	r := &request{apply: apply, done: make(chan reply, 1)}
	select {
	case e.reqs <- r:
	case <-e.stopping:
		return nil, ErrStopped
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case res := <-r.done:
		return res.v, res.err
	case <-e.stopped:
		return nil, ErrStopped
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Trigger starts a manual run of job id now, and returns it.
func (e *Engine) Trigger(ctx context.Context, id string) (*RunView, error) {
	v, err := e.do(ctx, func() (any, error) {
		j := e.byID[id]
		switch {
		case j == nil:
			return nil, notFound(id)
		case !e.active:
			return nil, errMoved
		}
		switch j.machine.Kind() {
		case job.StateStarting, job.StateRunning:
			return nil, &monitors.Error{Status: 409, Code: "job_running", Message: fmt.Sprintf("job %q has a run in progress (%s): wait for it, or cancel it first", id, j.exec.run.ID)}
		case job.StateDisabled:
			return nil, &monitors.Error{Status: 409, Code: "job_disabled", Message: fmt.Sprintf("job %q is disabled: enable it in the jobs file first", id)}
		}
		now := e.now().UTC()
		if err := e.apply(ctx, j, now, nil, func() error { return j.machine.HandleEvent(&job.Trigger{Now: now}) }); err != nil {
			return nil, err
		}
		return newRunView(&j.exec.run), nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*RunView), nil
}

// Cancel cancels the run in progress of that id: its process group is
// killed and it is recorded cancelled.
func (e *Engine) Cancel(ctx context.Context, runID string) (*RunView, error) {
	v, err := e.do(ctx, func() (any, error) {
		if !e.active {
			return nil, errMoved
		}
		for _, j := range e.list {
			if j.exec == nil || j.exec.run.ID != runID {
				continue
			}
			now := e.now().UTC()
			if err := e.apply(ctx, j, now, nil, func() error { return j.machine.HandleEvent(&job.Cancel{Now: now}) }); err != nil {
				return nil, err
			}
			return newRunView(j.last), nil
		}
		rctx, cancel := e.leaseBound(ctx, 0)
		defer cancel()
		r, err := e.store.Run(rctx, runID)
		switch {
		case err != nil:
			return nil, err
		case r == nil:
			return nil, &monitors.Error{Status: 404, Code: "run_not_found", Message: fmt.Sprintf("no run %q: GET /api/jobs/{id}/runs lists a job's runs", runID)}
		}
		return nil, &monitors.Error{Status: 409, Code: "run_finished", Message: fmt.Sprintf("run %q is already finished (%s)", runID, r.Status)}
	})
	if err != nil {
		return nil, err
	}
	return v.(*RunView), nil
}

func notFound(id string) error {
	return &monitors.Error{Status: 404, Code: "job_not_found", Message: fmt.Sprintf("no job %q: GET /api/jobs lists them", id)}
}

// Running reports whether Run is running.
func (e *Engine) Running() bool { return e.running.Load() }
