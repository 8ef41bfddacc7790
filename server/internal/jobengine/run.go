package jobengine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fsmgen/fsmgen/gen/job"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/jobs"
)

// request is what the API asks of Run: apply runs in a round and returns
// the answer, computed once the round is stored.
type request struct {
	apply func(rs *roundState) (answer func() any, err error)
	done  chan reply
}

type reply struct {
	v   any
	err error
}

// Run fires the jobs' timers, starts and records their runs and applies
// the API's requests, in rounds, until ctx is done. Then it cancels the
// runs in progress (recorded cancelled, their processes killed; the
// queued ones stay queued for the next start), waits for them to end, and
// returns nil. Requests still waiting fail with ErrStopped. On a shared
// store it does so while this instance holds the jobs' lease, and waits
// for it otherwise (shared.go).
func (e *Engine) Run(ctx context.Context) error {
	e.running.Store(true)
	defer e.running.Store(false)
	var leaseChanged <-chan struct{}
	if e.shared == nil {
		e.syncMonitors(ctx)
		e.readyOnce.Do(func() { close(e.ready) })
	} else {
		leaseChanged = e.monitors.LeaseChanged()
		e.checkLease(ctx)
	}
	clock := time.NewTimer(time.Hour)
	defer clock.Stop()
	for {
		clock.Reset(e.wait())
		var reqs []*request
		var results []*result
		select {
		case <-ctx.Done():
			e.shutdown()
			return nil
		case <-leaseChanged:
			e.checkLease(ctx)
			continue
		case r := <-e.reqs:
			reqs = append(reqs, r)
		case res := <-e.results:
			results = append(results, res)
		case <-clock.C:
			if e.shared != nil {
				e.checkLease(ctx)
			}
		}
		// Everything that arrived meanwhile, while the last round was
		// written, too, joins this round: one commit for a burst.
	more:
		for len(reqs) < maxRound {
			select {
			case r := <-e.reqs:
				reqs = append(reqs, r)
			case res := <-e.results:
				results = append(results, res)
			default:
				break more
			}
		}
		if len(e.retry) > 0 && !e.now().Before(e.retryAt) {
			results = append(e.retry, results...)
			e.retry = nil
		}
		e.round(ctx, reqs, results)
	}
}

// wait returns how long Run may wait for a request or a run's end before
// a round is due: the next timer (after a failed write, a moment later),
// at once when a queued run may start, and on a shared store the time to
// look at the lease again.
func (e *Engine) wait() time.Duration {
	wait := time.Hour
	now := e.now()
	if next := e.timers.Next(); next != nil {
		wait = max(next.Deadline.Sub(now), e.retryAt.Sub(now), 0)
	}
	if len(e.retry) > 0 {
		wait = min(wait, max(e.retryAt.Sub(now), 0))
	}
	if e.active && e.slotFree() && e.queue.peek() != nil {
		wait = max(e.retryAt.Sub(now), 0)
	}
	if e.shared != nil {
		wait = min(wait, e.leaseWait())
	}
	return wait
}

// shutdownWait bounds how long shutdown waits for the runs to end.
const shutdownWait = 15 * time.Second

// shutdown cancels the runs in progress, in one round, and waits for them
// to end. The queued runs stay queued: the next start runs them.
func (e *Engine) shutdown() {
	close(e.stopping)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if e.active && e.leased() {
		rs := e.newRound()
		var execs []*execution
		for _, j := range e.list {
			if j.exec == nil {
				continue
			}
			execs = append(execs, j.exec)
			if err := e.step(rs, j, rs.now, &job.Cancel{Now: rs.now}, nil); err != nil {
				e.log.Error("cancel a run at shutdown", "job", j.def.ID, "err", err)
			}
		}
		if err := e.commit(ctx, rs); err != nil {
			e.log.Error("record the runs cancelled at shutdown", "err", err)
			for _, x := range execs {
				if x.cancel != nil {
					x.cancel(errors.New("shutdown"))
				}
			}
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
func (e *Engine) do(ctx context.Context, apply func(rs *roundState) (func() any, error)) (any, error) {
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

// Trigger makes a manual run of job id due now, and returns it: running,
// or queued while the limit on runs at once is reached.
func (e *Engine) Trigger(ctx context.Context, id string) (*RunView, error) {
	v, err := e.do(ctx, e.triggering(id))
	if err != nil {
		return nil, err
	}
	return v.(*RunView), nil
}

// triggering is the request of a manual run of job id.
func (e *Engine) triggering(id string) func(rs *roundState) (func() any, error) {
	return func(rs *roundState) (func() any, error) {
		j := e.byID[id]
		if j == nil {
			return nil, notFound(id)
		}
		overlap := settingsOf(j.machine.State()).Overlap
		switch j.machine.Kind() {
		case job.StateStarting:
			return nil, &monitorengine.Error{Status: 409, Code: "job_running", Message: fmt.Sprintf("job %q has a run queued (%s): wait for it, or cancel it first", id, j.waiting.ID)}
		case job.StateRunning:
			switch {
			case j.behind != nil:
				return nil, &monitorengine.Error{Status: 409, Code: "job_running", Message: fmt.Sprintf("job %q has a run in progress (%s) and one queued behind it (%s): wait for them, or cancel one first", id, j.exec.run.ID, j.behind.ID)}
			case overlap != jobs.OverlapQueue:
				return nil, &monitorengine.Error{Status: 409, Code: "job_running", Message: fmt.Sprintf("job %q has a run in progress (%s): wait for it, or cancel it first (with overlap: queue in the jobs file, a run triggered now waits behind it)", id, j.exec.run.ID)}
			}
		case job.StateDisabled:
			return nil, &monitorengine.Error{Status: 409, Code: "job_disabled", Message: fmt.Sprintf("job %q is disabled: enable it in the jobs file first", id)}
		}
		if err := e.step(rs, j, rs.now, &job.Trigger{Now: rs.now}, nil); err != nil {
			return nil, err
		}
		run := j.waiting
		if run == nil {
			run = j.behind // overlap queue: behind the run in progress
		}
		return func() any { return newRunView(j.run(run.ID)) }, nil
	}
}

// run returns j's run of that id, as the engine last has it: in progress,
// queued, or its last.
func (j *jobState) run(id string) *store.Run {
	switch {
	case j.exec != nil && j.exec.run.ID == id:
		return &j.exec.run
	case j.waiting != nil && j.waiting.ID == id:
		return j.waiting
	case j.behind != nil && j.behind.ID == id:
		return j.behind
	}
	return j.last
}

// Cancel cancels the run in progress (or queued, or waiting behind the run
// in progress) of that id: its process group is killed and it is recorded
// cancelled.
func (e *Engine) Cancel(ctx context.Context, runID string) (*RunView, error) {
	v, err := e.do(ctx, e.cancelling(ctx, runID))
	if err != nil {
		return nil, err
	}
	return v.(*RunView), nil
}

// cancelling is the request that cancels run runID.
func (e *Engine) cancelling(ctx context.Context, runID string) func(rs *roundState) (func() any, error) {
	return func(rs *roundState) (func() any, error) {
		for _, j := range e.list {
			var ev job.Event
			switch {
			case j.exec != nil && j.exec.run.ID == runID, j.waiting != nil && j.waiting.ID == runID:
				ev = &job.Cancel{Now: rs.now}
			case j.behind != nil && j.behind.ID == runID:
				ev = &job.CancelQueued{}
			default:
				continue
			}
			if err := e.step(rs, j, rs.now, ev, nil); err != nil {
				return nil, err
			}
			if r := rs.finished[runID]; r != nil {
				// Another run of the job may be its last now (the one
				// that waited behind this one).
				return func() any { return newRunView(r) }, nil
			}
			return func() any { return newRunView(j.run(runID)) }, nil
		}
		rctx, cancel := e.leaseBound(ctx, 0)
		defer cancel()
		r, err := e.store.Run(rctx, runID)
		switch {
		case err != nil:
			return nil, err
		case r == nil:
			return nil, &monitorengine.Error{Status: 404, Code: "run_not_found", Message: fmt.Sprintf("no run %q: GET /api/jobs/{id}/runs lists a job's runs", runID)}
		}
		return nil, &monitorengine.Error{Status: 409, Code: "run_finished", Message: fmt.Sprintf("run %q is already finished (%s)", runID, r.Status)}
	}
}

func notFound(id string) error {
	return &monitorengine.Error{Status: 404, Code: "job_not_found", Message: fmt.Sprintf("no job %q: GET /api/jobs lists them", id)}
}

// Running reports whether Run is running.
func (e *Engine) Running() bool { return e.running.Load() }

// Ready is closed once Run runs the jobs: on one instance when it has
// made their monitors, on a shared store when it first took them over.
func (e *Engine) Ready() <-chan struct{} { return e.ready }
