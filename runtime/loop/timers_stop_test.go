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
)

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
