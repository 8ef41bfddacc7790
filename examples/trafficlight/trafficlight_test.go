package trafficlight_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/examples/trafficlight"
	"github.com/fsmgen/fsmgen/runtime/loop"
)

// controller drives the lamps of a traffic light: it is the machine's
// Handler and the loop's Executor. Its timers are the loop's (time.Timers,
// each in a task the loop owns); PowerDown stops the loop.
type controller struct {
	*loop.Timers[trafficlight.Event]
	m *trafficlight.Machine
	// after, when set, runs after every step, on the loop goroutine.
	after func(c *controller, s loop.Step[trafficlight.Event])

	// Set by Start.
	loop *loop.Loop[trafficlight.Event]

	// Loop goroutine only.
	start    []trafficlight.Event // handed to the machine first
	shown    []string             // the colors shown, "off" when powered down
	delays   []time.Duration      // the timers started
	rejected []string             // the events the machine rejected
}

var (
	_ trafficlight.Handler              = (*controller)(nil)
	_ loop.Executor[trafficlight.Event] = (*controller)(nil)
	_ loop.Starter[trafficlight.Event]  = (*controller)(nil)
)

// SwitchLights implements trafficlight.Handler.
func (c *controller) SwitchLights(color string) { c.shown = append(c.shown, color) }

// StartTimer implements trafficlight.Handler: it notes the delay and
// starts the loop's timer.
func (c *controller) StartTimer(timer trafficlight.TimerID, delay time.Duration) time.Time {
	c.delays = append(c.delays, delay)
	return c.Timers.StartTimer(timer, delay)
}

// PowerDown implements trafficlight.Handler: it stops the loop.
func (c *controller) PowerDown() {
	c.shown = append(c.shown, "off")
	c.loop.Stop()
}

// Start implements loop.Starter.
func (c *controller) Start(_ context.Context, l *loop.Loop[trafficlight.Event]) error {
	c.loop = l
	for _, ev := range c.start {
		l.Next(ev)
	}
	return nil
}

// Execute implements loop.Executor.
func (c *controller) Execute(_ context.Context, _ *loop.Loop[trafficlight.Event], s loop.Step[trafficlight.Event]) error {
	if s.Err != nil {
		c.rejected = append(c.rejected, s.Event.Kind().String())
	}
	if c.after != nil {
		c.after(c, s)
	}
	return nil
}

// TestTrafficLight runs the light on the generic loop with the loop's
// timers, each case in a synctest bubble: the lamps' delays pass on the
// bubble's clock, at once and always in the same order.
func TestTrafficLight(t *testing.T) {
	t.Parallel()
	const ms = time.Millisecond
	tests := []struct {
		name   string
		timing trafficlight.Timing
		start  []trafficlight.Event
		after  func(c *controller, s loop.Step[trafficlight.Event])
		// cancel, when set, cancels Run's context once it returns true.
		cancel func(c *controller) bool

		wantErr      error
		wantShown    []string
		wantDelays   []time.Duration
		wantRejected []string
		wantState    trafficlight.State
	}{
		{
			name:       "two cycles, then it switches itself off",
			timing:     trafficlight.Timing{Red: 3 * ms, Green: 2 * ms, Yellow: 1 * ms, Cycles: 2},
			start:      []trafficlight.Event{&trafficlight.SwitchOn{}},
			wantShown:  []string{"red", "green", "yellow", "red", "green", "yellow", "off"},
			wantDelays: []time.Duration{3 * ms, 2 * ms, 1 * ms, 3 * ms, 2 * ms, 1 * ms},
			wantState:  trafficlight.Off{},
		},
		{
			name:   "switched off while green, its timer running",
			timing: trafficlight.Timing{Red: ms, Green: time.Hour, Yellow: ms},
			start:  []trafficlight.Event{&trafficlight.SwitchOn{}},
			after: func(c *controller, s loop.Step[trafficlight.Event]) {
				if c.m.Kind() == trafficlight.StateGreen {
					c.loop.Next(&trafficlight.SwitchOff{})
				}
			},
			wantShown:  []string{"red", "green", "off"},
			wantDelays: []time.Duration{ms, time.Hour},
			wantState:  trafficlight.Off{},
		},
		{
			name:         "switching on a light that is on is rejected",
			timing:       trafficlight.Timing{Red: ms, Green: ms, Yellow: ms, Cycles: 1},
			start:        []trafficlight.Event{&trafficlight.SwitchOn{}, &trafficlight.SwitchOn{}},
			wantShown:    []string{"red", "green", "yellow", "off"},
			wantDelays:   []time.Duration{ms, ms, ms},
			wantRejected: []string{"SwitchOn"},
			wantState:    trafficlight.Off{},
		},
		{
			name:       "switched off before it was on, a stale timer event before",
			timing:     trafficlight.Timing{Red: ms, Green: ms, Yellow: ms, Cycles: 1},
			start:      []trafficlight.Event{&trafficlight.TimerFired{Timer: 7}, &trafficlight.SwitchOff{}, &trafficlight.SwitchOn{}},
			wantShown:  []string{"red", "green", "yellow", "off"},
			wantDelays: []time.Duration{ms, ms, ms},
			wantState:  trafficlight.Off{},
		},
		{
			name:       "Run's context is cancelled while a timer runs",
			timing:     trafficlight.Timing{Red: time.Hour, Green: ms, Yellow: ms},
			start:      []trafficlight.Event{&trafficlight.SwitchOn{}},
			cancel:     func(c *controller) bool { return c.Running() == 1 },
			wantErr:    context.Canceled,
			wantShown:  []string{"red"},
			wantDelays: []time.Duration{time.Hour},
			wantState:  trafficlight.Red{Cycles: 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				c := &controller{start: tt.start, after: tt.after}
				// Off has no entry: New hands nothing to c, whose timers
				// need the loop, which needs the machine.
				m, err := trafficlight.New(trafficlight.Config{Behavior: tt.timing, Handler: c})
				require.NoError(t, err)
				c.m = m
				l := loop.New[trafficlight.Event](c.m, c, loop.Options{})
				c.Timers = loop.NewTimers(l, func(id trafficlight.TimerID) trafficlight.Event { return &trafficlight.TimerFired{Timer: id} })

				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if tt.cancel != nil {
					go func() {
						for !tt.cancel(c) {
							select {
							case <-ctx.Done():
								return
							case <-time.After(ms):
							}
						}
						cancel()
					}()
				}
				err = l.Run(ctx)
				if tt.wantErr != nil {
					require.ErrorIs(t, err, tt.wantErr)
				} else {
					require.NoError(t, err)
					require.NoError(t, ctx.Err(), "the light did not stop in time")
				}

				assert.Zero(t, c.Running(), "every timer stopped before Run returned")
				assert.Equal(t, tt.wantShown, c.shown)
				assert.Equal(t, tt.wantDelays, c.delays)
				assert.Equal(t, tt.wantRejected, c.rejected)
				assert.Equal(t, tt.wantState, c.m.State())
			})
		})
	}
}
