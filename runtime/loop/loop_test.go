package loop_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/runtime/loop"
)

// counter is a toy machine with string events, as generated machines
// are: it hands its actions to its handler during HandleEvent. "inc" adds
// one and performs the count as its action, "quiet" performs no action,
// "stop" performs the action "stop", anything else is refused.
type counter struct {
	n      int
	handle func(action string)
}

var errRefused = errors.New("refused")

// HandleEvent implements loop.Machine.
func (c *counter) HandleEvent(ev string) error {
	switch ev {
	case "inc":
		c.n++
		c.handle(fmt.Sprint(c.n))
	case "quiet":
	case "stop":
		c.handle("stop")
	default:
		return errRefused
	}
	return nil
}

// script is an executor made of functions; it is also the counter's
// handler, and keeps the actions of the event at hand until Execute.
type script struct {
	start   func(ctx context.Context, l *loop.Loop[string]) error
	steps   []string // "event→action" or "event!"
	on      func(ctx context.Context, l *loop.Loop[string], s loop.Step[string]) error
	actions []string
}

// perform is the counter's handler.
func (x *script) perform(action string) { x.actions = append(x.actions, action) }

// newLoop returns a loop driving a new counter whose handler is x.
func newLoop(x *script) *loop.Loop[string] {
	return loop.New[string](&counter{handle: x.perform}, x, loop.Options{})
}

// Start implements loop.Starter.
func (x *script) Start(ctx context.Context, l *loop.Loop[string]) error {
	if x.start != nil {
		return x.start(ctx, l)
	}
	return nil
}

// Execute implements loop.Executor.
func (x *script) Execute(ctx context.Context, l *loop.Loop[string], s loop.Step[string]) error {
	actions := x.actions
	x.actions = nil
	switch {
	case s.Err != nil:
		x.steps = append(x.steps, s.Event+"!")
	case len(actions) == 0:
		x.steps = append(x.steps, s.Event+"→nil")
	default:
		for _, a := range actions {
			x.steps = append(x.steps, s.Event+"→"+a)
			if a == "stop" {
				l.Stop()
			}
		}
	}
	if x.on != nil {
		return x.on(ctx, l, s)
	}
	return nil
}

// runLoop runs l with a deadline and returns Run's error.
func runLoop(t *testing.T, l *loop.Loop[string]) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := l.Run(ctx)
	require.NoError(t, ctx.Err(), "the loop did not stop in time")
	return err
}

// TestLoopHandsEventsInOrder checks the order events reach the machine in.
func TestLoopHandsEventsInOrder(t *testing.T) {
	tests := []struct {
		name  string
		start func(ctx context.Context, l *loop.Loop[string]) error
		want  []string
	}{
		{
			name: "a task's events arrive in the order sent",
			start: func(ctx context.Context, l *loop.Loop[string]) error {
				l.Go(ctx, "sender", func(ctx context.Context) {
					for _, ev := range []string{"inc", "quiet", "bogus", "inc", "stop"} {
						if l.Send(ctx, ev) != nil {
							return
						}
					}
				})
				return nil
			},
			want: []string{"inc→1", "quiet→nil", "bogus!", "inc→2", "stop→stop"},
		},
		{
			name: "Next goes ahead of queued events, in order",
			start: func(ctx context.Context, l *loop.Loop[string]) error {
				require.NoError(t, l.Send(ctx, "stop"))
				l.Next("inc")
				l.Next("quiet")
				return nil
			},
			want: []string{"inc→1", "quiet→nil", "stop→stop"},
		},
		{
			name: "a stale event is dropped",
			start: func(ctx context.Context, l *loop.Loop[string]) error {
				require.NoError(t, l.SendIf(ctx, "inc", func() bool { return false }))
				require.NoError(t, l.SendIf(ctx, "inc", func() bool { return true }))
				require.NoError(t, l.Send(ctx, "stop"))
				return nil
			},
			want: []string{"inc→1", "stop→stop"},
		},
		{
			name: "Call runs between events",
			start: func(ctx context.Context, l *loop.Loop[string]) error {
				require.NoError(t, l.Send(ctx, "inc"))
				require.NoError(t, l.Call(ctx, func() { l.Next("inc") }))
				require.NoError(t, l.Send(ctx, "stop"))
				return nil
			},
			want: []string{"inc→1", "inc→2", "stop→stop"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				x := &script{start: tt.start}
				l := newLoop(x)
				require.NoError(t, runLoop(t, l))
				assert.Equal(t, tt.want, x.steps)
			})
		})
	}
}

// TestLoopStopsItsTasks stops the loop in every way and checks that every
// task has returned when Run does. It runs in a synctest bubble, whose
// clock passes the tasks' moment to stop at once.
func TestLoopStopsItsTasks(t *testing.T) {
	tests := []struct {
		name    string
		on      func(ctx context.Context, l *loop.Loop[string], s loop.Step[string]) error
		cancel  bool // cancel Run's context instead
		wantErr string
	}{
		{name: "Stop", on: nil},
		{
			name: "an executor error",
			on: func(_ context.Context, _ *loop.Loop[string], s loop.Step[string]) error {
				if s.Err != nil {
					return errors.New("executor failed")
				}
				return nil
			},
			wantErr: "executor failed",
		},
		{
			name: "a task panics",
			on: func(ctx context.Context, l *loop.Loop[string], s loop.Step[string]) error {
				if s.Err != nil {
					l.Go(ctx, "bomb", func(context.Context) { panic("boom") })
				}
				return nil
			},
			wantErr: "task bomb panicked: boom",
		},
		{name: "Run's context is cancelled", cancel: true, wantErr: context.Canceled.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var stopped atomic.Int32
				var l *loop.Loop[string]
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				x := &script{
					on: tt.on,
					start: func(lctx context.Context, l *loop.Loop[string]) error {
						for range 3 {
							require.True(t, l.Go(lctx, "waiter", func(ctx context.Context) {
								<-ctx.Done()
								time.Sleep(10 * time.Millisecond) // a task that takes a moment to stop (the bubble's time)
								stopped.Add(1)
							}))
						}
						switch {
						case tt.cancel:
							cancel()
						case tt.on == nil:
							l.Next("stop")
						default:
							l.Next("bogus")
						}
						return nil
					},
				}
				l = newLoop(x)
				err := l.Run(ctx)
				if tt.wantErr == "" {
					require.NoError(t, err)
				} else {
					require.ErrorContains(t, err, tt.wantErr)
				}
				assert.Equal(t, int32(3), stopped.Load(), "every task returned before Run did")
				assert.ErrorIs(t, l.Send(context.Background(), "inc"), loop.ErrStopped)
				assert.ErrorIs(t, l.Call(context.Background(), func() {}), loop.ErrStopped)
				assert.False(t, l.Go(context.Background(), "late", func(context.Context) {}))
				assert.ErrorContains(t, l.Run(context.Background()), "called twice")
			})
		})
	}
}

// TestLoopCancelledRun: once Run's context is done, the loop handles no
// event still queued and a task it starts is cancelled from its start,
// though the watcher that cancels the loop after Run's context may not
// have run yet (a subagent stopped from a tool call sent one more request
// to the model so).
func TestLoopCancelledRun(t *testing.T) {
	t.Parallel()
	for range 50 {
		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan error, 1)
		x := &script{start: func(lctx context.Context, l *loop.Loop[string]) error {
			cancel()
			require.True(t, l.Go(lctx, "late", func(ctx context.Context) { started <- ctx.Err() }))
			l.Next("inc")
			return nil
		}}
		err := newLoop(x).Run(ctx)
		require.ErrorIs(t, err, context.Canceled)
		assert.ErrorIs(t, <-started, context.Canceled, "the task starts cancelled")
		assert.Empty(t, x.steps, "no event is handled")
	}
}

// TestLoopStartError checks that a failing Start stops Run.
func TestLoopStartError(t *testing.T) {
	t.Parallel()
	x := &script{start: func(context.Context, *loop.Loop[string]) error { return errors.New("cannot start") }}
	require.EqualError(t, runLoop(t, newLoop(x)), "cannot start")
}
