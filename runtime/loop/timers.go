package loop

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// Timers is a timer service for the machine a Loop drives: it gives the
// machine's Handler the StartTimer and CancelTimer methods fsmgen
// generates for a machine whose states declare after:, backed by one
// clock. E is the machine's event type; a user embeds a *Timers[pkg.Event]
// in the struct that implements the machine's Handler, and the embedded
// methods satisfy the generated ones (every machine's TimerID is
// fsmrt.TimerID).
//
// A timer is a deadline, absolute: StartTimer returns it (now plus the
// delay), the machine keeps it and saves it (Save), and after a restart
// [Timers.Arm] sets the timer again for the same deadline, so that a
// deadline does not move when the process does. Every timer waits in one
// heap, ordered by deadline, served by one task of the loop (see
// [Loop.Go]) however many timers run: the task sleeps until the earliest
// deadline and sends the event fire returns for the timer into the loop
// with [Loop.SendIf], so that the event is dropped if the timer was
// cancelled or restarted between firing and delivery. Timers whose
// deadlines have passed fire at once, in deadline order (then by id).
// Every timer stops when the loop stops, and the task returns before
// [Loop.Run] does.
//
// StartTimer, Arm and CancelTimer must be called on the loop goroutine
// (from the machine's Handler during HandleEvent, or from the executor),
// or before Run is called, on the goroutine that later starts Run: a
// machine's constructor may start a timer through its Handler before the
// loop runs; such a timer waits until Run begins, its deadline counted
// from the StartTimer call. [Timers.Running] may be called from any
// goroutine.
type Timers[E any] struct {
	l    *Loop[E]
	fire func(id fsmrt.TimerID, deadline, now time.Time) E
	now  func() time.Time

	mu      sync.Mutex
	byID    map[fsmrt.TimerID]*timer // armed, or fired and not yet handed to the machine
	queue   timerHeap                // armed, by deadline
	wake    chan struct{}            // tells the task the earliest deadline changed
	serving bool                     // the task runs, or Run will start it
}

// timer is one armed timer.
type timer struct {
	id       fsmrt.TimerID
	deadline time.Time
	index    int // in the heap; -1 once fired
}

// NewTimers returns a timer service whose timers are served by a task of
// l and send fire(id) into l when timer id fires. fire is called when the
// timer fires; it typically returns the machine's TimerFired event, as in
//
//	loop.NewTimers(l, func(id pkg.TimerID) pkg.Event { return &pkg.TimerFired{Timer: id} })
//
// l and fire must not be nil.
func NewTimers[E any](l *Loop[E], fire func(fsmrt.TimerID) E) *Timers[E] {
	return NewTimersAt(l, func(id fsmrt.TimerID, _, _ time.Time) E { return fire(id) })
}

// NewTimersAt is NewTimers for a machine whose timers' rules read the
// time: fire also gets the timer's deadline and the time it fires (the
// service's clock when the timer's task sends the event, its deadline or
// later), for the TimerFired event's Deadline and Now, as in
//
//	loop.NewTimersAt(l, func(id pkg.TimerID, deadline, now time.Time) pkg.Event {
//		return &pkg.TimerFired{Timer: id, Deadline: deadline, Now: now}
//	})
//
// Both times are in UTC. l and fire must not be nil.
func NewTimersAt[E any](l *Loop[E], fire func(id fsmrt.TimerID, deadline, now time.Time) E) *Timers[E] {
	return &Timers[E]{l: l, fire: fire, now: time.Now, byID: map[fsmrt.TimerID]*timer{}, wake: make(chan struct{}, 1)}
}

// StartTimer starts timer id: at its deadline, now plus delay, which it
// returns (in UTC), the event fire(id) is sent into the loop, unless the
// timer is cancelled or restarted first. Starting an id that is already
// running restarts it; the old timer sends nothing. A zero or negative
// delay fires promptly. After the loop has stopped, it does nothing (and
// still returns the deadline).
func (t *Timers[E]) StartTimer(id fsmrt.TimerID, delay time.Duration) time.Time {
	deadline := t.now().Add(delay).UTC()
	t.Arm(id, deadline, delay)
	return deadline
}

// Arm sets timer id to fire at deadline, as StartTimer would have: to
// re-arm, after a restart, a timer of a machine made by Load, with the
// deadline the machine saved (its Deadline). A deadline already passed
// fires at once. A zero deadline, which a machine made by Restore has,
// is now plus delay.
func (t *Timers[E]) Arm(id fsmrt.TimerID, deadline time.Time, delay time.Duration) {
	if deadline.IsZero() {
		deadline = t.now().Add(delay).UTC()
	}
	running := t.l.started()

	t.mu.Lock()
	defer t.mu.Unlock()
	if t.l.ctx.Err() != nil {
		return
	}
	t.stopLocked(id)
	tm := &timer{id: id, deadline: deadline}
	t.byID[id] = tm
	heap.Push(&t.queue, tm)
	switch {
	case t.serving:
		select {
		case t.wake <- struct{}{}:
		default:
		}
	case running:
		t.serveLocked()
	default:
		// Before Run, nothing drains the loop's queue and the caller is
		// the goroutine that will run the loop: ask Run, through the
		// events it takes first, to start the task. Run reads l.next
		// only once it has begun, after this write.
		t.serving = true
		t.l.next = append(t.l.next, envelope[E]{fn: func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.serving = false
			t.serveLocked()
		}})
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
		// The loop has stopped or is stopping: the task is cancelled,
		// and an event still queued will never be handed to the machine.
		clear(t.byID)
		t.queue = nil
	}
	return len(t.byID)
}

// stopLocked forgets timer id, if it is armed or fired and not yet
// handed to the machine. t.mu is held.
func (t *Timers[E]) stopLocked(id fsmrt.TimerID) {
	tm, ok := t.byID[id]
	if !ok {
		return
	}
	delete(t.byID, id)
	if tm.index >= 0 {
		heap.Remove(&t.queue, tm.index)
	}
}

// serveLocked starts the task that serves the heap, unless it runs. If
// the loop has stopped, the timers are forgotten. t.mu is held.
func (t *Timers[E]) serveLocked() {
	if t.serving {
		return
	}
	t.serving = true
	if !t.l.Go(t.l.ctx, "timers", t.serve) {
		t.serving = false
		clear(t.byID)
		t.queue = nil
	}
}

// serve is the task of the timers: it sleeps until the earliest deadline,
// or until a timer is armed or cancelled, and sends the event of each
// timer whose deadline has passed, in deadline order. It returns when ctx
// is done: the loop stops.
func (t *Timers[E]) serve(ctx context.Context) {
	sleep := time.NewTimer(time.Hour)
	defer sleep.Stop()
	for {
		t.mu.Lock()
		var due *timer
		var wait time.Duration = -1
		now := t.now()
		if len(t.queue) > 0 {
			if left := t.queue[0].deadline.Sub(now); left <= 0 {
				due = heap.Pop(&t.queue).(*timer)
			} else {
				wait = left
			}
		}
		t.mu.Unlock()
		if due != nil {
			if err := t.l.SendIf(ctx, t.fire(due.id, due.deadline.UTC(), now.UTC()), func() bool { return t.claim(due) }); err != nil {
				return
			}
			continue
		}
		var after <-chan time.Time
		if wait >= 0 {
			sleep.Reset(wait)
			after = sleep.C
		}
		select {
		case <-ctx.Done():
			return
		case <-t.wake:
		case <-after:
		}
	}
}

// claim reports whether tm, which has fired, is still the timer of its id,
// and then forgets it: its event is about to be handed to the machine. It
// is asked on the loop goroutine; false drops the event as stale.
func (t *Timers[E]) claim(tm *timer) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID[tm.id] != tm {
		return false
	}
	delete(t.byID, tm.id)
	return true
}

// started reports whether Run was called.
func (l *Loop[E]) started() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running
}

// timerHeap orders armed timers by deadline, then by id.
type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].deadline.Equal(h[j].deadline) {
		return h[i].deadline.Before(h[j].deadline)
	}
	return h[i].id < h[j].id
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	tm := x.(*timer)
	tm.index = len(*h)
	*h = append(*h, tm)
}
func (h *timerHeap) Pop() any {
	old := *h
	tm := old[len(old)-1]
	old[len(old)-1] = nil
	tm.index = -1
	*h = old[:len(old)-1]
	return tm
}
