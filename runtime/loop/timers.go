package loop

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// Timers is a timer service for the machine a Loop drives: it gives the
// machine's Handler the StartTimer and CancelTimer methods fsmgen
// generates for a machine whose states declare after:, backed by real
// timers. E is the machine's event type; a user embeds a
// *Timers[pkg.Event] in the struct that implements the machine's Handler,
// and the embedded methods satisfy the generated ones (every machine's
// TimerID is fsmrt.TimerID).
//
// Each running timer is a task of the loop (see [Loop.Go]). When its delay
// has passed, it sends the event fire returned for its id into the loop
// with [Loop.SendIf], so that the event is dropped if the timer was
// cancelled or restarted between firing and delivery. A machine that gets
// a timer event anyway (none should come from Timers) ignores it as stale.
// Every timer stops when the loop stops, and its task returns before
// [Loop.Run] does.
//
// StartTimer and CancelTimer must be called on the loop goroutine (from the
// machine's Handler during HandleEvent, or from the executor), or before
// Run is called, on the goroutine that later starts Run: a machine's
// constructor may start a timer through its Handler before the loop runs.
// Such a timer waits, without a goroutine, until Run begins; its delay
// counts from the StartTimer call, so a timer whose delay has passed by
// then fires at once. [Timers.Running] may be called from any goroutine.
type Timers[E any] struct {
	l    *Loop[E]
	fire func(fsmrt.TimerID) E

	mu     sync.Mutex
	timers map[fsmrt.TimerID]*timer[E] // the running timers, started or pending
	queued bool                        // a start of the pending timers waits for Run
}

// timer is one running timer.
type timer[E any] struct {
	// ev is the event the timer sends when it fires.
	ev E
	// begun and delay are when StartTimer was called and the delay it was
	// given; a pending timer's task starts with what is left of delay.
	begun time.Time
	delay time.Duration
	// cancel stops the timer's task; nil while the timer is pending.
	cancel context.CancelFunc
}

// NewTimers returns a timer service whose timers run as tasks of l and
// send fire(id) into l when timer id fires. fire is called when the timer
// starts, by the caller of StartTimer; it typically returns the machine's
// TimerFired event, as in
//
//	loop.NewTimers(l, func(id pkg.TimerID) pkg.Event { return &pkg.TimerFired{Timer: id} })
//
// l and fire must not be nil.
func NewTimers[E any](l *Loop[E], fire func(fsmrt.TimerID) E) *Timers[E] {
	return &Timers[E]{l: l, fire: fire, timers: make(map[fsmrt.TimerID]*timer[E])}
}

// StartTimer starts timer id: once delay has passed, the event fire(id)
// is sent into the loop, unless the timer is cancelled or restarted first.
// Starting an id that is already running restarts it with the new delay;
// the old timer sends nothing. A zero or negative delay fires promptly.
// Called before the loop runs, the timer starts when Run begins (see
// [Timers]); called after the loop has stopped, it does nothing.
func (t *Timers[E]) StartTimer(id fsmrt.TimerID, delay time.Duration) {
	tm := &timer[E]{ev: t.fire(id), begun: time.Now(), delay: delay}
	running := t.l.started()

	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopLocked(id)
	t.timers[id] = tm
	if running {
		t.startLocked(id, tm)
		return
	}
	if !t.queued {
		// Before Run, nothing drains the loop's queue and the caller is
		// the goroutine that will run the loop: ask Run, through the
		// events it takes first, to start the pending timers. Run reads
		// l.next only once it has begun, after this write.
		t.queued = true
		t.l.next = append(t.l.next, envelope[E]{fn: t.startPending})
	}
}

// CancelTimer stops timer id; its event is not sent, or is dropped if it
// is already waiting in the loop's queue. Cancelling an id that is not
// running does nothing.
func (t *Timers[E]) CancelTimer(id fsmrt.TimerID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopLocked(id)
}

// Running reports the number of timers started and not yet fired (their
// event handed to the machine), cancelled or stopped with the loop. It
// counts timers started before Run that wait for the loop to run, and is
// 0 once the loop has stopped. It is meant for tests and metrics.
func (t *Timers[E]) Running() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.l.ctx.Err() != nil {
		// The loop has stopped or is stopping: every task is cancelled,
		// and an event still queued will never be handed to the machine.
		clear(t.timers)
	}
	return len(t.timers)
}

// stopLocked stops timer id and forgets it, if it is running. t.mu is held.
func (t *Timers[E]) stopLocked(id fsmrt.TimerID) {
	tm, ok := t.timers[id]
	if !ok {
		return
	}
	delete(t.timers, id)
	if tm.cancel != nil {
		tm.cancel()
	}
}

// startLocked starts the task of tm, the running timer id, with what is
// left of its delay. If the loop has stopped, the timer is forgotten.
// t.mu is held.
func (t *Timers[E]) startLocked(id fsmrt.TimerID, tm *timer[E]) {
	left := tm.delay
	if left > 0 {
		// Measured from StartTimer for a timer started before Run.
		left -= time.Since(tm.begun)
	}
	ctx, cancel := context.WithCancel(t.l.ctx)
	tm.cancel = cancel
	if !t.l.Go(ctx, fmt.Sprintf("timer %v", id), func(ctx context.Context) { t.run(ctx, id, tm, left) }) {
		cancel()
		delete(t.timers, id)
	}
}

// startPending starts the timers started before Run. It runs on the loop
// goroutine as Run begins.
func (t *Timers[E]) startPending() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.queued = false
	for id, tm := range t.timers {
		if tm.cancel == nil {
			t.startLocked(id, tm)
		}
	}
}

// run is the task of tm, the timer id: it waits for delay, then sends the
// timer's event, to be handed to the machine only if tm is still timer id
// by then. It returns at once when ctx is done: the timer was cancelled or
// restarted, or the loop stops.
func (t *Timers[E]) run(ctx context.Context, id fsmrt.TimerID, tm *timer[E], delay time.Duration) {
	defer tm.cancel()
	c := time.NewTimer(delay)
	defer c.Stop()
	select {
	case <-ctx.Done():
		t.forget(id, tm)
		return
	case <-c.C:
	}
	if err := t.l.SendIf(ctx, tm.ev, func() bool { return t.claim(id, tm) }); err != nil {
		t.forget(id, tm)
	}
}

// forget forgets timer id if it is still tm.
func (t *Timers[E]) forget(id fsmrt.TimerID, tm *timer[E]) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timers[id] == tm {
		delete(t.timers, id)
	}
}

// claim reports whether tm, which has fired, is still timer id, and then
// forgets it: its event is about to be handed to the machine. It is asked
// on the loop goroutine; false drops the event as stale.
func (t *Timers[E]) claim(id fsmrt.TimerID, tm *timer[E]) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timers[id] != tm {
		return false
	}
	delete(t.timers, id)
	return true
}

// started reports whether Run was called.
func (l *Loop[E]) started() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running
}
