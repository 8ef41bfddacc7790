package loop_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/runtime/loop"
)

// TestTimersCancelReleasesTasks cancels and restarts timers while the loop
// runs and checks that they are forgotten then, not when the loop stops,
// and that one task serves every timer.
func TestTimersCancelReleasesTasks(t *testing.T) {
	const n = 50
	tests := []struct {
		name    string
		script  func(h userHandler)
		running int // timers left running, each with its task
	}{
		{
			name: "cancelled",
			script: func(h userHandler) {
				for id := range timerID(n) {
					h.StartTimer(id, time.Hour)
				}
				for id := range timerID(n) {
					h.CancelTimer(id)
				}
			},
		},
		{
			name: "restarted",
			script: func(h userHandler) {
				for id := range timerID(n) {
					h.StartTimer(id, time.Hour)
				}
				for id := range timerID(n) {
					h.StartTimer(id, time.Hour)
				}
			},
			running: n,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				base := bubbleGoroutines(t)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := make(chan struct{})
				_, l, timers := newTicker(func(m *ticker, ev event) {
					if isPoke(ev) {
						tt.script(m.h)
						close(done)
					}
				})
				require.NoError(t, l.Send(context.Background(), &poke{}))
				ran := make(chan error, 1)
				go func() { ran <- l.Run(ctx) }()
				<-done

				assert.Equal(t, tt.running, timers.Running())
				// The loop's goroutine, and the one task of the timers.
				assertGoroutines(t, base+2, "more goroutines than the loop's and the timers' task")

				cancel()
				require.ErrorIs(t, <-ran, context.Canceled)
				assert.Zero(t, timers.Running())
				assertGoroutines(t, base, "goroutines outlived the loop")
			})
		})
	}
}

// TestTimersDeadlines checks that StartTimer returns the deadline it sets
// (in UTC), that Arm fires timers whose deadlines have passed at once, in
// deadline order and then by id, and that Arm with no deadline counts the
// delay from now.
func TestTimersDeadlines(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		past := time.Now().Add(-time.Hour)
		var deadline time.Time
		var now time.Time
		m, l, timers := newTicker(func(m *ticker, ev event) {
			switch {
			case isPoke(ev):
				now = time.Now() // the bubble's clock: it stands still while the loop runs
				deadline = m.h.StartTimer(40, time.Hour)
				m.h.CancelTimer(40)
				// Overdue, out of order; 3 and 4 share a deadline.
				m.h.Arm(1, past.Add(3*time.Second), time.Hour)
				m.h.Arm(2, past.Add(1*time.Second), time.Hour)
				m.h.Arm(4, past.Add(2*time.Second), time.Hour)
				m.h.Arm(3, past.Add(2*time.Second), time.Hour)
				m.h.Arm(5, time.Time{}, time.Millisecond)
			case fired(ev, 5):
				endWith(m)
			case fired(ev, sentinel):
				m.stop()
			}
		})
		require.NoError(t, l.Send(context.Background(), &poke{}))
		require.NoError(t, runTicker(t, l))
		assert.Equal(t, []string{"poke", "fired 2", "fired 3", "fired 4", "fired 1", "fired 5", "fired 1000000"}, m.notes)
		assert.Equal(t, time.UTC, deadline.Location())
		assert.True(t, deadline.Equal(now.Add(time.Hour)), "the deadline %s is now (%s) plus the delay", deadline, now)
		assert.Zero(t, timers.Running())
	})
}

// TestTimersScale arms many timers before the loop runs, with deadlines
// out of order, and checks that each fires once, in deadline order: one
// heap and one task serve them all.
func TestTimersScale(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const n = 20_000
		start := time.Now()
		deadlines := map[timerID]time.Time{}
		var got []timerID
		_, l, timers := newTicker(func(m *ticker, ev event) {
			switch {
			case fired(ev, sentinel):
				m.stop()
			default:
				got = append(got, ev.(*timerFired).Timer)
				if len(got) == n {
					endWith(m)
				}
			}
		})
		for i := range timerID(n) {
			id := (i*7919)%n + 1 // a permutation of 1..n
			d := start.Add(time.Duration(id%97) * 50 * time.Microsecond)
			deadlines[id] = d
			timers.Arm(id, d, 0)
		}
		require.Equal(t, n, timers.Running())
		require.NoError(t, runTicker(t, l))
		require.Len(t, got, n, "each timer fires once")
		seen := map[timerID]bool{}
		for i, id := range got {
			require.False(t, seen[id], "timer %d fired twice", id)
			seen[id] = true
			if i > 0 {
				prev := got[i-1]
				require.False(t, deadlines[id].Before(deadlines[prev]), "timer %d (deadline %s) fired after timer %d (deadline %s)", id, deadlines[id], prev, deadlines[prev])
			}
		}
		assert.Zero(t, timers.Running())
	})
}

// timedFired stands for a TimerFired event with the times NewTimersAt
// gives it.
type timedFired struct {
	Timer         timerID
	Deadline, Now time.Time
}

func (*timedFired) isEvent() {}

// TestTimersAt checks that a service made with NewTimersAt hands fire the
// timer's deadline and the time it fired: a timer fires at its deadline,
// and one armed for a deadline already passed fires at once, later than
// its deadline. The bubble's clock makes both times exact.
func TestTimersAt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now().UTC()
		overdue := start.Add(-time.Minute)
		var got []timedFired
		m := &timed{}
		l := loop.New[event](m, strict{}, loop.Options{})
		timers := loop.NewTimersAt(l, func(id timerID, deadline, now time.Time) event {
			return &timedFired{Timer: id, Deadline: deadline, Now: now}
		})
		m.handle = func(ev event) {
			switch ev := ev.(type) {
			case *poke:
				timers.StartTimer(1, time.Hour)
				timers.Arm(2, overdue, time.Hour)
			case *timedFired:
				got = append(got, *ev)
				if ev.Timer == 1 {
					l.Stop()
				}
			}
		}
		require.NoError(t, l.Send(t.Context(), &poke{}))
		require.NoError(t, l.Run(t.Context()))
		assert.Equal(t, []timedFired{
			{Timer: 2, Deadline: overdue, Now: start},
			{Timer: 1, Deadline: start.Add(time.Hour), Now: start.Add(time.Hour)},
		}, got)
	})
}

// timed is a machine that hands every event to handle.
type timed struct{ handle func(event) }

// HandleEvent implements loop.Machine.
func (m *timed) HandleEvent(ev event) error {
	m.handle(ev)
	return nil
}
