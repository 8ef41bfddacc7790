package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/runtime"
)

// counter is a toy machine with string events: "inc" adds one and returns
// the count as its action, "quiet" returns no action, "stop" returns the
// action "stop", anything else is refused.
type counter struct{ n int }

var errRefused = errors.New("refused")

// HandleEvent implements runtime.Machine.
func (c *counter) HandleEvent(ev string) (*string, error) {
	switch ev {
	case "inc":
		c.n++
		s := fmt.Sprint(c.n)
		return &s, nil
	case "quiet":
		return nil, nil
	case "stop":
		s := "stop"
		return &s, nil
	}
	return nil, errRefused
}

// script is an executor made of functions.
type script struct {
	start func(ctx context.Context, l *runtime.Loop[string, *string]) error
	steps []string // "event→action" or "event!"
	on    func(ctx context.Context, l *runtime.Loop[string, *string], s runtime.Step[string, *string]) error
}

// Start implements runtime.Starter.
func (x *script) Start(ctx context.Context, l *runtime.Loop[string, *string]) error {
	if x.start != nil {
		return x.start(ctx, l)
	}
	return nil
}

// Execute implements runtime.Executor.
func (x *script) Execute(ctx context.Context, l *runtime.Loop[string, *string], s runtime.Step[string, *string]) error {
	switch {
	case s.Err != nil:
		x.steps = append(x.steps, s.Event+"!")
	case s.Action == nil:
		x.steps = append(x.steps, s.Event+"→nil")
	default:
		x.steps = append(x.steps, s.Event+"→"+*s.Action)
		if *s.Action == "stop" {
			l.Stop()
		}
	}
	if x.on != nil {
		return x.on(ctx, l, s)
	}
	return nil
}

// runLoop runs l with a deadline and returns Run's error.
func runLoop(t *testing.T, l *runtime.Loop[string, *string]) error {
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
		start func(ctx context.Context, l *runtime.Loop[string, *string]) error
		want  []string
	}{
		{
			name: "a task's events arrive in the order sent",
			start: func(ctx context.Context, l *runtime.Loop[string, *string]) error {
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
			start: func(ctx context.Context, l *runtime.Loop[string, *string]) error {
				require.NoError(t, l.Send(ctx, "stop"))
				l.Next("inc")
				l.Next("quiet")
				return nil
			},
			want: []string{"inc→1", "quiet→nil", "stop→stop"},
		},
		{
			name: "a stale event is dropped",
			start: func(ctx context.Context, l *runtime.Loop[string, *string]) error {
				require.NoError(t, l.SendIf(ctx, "inc", func() bool { return false }))
				require.NoError(t, l.SendIf(ctx, "inc", func() bool { return true }))
				require.NoError(t, l.Send(ctx, "stop"))
				return nil
			},
			want: []string{"inc→1", "stop→stop"},
		},
		{
			name: "Call runs between events",
			start: func(ctx context.Context, l *runtime.Loop[string, *string]) error {
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
			x := &script{start: tt.start}
			l := runtime.NewLoop[string, *string](&counter{}, x, runtime.Options{})
			require.NoError(t, runLoop(t, l))
			assert.Equal(t, tt.want, x.steps)
		})
	}
}

// TestLoopStopsItsTasks stops the loop in every way and checks that every
// task has returned when Run does.
func TestLoopStopsItsTasks(t *testing.T) {
	tests := []struct {
		name    string
		on      func(ctx context.Context, l *runtime.Loop[string, *string], s runtime.Step[string, *string]) error
		cancel  bool // cancel Run's context instead
		wantErr string
	}{
		{name: "Stop", on: nil},
		{
			name: "an executor error",
			on: func(_ context.Context, _ *runtime.Loop[string, *string], s runtime.Step[string, *string]) error {
				if s.Err != nil {
					return errors.New("executor failed")
				}
				return nil
			},
			wantErr: "executor failed",
		},
		{
			name: "a task panics",
			on: func(ctx context.Context, l *runtime.Loop[string, *string], s runtime.Step[string, *string]) error {
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
			var stopped atomic.Int32
			var l *runtime.Loop[string, *string]
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			x := &script{
				on: tt.on,
				start: func(lctx context.Context, l *runtime.Loop[string, *string]) error {
					for range 3 {
						require.True(t, l.Go(lctx, "waiter", func(ctx context.Context) {
							<-ctx.Done()
							time.Sleep(10 * time.Millisecond) // a task that takes a moment to stop
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
			l = runtime.NewLoop[string, *string](&counter{}, x, runtime.Options{})
			err := l.Run(ctx)
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
			}
			assert.Equal(t, int32(3), stopped.Load(), "every task returned before Run did")
			assert.ErrorIs(t, l.Send(context.Background(), "inc"), runtime.ErrStopped)
			assert.ErrorIs(t, l.Call(context.Background(), func() {}), runtime.ErrStopped)
			assert.False(t, l.Go(context.Background(), "late", func(context.Context) {}))
			assert.ErrorContains(t, l.Run(context.Background()), "called twice")
		})
	}
}

// failingStart is an executor whose Start fails.
type failingStart struct{ script }

// Start implements runtime.Starter.
func (failingStart) Start(context.Context, *runtime.Loop[string, *string]) error {
	return errors.New("cannot start")
}

// TestLoopStartError checks that a failing Start stops Run.
func TestLoopStartError(t *testing.T) {
	l := runtime.NewLoop[string, *string](&counter{}, &failingStart{}, runtime.Options{})
	require.EqualError(t, runLoop(t, l), "cannot start")
}
