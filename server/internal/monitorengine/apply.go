package monitorengine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fsmgen/fsmgen/gen/monitor"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
	"github.com/fsmgen/fsmgen/server/internal/store"
)

// request is what the API asks of Run.
type request struct {
	apply func(e *Engine, rs *roundState) (result, error)
	done  chan result
}

// result is a request's answer.
type result struct {
	mon     *mon
	checkin string
	err     error
}

// roundState is what a round has done so far.
type roundState struct {
	now   time.Time
	batch store.Batch
	// before holds, for each monitor the round changed, its committed row
	// (a copy), to roll back to; created and deleted mark monitors the
	// round created or deleted.
	before  map[*mon]store.Monitor
	created map[*mon]bool
	deleted map[*mon]bool
	// inserted marks the monitors the round created that no step changed
	// since: their machine is as inserted, and is not saved again.
	inserted map[*mon]bool
	// checkins are the check-ins the round created that are in progress,
	// by id, so that a finishing ping of the same round finds them;
	// finished those the round closed (a ping, a timeout, a new start),
	// which the store still has in progress until the round is written.
	checkins map[string]*mon
	finished map[string]finishedRun
	events   []Event
	alerts   bool
}

// step is one event applied to one monitor's machine: the handler's
// methods write into it.
type step struct {
	mon    *mon
	at     time.Time
	rs     *roundState
	batch  *store.Batch
	closed string // the run CloseRun closed
	// finished are the check-ins the step closed, with their status.
	finished map[string]string
}

// finishedRun is a check-in a round closed.
type finishedRun struct {
	mon    *mon
	status string
}

// finish records that the step closes check-in id with status.
func (st *step) finish(id, status string) {
	if st.finished == nil {
		st.finished = map[string]string{}
	}
	st.finished[id] = status
}

// touch records that the round changes m, keeping its committed row.
func (rs *roundState) touch(m *mon) {
	if _, ok := rs.before[m]; !ok {
		rs.before[m] = m.row
	}
}

// begin starts a step of m at time at.
func (e *Engine) begin(rs *roundState, m *mon, at time.Time) *step {
	rs.touch(m)
	delete(rs.inserted, m)
	st := &step{mon: m, at: at, rs: rs, batch: &store.Batch{}}
	e.step = st
	return st
}

// end finishes a step that succeeded: its writes join the round's, and a
// change of health is published and alerted.
func (e *Engine) end(st *step) {
	e.step = nil
	st.rs.batch.Append(st.batch)
	for id, status := range st.finished {
		st.rs.finished[id] = finishedRun{st.mon, status}
		delete(st.rs.checkins, id)
	}
	m := st.mon
	health := healthOf(m.machine.State(), m.row.Health)
	if health == m.row.Health {
		return
	}
	change := HealthChange{Slug: m.row.Slug, Name: m.row.Name, From: m.row.Health, To: health, At: st.at.UTC()}
	m.row.Health = health
	st.rs.events = append(st.rs.events, Event{Kind: EventHealth, Data: change})
	url := m.row.AlertWebhookURL
	if url == "" {
		url = e.webhook
	}
	// A change into unknown is the monitor starting afresh (made active
	// again, or given new settings), which whoever did it knows: not
	// alerted.
	if url != "" && change.To != HealthUnknown && (alerting(change.From) || alerting(change.To)) {
		payload, _ := json.Marshal(Alert{Event: "health_changed", HealthChange: change})
		st.rs.batch.Add(store.InsertAlert{URL: url, Payload: payload, At: st.at})
		st.rs.alerts = true
	}
}

// abandon drops a step that failed: its writes are discarded; the
// machine, which refused the event, is unchanged.
func (e *Engine) abandon(st *step) { e.step = nil }

// round fires the timers due, applies the requests, writes the result in
// one transaction, then answers and publishes; when the write fails, every
// monitor the round changed goes back to its committed state, and the
// requests fail.
//
// The timers fire first: their deadlines passed before the round began,
// and the requests happen at its time, so a ping that arrives after a run
// was missed does not erase the miss. A round fires at most maxRound
// timers; when more are due (a backlog, after a restart), they fire in
// rounds of their own before the requests.
func (e *Engine) round(ctx context.Context, reqs []*request) {
	if e.shared != nil {
		// Run may have waited past a lease (this instance paused): its
		// shards' monitors are not touched then.
		e.expireShards(time.Now())
	}
	for {
		rs := &roundState{
			// To the microsecond: what Postgres keeps.
			now:    e.now().UTC().Truncate(time.Microsecond),
			before: map[*mon]store.Monitor{}, created: map[*mon]bool{}, deleted: map[*mon]bool{}, inserted: map[*mon]bool{},
			checkins: map[string]*mon{}, finished: map[string]finishedRun{},
		}
		// One at a time: a firing may arm a timer that is due too (the
		// next run's miss, after a long stop).
		fired := 0
		for ; fired < maxRound; fired++ {
			due := e.due(rs.now, 1)
			if len(due) == 0 {
				break
			}
			e.fire(rs, due[0])
		}
		if fired == maxRound {
			if next := e.timers.Next(); next != nil && !next.Deadline.After(rs.now) {
				if !e.commit(ctx, rs, nil, nil) {
					for _, r := range reqs {
						r.done <- result{err: errStorage()}
					}
					return
				}
				continue
			}
		}
		results := make([]result, len(reqs))
		for i, r := range reqs {
			res, err := r.apply(e, rs)
			res.err = err
			results[i] = res
		}
		e.commit(ctx, rs, reqs, results)
		return
	}
}

// commit writes what a round changed, then answers its requests and
// publishes its events, and reports true; when the write fails, it rolls
// the monitors back, answers 503 to the requests that had succeeded, and
// reports false.
func (e *Engine) commit(ctx context.Context, rs *roundState, reqs []*request, results []result) bool {
	var err error
	for m, before := range rs.before {
		if rs.deleted[m] || err != nil {
			continue
		}
		renamed := m.row.Slug != before.Slug || m.row.Name != before.Name || m.row.PingKey != before.PingKey || m.row.AlertWebhookURL != before.AlertWebhookURL
		if rs.inserted[m] && !renamed {
			continue // inserted as it is, and not changed since
		}
		var saved []byte
		if saved, err = m.machine.Save(); err != nil {
			err = fmt.Errorf("save the machine of %s: %w", m.row.Slug, err)
			continue
		}
		if rs.created[m] && !renamed && bytes.Equal(saved, m.row.Machine) {
			continue // inserted as it is
		}
		m.row.Machine = saved
		m.row.UpdatedAt = rs.now
		if m.row.Slug != before.Slug || m.row.Name != before.Name || m.row.PingKey != before.PingKey || m.row.AlertWebhookURL != before.AlertWebhookURL {
			rs.batch.Add(store.UpdateMonitor{Monitor: m.row})
		} else {
			rs.batch.Add(store.SaveMachine{ID: m.row.ID, Machine: saved, Health: m.row.Health, LastCheckinAt: m.row.LastCheckinAt, UpdatedAt: rs.now})
		}
	}
	if err == nil {
		rs.batch.Fence = e.fence(rs)
		err = e.write(ctx, &rs.batch)
	}
	if errors.Is(err, store.ErrFenced) {
		select {
		case e.rebalance <- struct{}{}: // the keeper finds out which
		default:
		}
	}
	if err != nil {
		switch {
		case errors.Is(err, store.ErrFenced) || errors.Is(err, errLeaseRanOut):
			e.log.Warn("a round was not written: this instance does not hold its shards any more", "err", err, "requests", len(reqs), "monitors", len(rs.before))
		case errors.Is(err, store.ErrPaused):
			e.log.Warn("a round was not written: this instance paused in the middle of it", "err", err, "requests", len(reqs), "monitors", len(rs.before))
		default:
			e.log.Error("write a round", "err", err, "requests", len(reqs), "monitors", len(rs.before))
		}
		e.rollback(rs)
		e.retryAt = e.now().Add(retryWrite)
		for i, r := range reqs {
			if results[i].err == nil {
				results[i] = result{err: errStorage()}
			}
			r.done <- results[i]
		}
		return false
	}
	published := make([]*mon, 0, len(rs.before))
	for m := range rs.before {
		if !rs.deleted[m] {
			published = append(published, m)
		}
	}
	inParallel(len(published), func(i int) { published[i].publish(e) })
	for i, r := range reqs {
		r.done <- results[i]
	}
	if len(rs.events) > 0 {
		if e.events != nil {
			e.events <- rs.events
		} else {
			e.publish(ctx, rs.events)
		}
	}
	if rs.alerts {
		select {
		case e.alerts <- struct{}{}:
		default:
		}
	}
	return true
}

// finishedEvent is the event of check-in id of m, finished at at with
// status.
func finishedEvent(m *mon, id, status string, at time.Time) Event {
	return Event{Kind: EventCheckin, Data: finishedCheckin{slug: m.row.Slug, monitorID: m.row.ID, id: id, status: status, at: at}}
}

// roundWriteTimeout bounds the write of a round.
const roundWriteTimeout = 30 * time.Second

// errLeaseRanOut is the error of a round not written, or not written in
// time, because a lease it needs may have run out meanwhile.
var errLeaseRanOut = errors.New("the lease of a shard the round writes may have run out before the write ended (the database did not answer in time, or this instance was paused): nothing acknowledged")

// write writes a round's batch. A round taken is written even when Run is
// being stopped, so that its requests get their true answer: its write
// outlives ctx, within a bound. On a shared store it must also end before
// the leases it is fenced by may run out: past that, Run stops running
// their shards, and must not be left waiting on a write (a paused
// instance, a database that does not answer); an unfinished write is
// given up, its requests answered 503.
func (e *Engine) write(ctx context.Context, b *store.Batch) error {
	by, ok := e.writeBy(b.Fence)
	if !ok {
		return errLeaseRanOut
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), roundWriteTimeout)
	defer cancel()
	if !by.IsZero() {
		var cancelBy context.CancelFunc
		wctx, cancelBy = context.WithDeadline(wctx, by)
		defer cancelBy()
	}
	err := e.store.Apply(wctx, b)
	if err != nil && !by.IsZero() && !time.Now().Before(by) {
		return fmt.Errorf("%w: %w", errLeaseRanOut, err)
	}
	return err
}

// errStorage is the answer to a request whose round could not be written.
func errStorage() error {
	return &Error{Status: 503, Code: "storage_failed", Message: "the server could not store the change; nothing was changed: retry"}
}

// retryWrite is how long due timers wait after a round failed to write,
// so that a failing disk is not hammered.
const retryWrite = time.Second

// rollback returns every monitor the round changed to its committed state.
func (e *Engine) rollback(rs *roundState) {
	for m, row := range rs.before {
		switch {
		case rs.created[m]:
			e.disarmAll(m)
			e.remove(m)
		default:
			renamed := m.row.Slug // the slug the round gave it
			m.row = row
			if err := e.load(m); err != nil {
				// The row was loaded before; it still loads.
				e.log.Error("reload a monitor after a failed write", "monitor", m.row.Slug, "err", err)
			}
			if rs.deleted[m] {
				e.add(m)
			} else if renamed != m.row.Slug {
				e.reindex(m, renamed)
			}
		}
	}
}

// fire hands a timer's firing to its machine, at its deadline.
func (e *Engine) fire(rs *roundState, d dueTimer) {
	st := e.begin(rs, d.mon, d.entry.Deadline)
	if err := d.mon.machine.HandleEvent(&monitor.TimerFired{Timer: d.entry.ID, Deadline: d.entry.Deadline, Now: rs.now}); err != nil {
		e.log.Error("a monitor refused its timer", "monitor", d.mon.row.Slug, "err", err)
		e.abandon(st)
		return
	}
	e.end(st)
}

// handler performs one monitor's actions, within the step being applied.
type handler struct {
	e   *Engine
	mon *mon
}

func (h *handler) current() *step {
	st := h.e.step
	if st == nil || st.mon != h.mon {
		// Load hands out no action; New's start a step first.
		panic("monitors: an action outside a step")
	}
	return st
}

// RecordMissed records a missed check-in, created when the run was missed.
func (h *handler) RecordMissed(expectedAt time.Time) {
	st := h.current()
	c := &store.Checkin{ID: newID(), MonitorID: h.mon.row.ID, Status: CheckinMissed, Source: SourceSystem, CreatedAt: st.at, ExpectedAt: expectedAt}
	st.batch.Add(store.InsertCheckin{Checkin: *c})
	st.rs.events = append(st.rs.events, Event{Kind: EventCheckin, Data: CheckinEvent{Slug: h.mon.row.Slug, Checkin: newCheckinView(c)}})
}

// RecordTimeout closes the running check-in as timed out.
func (h *handler) RecordTimeout(run string) {
	st := h.current()
	st.batch.Add(store.FinishCheckin{MonitorID: h.mon.row.ID, ID: run, Status: CheckinTimeout, At: st.at})
	st.finish(run, CheckinTimeout)
	st.rs.events = append(st.rs.events, finishedEvent(h.mon, run, CheckinTimeout, st.at))
}

// CloseRun notes the run the step's check-in finishes; the ping closes it
// with its own status.
func (h *handler) CloseRun(run string) { h.current().closed = run }

// Supersede closes a run a new start replaced, as an error.
func (h *handler) Supersede(run string) {
	st := h.current()
	why := "superseded by a new start"
	st.batch.Add(store.FinishCheckin{MonitorID: h.mon.row.ID, ID: run, Status: CheckinError, At: st.at, Output: &why})
	st.finish(run, CheckinError)
	st.rs.events = append(st.rs.events, finishedEvent(h.mon, run, CheckinError, st.at))
}

// StartTimer arms the timer at the step's time plus delay.
func (h *handler) StartTimer(id fsmrt.TimerID, delay time.Duration) time.Time {
	deadline := h.current().at.Add(delay)
	h.e.arm(h.mon, id, deadline)
	return deadline
}

// CancelTimer disarms the timer.
func (h *handler) CancelTimer(id fsmrt.TimerID) { h.e.disarm(h.mon, id) }

// The statuses and sources of check-ins.
const (
	CheckinInProgress = "in_progress"
	CheckinOK         = "ok"
	CheckinError      = "error"
	CheckinMissed     = "missed"
	CheckinTimeout    = "timeout"

	SourcePing   = "ping"
	SourceAPI    = "api"
	SourceSystem = "system"
	SourceJob    = "job"
)

// Error is a request's failure as the API reports it.
type Error struct {
	Status  int    // the HTTP status
	Code    string // a stable snake_case code
	Message string // what is wrong and what to do
}

func (e *Error) Error() string { return e.Message }

// AsError returns err as an *Error, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
