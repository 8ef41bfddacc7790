package jobengine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fsmgen/fsmgen/gen/job"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/jobs"
)

// roundState is what a round has done so far: its writes, what to undo
// when they fail, and its effects, performed once they are stored.
type roundState struct {
	now   time.Time
	batch store.Batch
	// before holds, for each job the round changed, what it was when the
	// round began; order lists those jobs in the order the round first
	// changed them.
	before map[*jobState]snapshot
	order  []*jobState
	// inProgress is the engine's count of runs in progress when the round
	// began.
	inProgress int
	// inserted indexes, by run id, the InsertRun of a run the round
	// queued: a run that starts in the same round is inserted running.
	inserted map[string]int
	// finished are the runs the round ended, by id (a cancel answers with
	// its run when another run of the job became its last).
	finished map[string]*store.Run
	// requeued are the jobs a load found with a run queued, to queue
	// again, in order, once the round is stored.
	requeued []*jobState
	// launch are the runs to start, stop those to stop (with why), once
	// the round is stored.
	launch []*execution
	stop   []stopped
	alerts bool
}

// stopped is a run in progress a round stops, and its new status.
type stopped struct {
	exec   *execution
	status string
}

// snapshot is a job as a round found it.
type snapshot struct {
	row      store.Job
	exec     *execution
	waiting  *store.Run
	queueSeq uint64
	last     *store.Run
	behind   *store.Run
}

// step is one event applied to one job's machine: the handler's methods
// write into it.
type step struct {
	job   *jobState
	at    time.Time
	start *store.Run // the run StartRun makes due
	// stored reports that start is stored already (the run that waited
	// behind the one in progress, recorded queued).
	stored bool
	stop   string     // the status of the run TimeOutRun or CancelRun stops
	behind *store.Run // the run QueueRun has wait behind the run in progress
}

// maxRound bounds the timers, and the requests, a round takes.
const maxRound = 512

func (e *Engine) newRound() *roundState {
	return &roundState{
		now:        e.now().UTC(),
		before:     map[*jobState]snapshot{},
		inProgress: e.inProgress,
		inserted:   map[string]int{},
		finished:   map[string]*store.Run{},
	}
}

// touch records that the round changes j, keeping what it was.
func (rs *roundState) touch(j *jobState) {
	if _, ok := rs.before[j]; !ok {
		rs.before[j] = snapshot{row: j.row, exec: j.exec, waiting: j.waiting, queueSeq: j.queueSeq, last: j.last, behind: j.behind}
		rs.order = append(rs.order, j)
	}
}

// step applies event ev to j's machine at time at, in round rs, and notes
// what it does: finish, when not nil, closes the run in progress (its
// result, or its interruption). A refused event changes nothing and is
// returned.
func (e *Engine) step(rs *roundState, j *jobState, at time.Time, ev job.Event, finish *store.FinishRun) error {
	rs.touch(j)
	prev := failuresOf(j.machine.State())
	st := &step{job: j, at: at}
	e.cur = st
	err := j.machine.HandleEvent(ev)
	e.cur = nil
	if err != nil {
		return err
	}
	switch {
	case finish != nil:
		e.ended(rs, j, *finish)
	case st.stop != "" && j.waiting != nil:
		// A queued run, cancelled: it never ran.
		e.ended(rs, j, store.FinishRun{ID: j.waiting.ID, Status: st.stop, FinishedAt: at})
	case st.stop != "" && j.exec != nil:
		x := j.exec
		f := store.FinishRun{ID: x.run.ID, Status: st.stop, FinishedAt: at, Duration: at.Sub(x.run.StartedAt)}
		if st.stop == jobs.RunFailed {
			f.Error = fmt.Sprintf("timed out after %v", settingsOf(j.machine.State()).Timeout)
		}
		e.ended(rs, j, f)
		rs.stop = append(rs.stop, stopped{x, st.stop})
	}
	if st.start != nil {
		e.queueRun(rs, j, st.start, st.stored, at)
	}
	switch {
	case st.behind != nil:
		// A manual run waits behind the run in progress: recorded queued
		// (not in the queue for a slot: StartRun puts it there when the
		// run in progress ends).
		r := st.behind
		r.Status, r.StartedAt = jobs.RunQueued, at
		rs.inserted[r.ID] = len(rs.batch.Ops)
		rs.batch.Add(store.InsertRun{Run: *r})
		j.behind = r
		last := *r
		j.last = &last
	case j.behind != nil && !queuedBehind(j.machine):
		// The run that waited behind was cancelled, or the job disabled:
		// it never ran.
		f := store.FinishRun{ID: j.behind.ID, Status: jobs.RunCancelled, FinishedAt: at}
		rs.batch.Add(f)
		r := *j.behind
		finishRun(&r, &f)
		j.behind, j.last = nil, &r
		rs.finished[r.ID] = &r
	}
	if alert := e.alert(j, prev, at); alert != nil {
		rs.batch.Add(*alert)
		rs.alerts = true
	}
	return nil
}

// ended records the end f of j's run in progress, or of its queued run.
func (e *Engine) ended(rs *roundState, j *jobState, f store.FinishRun) {
	rs.batch.Add(f)
	var r store.Run
	switch {
	case j.waiting != nil && j.waiting.ID == f.ID:
		r, j.waiting = *j.waiting, nil
	case j.exec != nil && j.exec.run.ID == f.ID:
		r, j.exec = j.exec.run, nil
		e.inProgress--
	default:
		return
	}
	finishRun(&r, &f)
	j.last = &r
	rs.finished[r.ID] = &r
}

// queueRun records run r of j queued at at, to start when a slot frees;
// stored says that r is stored queued already (a run that waited behind
// the one in progress, which keeps its time).
func (e *Engine) queueRun(rs *roundState, j *jobState, r *store.Run, stored bool, at time.Time) {
	if !stored {
		r.Status, r.StartedAt = jobs.RunQueued, at
		rs.inserted[r.ID] = len(rs.batch.Ops)
		rs.batch.Add(store.InsertRun{Run: *r})
	}
	j.waiting = r
	last := *r
	j.last = &last
	e.enqueue(j)
}

// slotFree reports whether another run may start.
func (e *Engine) slotFree() bool { return e.maxRunning == 0 || e.inProgress < e.maxRunning }

// startQueued starts the queued runs, first queued first, while slots are
// free.
func (e *Engine) startQueued(rs *roundState) {
	for e.slotFree() {
		j := e.queue.peek()
		if j == nil {
			return
		}
		if err := e.start(rs, j); err != nil {
			e.log.Error("start a queued run", "job", j.def.ID, "err", err)
			j.waiting = nil // dropped from the queue; the job stays starting
		}
	}
}

// start starts j's queued run at the round's time: its timeout counts from
// now (a run started late, after a restart or a wait for a slot, has its
// whole timeout).
func (e *Engine) start(rs *roundState, j *jobState) error {
	r := *j.waiting
	if err := e.step(rs, j, rs.now, &job.Started{Now: rs.now}, nil); err != nil {
		return err
	}
	r.Status, r.StartedAt = jobs.RunRunning, rs.now
	if i, ok := rs.inserted[r.ID]; ok {
		rs.batch.Ops[i] = store.InsertRun{Run: r}
	} else {
		rs.batch.Add(store.StartQueuedRun{ID: r.ID, StartedAt: r.StartedAt})
	}
	x := &execution{run: r}
	j.waiting, j.exec = nil, x
	last := r
	j.last = &last
	e.inProgress++
	rs.launch = append(rs.launch, x)
	return nil
}

// commit writes what the round changed in one transaction: each changed
// job's machine (unless it saves as it was), its runs, its alerts. Then it
// makes the round's state what readers see and performs its effects; when
// the write fails, it puts every job the round changed back as it was and
// returns the error (a 503 for the requests).
func (e *Engine) commit(ctx context.Context, rs *roundState) error {
	rows, err := e.save(rs)
	if err != nil {
		e.rollback(rs)
		return err
	}
	rs.batch.Ops = slices.Grow(rs.batch.Ops, len(rs.order))
	for i, j := range rs.order {
		if bytes.Equal(rows[i].Machine, j.row.Machine) && rows[i].Health == j.row.Health {
			rows[i] = j.row // as stored: nothing to write
			continue
		}
		rs.batch.Add(store.SaveJob{Job: rows[i]})
	}
	if rs.batch.Len() > 0 {
		rs.batch.Fence = e.fence()
		// A round decided is written even while the engine stops (runs
		// recorded cancelled at shutdown, say): its write outlives ctx,
		// within a bound.
		wctx, cancel := e.leaseBound(context.WithoutCancel(ctx), stepWriteTimeout)
		err = e.store.Apply(wctx, &rs.batch)
		cancel()
	}
	if err != nil {
		e.rollback(rs)
		e.retryAt = e.now().Add(retryWrite)
		if errors.Is(err, store.ErrFenced) {
			e.log.Warn("a round of the jobs was not written: another instance runs the jobs now", "jobs", len(rs.order))
			return errMoved
		}
		if errors.Is(err, store.ErrPaused) {
			e.log.Warn("a round of the jobs was not written: this instance paused in the middle of it", "jobs", len(rs.order), "err", err)
			return &monitorengine.Error{Status: 503, Code: "storage_failed", Message: "the server could not store the change; nothing was changed: retry"}
		}
		e.log.Error("write a round of the jobs", "jobs", len(rs.order), "err", err)
		return &monitorengine.Error{Status: 503, Code: "storage_failed", Message: "the server could not store the change; nothing was changed: retry"}
	}
	for i, j := range rs.order {
		j.row = rows[i]
	}
	e.sortQueue(rs.requeued)
	// The effects, now that the round is stored.
	for _, s := range rs.stop {
		if s.exec.cancel != nil {
			s.exec.cancel(errors.New(s.status))
		}
	}
	for _, x := range rs.launch {
		if j := e.byID[x.run.JobID]; j.exec == x {
			e.launch(j, x)
		}
	}
	inParallel(len(rs.order), saveChunk, func(from, to int) {
		for _, j := range rs.order[from:to] {
			j.publish()
		}
	})
	if rs.alerts && e.monitors != nil {
		e.monitors.NudgeAlerts()
	}
	return nil
}

// saveChunk is how many machines one goroutine saves, or publishes,
// when a round changed many (a first start): the rest go to other CPUs.
const saveChunk = 512

// save returns the rows of the jobs the round changed, their machines as
// Save saves them: on every CPU when there are many.
func (e *Engine) save(rs *roundState) ([]store.Job, error) {
	rows := make([]store.Job, len(rs.order))
	errs := make([]error, len(rs.order))
	inParallel(len(rows), saveChunk, func(from, to int) {
		for i := from; i < to; i++ {
			j := rs.order[i]
			saved, err := j.machine.Save()
			if err != nil {
				errs[i] = fmt.Errorf("save the machine of job %s: %w", j.def.ID, err)
				continue
			}
			rows[i] = store.Job{ID: j.def.ID, Machine: saved, Health: healthOf(j.machine), UpdatedAt: rs.now}
		}
	})
	return rows, errors.Join(errs...)
}

// retryWrite is how long due timers, and the results of a round that
// failed to write, wait before they are tried again.
const retryWrite = time.Second

// rollback puts every job the round changed back as it was when the round
// began.
func (e *Engine) rollback(rs *roundState) {
	for _, j := range rs.order {
		b := rs.before[j]
		j.row, j.exec, j.waiting, j.queueSeq, j.last, j.behind = b.row, b.exec, b.waiting, b.queueSeq, b.last, b.behind
		if j.row.Machine == nil {
			// New in this round (a load, which fails).
			e.disarmAll(j)
			j.machine = nil
			continue
		}
		if err := e.reload(j); err != nil {
			// The row was loaded before; it still loads.
			e.log.Error("reload a job after a failed write", "job", j.def.ID, "err", err)
		}
		if j.waiting != nil {
			e.requeueAt(j)
		}
	}
	e.inProgress = rs.inProgress
}

// reload makes j's machine from its committed row and arms its timers at
// their saved deadlines.
func (e *Engine) reload(j *jobState) error {
	m, err := job.Load(job.Config{Behavior: e.behavior, Handler: j.handler}, j.row.Machine)
	if err != nil {
		return fmt.Errorf("load its machine: %w", err)
	}
	j.machine = m
	e.armAll(j)
	return nil
}

// round applies the timers due, the runs that ended and the requests, in
// that order, starts the queued runs slots allow, writes it all in one
// transaction, then performs the effects and answers; when the write
// fails, the jobs are as before, the requests get the error, and the
// results are tried again after retryWrite.
//
// A round fires at most maxRound timers; when more are due (a backlog,
// after a restart), the next round fires them.
func (e *Engine) round(ctx context.Context, reqs []*request, results []*result) {
	if !e.active || !e.leased() {
		for _, r := range reqs {
			r.done <- reply{err: errMoved}
		}
		return
	}
	rs := e.newRound()
	if !rs.now.Before(e.retryAt) {
		for range maxRound {
			t := e.due(rs.now)
			if t == nil {
				break
			}
			j := t.Owner
			if err := e.step(rs, j, t.Deadline, &job.TimerFired{Timer: t.ID, Deadline: t.Deadline, Now: rs.now}, nil); err != nil {
				e.log.Error("a job refused its timer", "job", j.def.ID, "err", err)
			}
		}
	}
	for _, res := range results {
		e.finished(rs, res)
	}
	answers := make([]func() any, len(reqs))
	errs := make([]error, len(reqs))
	for i, r := range reqs {
		answers[i], errs[i] = r.apply(rs)
	}
	e.startQueued(rs)
	if err := e.commit(ctx, rs); err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		e.retry = append(e.retry, results...)
	}
	for i, r := range reqs {
		var v any
		if errs[i] == nil && answers[i] != nil {
			v = answers[i]()
		}
		r.done <- reply{v, errs[i]}
	}
}

// finished notes a run's end in round rs, unless the run was already
// ended (timed out or cancelled): then its result is dropped.
func (e *Engine) finished(rs *roundState, res *result) {
	j := e.byID[res.exec.run.JobID]
	if j == nil || j.exec != res.exec {
		return
	}
	f := res.finish(rs.now)
	var ev job.Event = &job.Succeeded{Now: rs.now}
	if f.Status != jobs.RunSucceeded {
		ev = &job.Failed{Now: rs.now}
	}
	if err := e.step(rs, j, rs.now, ev, f); err != nil {
		e.log.Error("record a run's end", "job", j.def.ID, "run", res.exec.run.ID, "err", err)
	}
}

// queuedBehind reports whether a manual run waits behind the run in
// progress of machine m.
func queuedBehind(m *job.Machine) bool {
	s, ok := m.State().(job.Running)
	return ok && s.Queued
}
