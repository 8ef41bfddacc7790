package tcp_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/examples/tcp"
	"github.com/fsmgen/fsmgen/runtime/loop"
)

// endpoint is the connection's Handler on a loop: it records every action
// (the embedded Recorder) and runs the machine's timers for real, with the
// loop's timer service.
type endpoint struct {
	tcp.Recorder
	timers *loop.Timers[tcp.Event]
}

var _ tcp.Handler = (*endpoint)(nil)

// StartTimer implements tcp.Handler: it records the action and starts a
// real timer, which sends TimerFired into the loop.
func (e *endpoint) StartTimer(timer tcp.TimerID, delay time.Duration) time.Time {
	e.Recorder.StartTimer(timer, delay)
	return e.timers.StartTimer(timer, delay)
}

// CancelTimer implements tcp.Handler: it records the action and stops the
// timer.
func (e *endpoint) CancelTimer(timer tcp.TimerID) {
	e.Recorder.CancelTimer(timer)
	e.timers.CancelTimer(timer)
}

// driver is the loop's executor: it feeds a script of events first, notes
// each step, and stops the loop once the connection is closed again.
type driver struct {
	m      *tcp.Machine
	script []tcp.Event
	// steps are the events handed to the machine, each as "EVENT -> STATE", by their spec names.
	steps []string
}

// Start implements loop.Starter: the script's events go first, in order.
func (d *driver) Start(_ context.Context, l *loop.Loop[tcp.Event]) error {
	for _, ev := range d.script {
		l.Next(ev)
	}
	return nil
}

// Execute implements loop.Executor. A refused event fails the run.
func (d *driver) Execute(_ context.Context, l *loop.Loop[tcp.Event], s loop.Step[tcp.Event]) error {
	if s.Err != nil {
		return s.Err
	}
	d.steps = append(d.steps, s.Event.Kind().String()+" -> "+d.m.Kind().String())
	if s.Seq > 1 && d.m.Kind() == tcp.StateClosed {
		l.Stop()
	}
	return nil
}

// TestTimeWaitOnLoop runs the connection on the generic loop with real
// timers (loop.Timers) and a short MSL: TIME-WAIT ends when its timer
// fires, a retransmitted FIN restarts it, and an ABORT cancels it.
func TestTimeWaitOnLoop(t *testing.T) {
	const mslShort = time.Millisecond
	toTimeWait := []tcp.Event{&tcp.Open{}, &tcp.SynAck{}, &tcp.Close{}, &tcp.Ack{}, &tcp.Fin{}}
	head := []string{"OPEN -> SYN_SENT", "SYN_ACK -> ESTABLISHED", "CLOSE -> FIN_WAIT_1", "ACK -> FIN_WAIT_2", "FIN -> TIME_WAIT"}
	tests := []struct {
		name      string
		msl       time.Duration
		script    []tcp.Event
		wantSteps []string
		// wantTimers are the timer actions handed out, in order.
		wantTimers []tcp.Action
	}{
		{
			name:       "TIME-WAIT ends by its timer",
			msl:        mslShort,
			script:     toTimeWait,
			wantSteps:  append(head[:5:5], "TimerFired -> CLOSED"),
			wantTimers: []tcp.Action{&tcp.StartTimer{Timer: 1, Delay: 2 * mslShort}},
		},
		{
			name:      "a retransmitted FIN restarts the timer, which then ends TIME-WAIT",
			msl:       mslShort,
			script:    append(toTimeWait[:5:5], &tcp.Fin{}),
			wantSteps: append(head[:5:5], "FIN -> TIME_WAIT", "TimerFired -> CLOSED"),
			wantTimers: []tcp.Action{
				&tcp.StartTimer{Timer: 1, Delay: 2 * mslShort},
				&tcp.CancelTimer{Timer: 1},
				&tcp.StartTimer{Timer: 2, Delay: 2 * mslShort},
			},
		},
		{
			name:      "an ABORT in TIME-WAIT cancels the timer",
			msl:       time.Hour,
			script:    append(toTimeWait[:5:5], &tcp.Abort{}),
			wantSteps: append(head[:5:5], "ABORT -> CLOSED"),
			wantTimers: []tcp.Action{
				&tcp.StartTimer{Timer: 1, Delay: 2 * time.Hour},
				&tcp.CancelTimer{Timer: 1},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &endpoint{}
			m, err := tcp.New(tcp.Config{Behavior: tcp.Stack{MSL: tt.msl}, Handler: h})
			require.NoError(t, err)
			d := &driver{m: m, script: tt.script}
			l := loop.New[tcp.Event](m, d, loop.Options{})
			h.timers = loop.NewTimers(l, func(id tcp.TimerID) tcp.Event { return &tcp.TimerFired{Timer: id} })

			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(t, l.Run(ctx))
			require.NoError(t, ctx.Err(), "the connection did not close in time")

			assert.Equal(t, tt.wantSteps, d.steps)
			assert.Equal(t, tcp.Closed{}, m.State())
			assert.Equal(t, tt.wantTimers, timerActions(h.Actions))
			assert.Equal(t, &tcp.DeleteTCB{}, h.Actions[len(h.Actions)-1], "the TCB is deleted last")
			assert.Zero(t, h.timers.Running(), "no timer runs once the loop has stopped")
		})
	}
}

// timerActions returns the StartTimer and CancelTimer actions of acts.
func timerActions(acts []tcp.Action) []tcp.Action {
	var out []tcp.Action
	for _, a := range acts {
		switch a.(type) {
		case *tcp.StartTimer, *tcp.CancelTimer:
			out = append(out, a)
		}
	}
	return out
}
