package loop_test

import (
	"context"
	"fmt"
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
