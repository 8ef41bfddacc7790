package loop_test

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
	"github.com/fsmgen/fsmgen/runtime/loop"
)

// timerID is the TimerID type of every machine fsmgen generates with
// state timers.
type timerID = fsmrt.TimerID

// event stands for a generated machine's event type.
type event interface{ isEvent() }

// timerFired stands for the generated TimerFired event.
type timerFired struct{ Timer timerID }

// poke is an event that starts a test's script.
type poke struct{}

func (*timerFired) isEvent() {}
func (*poke) isEvent()       {}

// timerHandler has the two methods fsmgen generates in the Handler of a
// machine with state timers.
type timerHandler interface {
	StartTimer(timer timerID, delay time.Duration) time.Time
	CancelTimer(timer timerID)
}

// userHandler is a Handler as a user writes it: it embeds the timer
// service, whose methods then satisfy the generated ones.
type userHandler struct {
	*loop.Timers[event]
}

var _ timerHandler = userHandler{}

// ticker is a toy machine: it notes every event it is handed ("poke",
// "fired 3") and then lets its script react, through its handler, as a
// generated machine performs its actions during HandleEvent.
type ticker struct {
	h      userHandler
	stop   func() // stops the loop; loop goroutine only
	script func(m *ticker, ev event)
	notes  []string
	fired  int // timer events handed to the machine
}

// HandleEvent implements loop.Machine.
func (m *ticker) HandleEvent(ev event) error {
	switch ev := ev.(type) {
	case *poke:
		m.note("poke")
	case *timerFired:
		m.fired++
		m.note("fired %d", ev.Timer)
	default:
		return fmt.Errorf("ticker: unknown event %T", ev)
	}
	if m.script != nil {
		m.script(m, ev)
	}
	return nil
}

// note records what happened.
func (m *ticker) note(format string, args ...any) {
	m.notes = append(m.notes, fmt.Sprintf(format, args...))
}

// strict is an executor that stops the loop on the first refused event.
type strict struct{}

// Execute implements loop.Executor.
func (strict) Execute(_ context.Context, _ *loop.Loop[event], s loop.Step[event]) error {
	return s.Err
}

// newTicker returns a ticker, the loop that drives it and the timer
// service of its handler.
func newTicker(script func(m *ticker, ev event)) (*ticker, *loop.Loop[event], *loop.Timers[event]) {
	m := &ticker{script: script}
	l := loop.New[event](m, strict{}, loop.Options{})
	timers := loop.NewTimers(l, func(id timerID) event { return &timerFired{Timer: id} })
	m.h = userHandler{timers}
	m.stop = l.Stop
	return m, l, timers
}

// runTicker runs l with a deadline and returns Run's error. In a synctest
// bubble the deadline is the bubble's: a loop that waits for nothing more
// reaches it at once.
func runTicker(t *testing.T, l *loop.Loop[event]) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := l.Run(ctx)
	require.NoError(t, ctx.Err(), "the loop did not stop in time")
	return err
}

// fired reports whether ev is the event of timer id.
func fired(ev event, id timerID) bool {
	f, ok := ev.(*timerFired)
	return ok && f.Timer == id
}

// sentinel is the timer that ends a script. A script starts it once
// everything it checks has happened; its delay is longer than any timer
// that must not fire, so that such a timer, if it did fire, would be seen
// before the sentinel.
const sentinel timerID = 1_000_000

// endWith starts the sentinel timer.
func endWith(m *ticker) { m.h.StartTimer(sentinel, 5*time.Millisecond) }

// TestTimersFire checks which timer events reach the machine, and in what
// order. Every script's order of events is fixed by cause and effect, not
// by how long anything takes: each runs in a synctest bubble, where the
// timers count the bubble's time and synctest.Wait lets the timers' task
// queue what is due.
func TestTimersFire(t *testing.T) {
	tests := []struct {
		name   string
		script func(m *ticker, ev event)
		want   []string
	}{
		{
			name: "a timer fires once with its id",
			script: func(m *ticker, ev event) {
				switch {
				case isPoke(ev):
					m.h.StartTimer(7, time.Millisecond)
					m.note("running %d", m.h.Running())
				case fired(ev, 7):
					m.note("running %d", m.h.Running())
					endWith(m)
				case fired(ev, sentinel):
					m.stop()
				}
			},
			want: []string{"poke", "running 1", "fired 7", "running 0", "fired 1000000"},
		},
		{
			name: "a timer cancelled before it fires sends nothing",
			script: func(m *ticker, ev event) {
				switch {
				case isPoke(ev):
					m.h.StartTimer(1, time.Millisecond)
					m.h.StartTimer(2, time.Millisecond)
					m.h.CancelTimer(1)
					m.note("running %d", m.h.Running())
				case fired(ev, 2):
					endWith(m)
				case fired(ev, sentinel):
					m.stop()
				}
			},
			want: []string{"poke", "running 1", "fired 2", "fired 1000000"},
		},
		{
			name: "a timer cancelled after it fired, before its event is handled, sends nothing",
			script: func(m *ticker, ev event) {
				switch {
				case isPoke(ev):
					m.h.StartTimer(1, 0)
					synctest.Wait() // timer 1 fires and queues its event meanwhile
					m.h.CancelTimer(1)
					m.h.StartTimer(2, 0) // its event queues after timer 1's
				case fired(ev, 2):
					m.stop()
				}
			},
			want: []string{"poke", "fired 2"},
		},
		{
			name: "a running timer started again fires once",
			script: func(m *ticker, ev event) {
				switch {
				case isPoke(ev):
					m.h.StartTimer(1, time.Millisecond)
					m.h.StartTimer(1, 0)
					m.h.StartTimer(1, time.Millisecond)
					m.note("running %d", m.h.Running())
				case fired(ev, 1):
					endWith(m)
				case fired(ev, sentinel):
					m.stop()
				}
			},
			want: []string{"poke", "running 1", "fired 1", "fired 1000000"},
		},
		{
			name: "a timer started again after it fired, before its event is handled, fires once",
			script: func(m *ticker, ev event) {
				switch {
				case isPoke(ev):
					m.h.StartTimer(1, 0)
					synctest.Wait() // timer 1 fires and queues its event meanwhile
					m.h.StartTimer(1, time.Millisecond)
				case fired(ev, 1):
					endWith(m)
				case fired(ev, sentinel):
					m.stop()
				}
			},
			want: []string{"poke", "fired 1", "fired 1000000"},
		},
		{
			name: "a negative delay fires",
			script: func(m *ticker, ev event) {
				switch {
				case isPoke(ev):
					m.h.StartTimer(1, -time.Hour)
				case fired(ev, 1):
					m.stop()
				}
			},
			want: []string{"poke", "fired 1"},
		},
		{
			name: "cancelling an unknown timer does nothing",
			script: func(m *ticker, ev event) {
				switch {
				case isPoke(ev):
					m.h.CancelTimer(42)
					m.h.StartTimer(1, 0)
					m.h.CancelTimer(42)
					m.note("running %d", m.h.Running())
				case fired(ev, 1):
					m.h.CancelTimer(1) // fired: no longer running
					m.stop()
				}
			},
			want: []string{"poke", "running 1", "fired 1"},
		},
		{
			name: "a timer started again as its event is handled fires again",
			script: func(m *ticker, ev event) {
				switch {
				case isPoke(ev):
					m.h.StartTimer(1, time.Millisecond)
				case fired(ev, 1) && m.fired < 3:
					m.h.StartTimer(1, time.Millisecond)
				case fired(ev, 1):
					m.stop()
				}
			},
			want: []string{"poke", "fired 1", "fired 1", "fired 1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				m, l, timers := newTicker(tt.script)
				require.NoError(t, l.Send(context.Background(), &poke{}))
				require.NoError(t, runTicker(t, l))
				assert.Equal(t, tt.want, m.notes)
				assert.Zero(t, timers.Running())
			})
		})
	}
}

// isPoke reports whether ev is a poke.
func isPoke(ev event) bool {
	_, ok := ev.(*poke)
	return ok
}

// TestTimersMany runs many timers at once, some cancelled, and checks that
// each of the others fires exactly once.
func TestTimersMany(t *testing.T) {
	tests := []struct {
		name        string
		n           int
		cancelEvery int // cancel timers whose id is a multiple; 0 cancels none
	}{
		{name: "one", n: 1},
		{name: "a hundred", n: 100},
		{name: "a thousand, every third cancelled", n: 1000, cancelEvery: 3},
		{name: "a hundred, all cancelled", n: 100, cancelEvery: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var want []string
				for id := 1; id <= tt.n; id++ {
					if tt.cancelEvery == 0 || id%tt.cancelEvery != 0 {
						want = append(want, fmt.Sprintf("fired %d", id))
					}
				}
				m, l, timers := newTicker(func(m *ticker, ev event) {
					switch {
					case isPoke(ev):
						for id := 1; id <= tt.n; id++ {
							// Delays of -1ms, 0, 1ms and 2ms.
							m.h.StartTimer(timerID(id), time.Duration(id%4-1)*time.Millisecond)
						}
						for id := 1; id <= tt.n; id++ {
							if tt.cancelEvery != 0 && id%tt.cancelEvery == 0 {
								m.h.CancelTimer(timerID(id))
							}
						}
						m.note("running %d", m.h.Running())
					case fired(ev, sentinel):
						m.stop()
						return
					}
					if m.fired == len(want) {
						endWith(m)
					}
				})
				require.NoError(t, l.Send(context.Background(), &poke{}))
				require.NoError(t, runTicker(t, l))

				require.GreaterOrEqual(t, len(m.notes), 3)
				assert.Equal(t, []string{"poke", fmt.Sprintf("running %d", len(want))}, m.notes[:2])
				assert.Equal(t, "fired 1000000", m.notes[len(m.notes)-1], "the sentinel comes last")
				assert.ElementsMatch(t, want, m.notes[2:len(m.notes)-1])
				assert.Zero(t, timers.Running())
			})
		})
	}
}

// TestTimersStopWithTheLoop stops the loop, in every way, while timers run,
// and checks that none is left running and that no goroutine of the bubble
// outlives Run.
func TestTimersStopWithTheLoop(t *testing.T) {
	const n = 20
	tests := []struct {
		name      string
		beforeRun bool // start the timers before Run instead of on a poke
		// fired also starts a timer that fires, its event left queued
		// when the loop stops.
		fired  bool
		cancel bool // cancel Run's context instead of calling Stop
		// precancel cancels Run's context before Run. Run may then hand
		// the machine an event or two before it sees the cancel (it
		// learns of it on a goroutine of context.AfterFunc), and return
		// nil if one of them stops it.
		precancel bool
		wantErr   error
	}{
		{name: "Stop"},
		{name: "Run's context is cancelled", cancel: true, wantErr: context.Canceled},
		{name: "a timer has fired, its event is not handled yet", fired: true},
		{name: "a timer has fired, Run's context is cancelled", fired: true, cancel: true, wantErr: context.Canceled},
		{name: "timers started before Run, then Stop", beforeRun: true},
		{name: "timers started before Run, Run's context cancelled before Run", beforeRun: true, precancel: true, wantErr: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				base := bubbleGoroutines(t)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				startAll := func(h userHandler) {
					for id := range timerID(n) {
						h.StartTimer(id, time.Hour)
					}
				}
				m, l, timers := newTicker(func(m *ticker, ev event) {
					if !isPoke(ev) {
						return
					}
					if !tt.beforeRun {
						startAll(m.h)
					}
					if tt.fired {
						m.h.StartTimer(n, 0)
						synctest.Wait() // it fires and queues its event meanwhile
						m.h.CancelTimer(n)
						m.h.StartTimer(n, 0) // a restart, so that the stale event is also queued
						synctest.Wait()
					}
					m.note("running %d", m.h.Running())
					if tt.cancel {
						cancel()
						// The loop learns of the cancel on a goroutine of
						// context.AfterFunc: once it has, the loop stops
						// after this event, before the queued ones.
						synctest.Wait()
					} else {
						m.stop()
					}
				})
				if tt.beforeRun {
					startAll(m.h)
					assert.Equal(t, n, timers.Running(), "timers waiting for Run count as running")
				}
				require.NoError(t, l.Send(context.Background(), &poke{}))
				if tt.precancel {
					cancel()
				}

				err := l.Run(ctx)
				switch {
				case tt.precancel && err == nil:
				case tt.wantErr == nil:
					require.NoError(t, err)
				default:
					require.ErrorIs(t, err, tt.wantErr)
				}
				if !tt.precancel {
					running := n
					if tt.fired {
						running++
					}
					assert.Equal(t, []string{"poke", fmt.Sprintf("running %d", running)}, m.notes)
				}
				assert.Zero(t, timers.Running())
				m.h.StartTimer(1, 0) // after the loop stopped: does nothing
				assert.Zero(t, timers.Running())
				assertGoroutines(t, base, "goroutines outlived the loop")
			})
		})
	}
}

// bubbleGoroutines waits until every other goroutine of the calling
// test's synctest bubble is blocked or gone, and returns how many the
// bubble holds, the caller and synctest's own included. It counts them in
// the runtime's goroutine dump, which names each goroutine's bubble, so
// that goroutines of tests running in parallel do not count.
func bubbleGoroutines(t *testing.T) int {
	t.Helper()
	synctest.Wait()
	self := bubbleOf.FindStringSubmatch(stacks(false))
	require.NotNil(t, self, "the goroutine dump names no synctest bubble: call this in synctest.Test")
	n := 0
	for _, m := range bubbleOf.FindAllStringSubmatch(stacks(true), -1) {
		if m[1] == self[1] {
			n++
		}
	}
	return n
}

// bubbleOf matches the header of a goroutine in a goroutine dump, such as
// "goroutine 7 [chan receive (durable), synctest bubble 3]:", and captures
// the goroutine's bubble.
var bubbleOf = regexp.MustCompile(`(?m)^goroutine \d+ \[.*, synctest bubble (\d+)[\] ]`)

// stacks returns the goroutine dump of the calling goroutine, or of all.
func stacks(all bool) string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, all)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// assertGoroutines checks that the bubble holds want goroutines (see
// bubbleGoroutines), and shows them if not.
func assertGoroutines(t *testing.T, want int, msg string) {
	t.Helper()
	if got := bubbleGoroutines(t); got != want {
		assert.Fail(t, msg, "%d goroutines in the bubble, want %d:\n%s", got, want, stacks(true))
	}
}

// TestTimersBeforeRun starts timers before the loop runs, as a machine's
// constructor may, and checks that they wait for Run without a goroutine
// and then behave as any other timer.
func TestTimersBeforeRun(t *testing.T) {
	tests := []struct {
		name   string
		before func(h userHandler) // called before Run
		want   []string
	}{
		{
			name:   "a timer started before Run fires",
			before: func(h userHandler) { h.StartTimer(1, time.Millisecond) },
			want:   []string{"fired 1", "fired 1000000"},
		},
		{
			name: "a timer started and cancelled before Run sends nothing",
			before: func(h userHandler) {
				h.StartTimer(1, 0)
				h.StartTimer(2, time.Millisecond)
				h.CancelTimer(1)
			},
			want: []string{"fired 2", "fired 1000000"},
		},
		{
			name: "a timer started twice before Run fires once",
			before: func(h userHandler) {
				h.StartTimer(1, 0)
				h.StartTimer(1, -time.Second)
			},
			want: []string{"fired 1", "fired 1000000"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				m, l, timers := newTicker(func(m *ticker, ev event) {
					switch {
					case fired(ev, sentinel):
						m.stop()
					case m.fired == 1:
						endWith(m)
					}
				})
				// Timers that would hold a goroutine each, were they started
				// before Run.
				const idle = 50
				base := bubbleGoroutines(t)
				for id := range timerID(idle) {
					m.h.StartTimer(100+id, time.Hour)
				}
				tt.before(m.h)
				assertGoroutines(t, base, "no goroutine before Run")
				require.GreaterOrEqual(t, timers.Running(), idle+1)
				for id := range timerID(idle) {
					m.h.CancelTimer(100 + id)
				}

				require.NoError(t, runTicker(t, l))
				assert.Equal(t, tt.want, m.notes)
				assert.Zero(t, timers.Running())
			})
		})
	}
}

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
