package tcp_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/examples/tcp"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// msl is the maximum segment lifetime of the scripted tests: TIME-WAIT
// lasts 2*msl. The machine only hands the delay to its Handler, so any
// value does; the RFC's is tcp.MSL.
const msl = tcp.MSL

// step is one event of a script and what must come of it.
type step struct {
	ev tcp.Event
	// want is the state after the event.
	want tcp.State
	// acts are the actions the event must hand out, in order.
	acts []tcp.Action
	// reason, when set, is the reason the event must be rejected with.
	reason string
}

// TestScenarios drives a connection through the RFC's classic exchanges,
// one event at a time, checking the state and the actions after each.
func TestScenarios(t *testing.T) {
	twoMSL := 2 * msl
	tests := []struct {
		name  string
		start tcp.State // nil: a new machine, in Closed
		steps []step
	}{
		{
			name: "active open, active close, TIME-WAIT ends by its timer",
			steps: []step{
				{ev: &tcp.Open{}, want: tcp.SynSent{}, acts: []tcp.Action{&tcp.CreateTCB{}, &tcp.SendSyn{}}},
				{ev: &tcp.SynAck{}, want: tcp.Established{}, acts: []tcp.Action{&tcp.SendAck{}}},
				{ev: &tcp.Send{}, want: tcp.Established{}, acts: []tcp.Action{&tcp.SendData{}}},
				{ev: &tcp.Close{}, want: tcp.FinWait1{}, acts: []tcp.Action{&tcp.SendFin{}}},
				{ev: &tcp.Ack{}, want: tcp.FinWait2{}},
				{ev: &tcp.Fin{}, want: tcp.TimeWait{}, acts: []tcp.Action{&tcp.SendAck{}, &tcp.StartTimer{Timer: 1, Delay: twoMSL}}},
				{ev: &tcp.TimerFired{Timer: 1}, want: tcp.Closed{}, acts: []tcp.Action{&tcp.DeleteTCB{}}},
			},
		},
		{
			name: "passive open, three-way handshake, the peer closes first",
			steps: []step{
				{ev: &tcp.Open{Passive: true}, want: tcp.Listen{Passive: true}, acts: []tcp.Action{&tcp.CreateTCB{}}},
				{ev: &tcp.Syn{}, want: tcp.SynReceived{Passive: true}, acts: []tcp.Action{&tcp.SendSynAck{}}},
				{ev: &tcp.Ack{}, want: tcp.Established{Passive: true}},
				{ev: &tcp.Fin{}, want: tcp.CloseWait{Passive: true}, acts: []tcp.Action{&tcp.SendAck{}}},
				{ev: &tcp.Send{}, want: tcp.CloseWait{Passive: true}, acts: []tcp.Action{&tcp.SendData{}}},
				{ev: &tcp.Close{}, want: tcp.LastAck{Passive: true}, acts: []tcp.Action{&tcp.SendFin{}}},
				{ev: &tcp.Ack{}, want: tcp.Closed{}, acts: []tcp.Action{&tcp.DeleteTCB{}}},
			},
		},
		{
			name:  "simultaneous close: both FINs cross, then CLOSING and TIME-WAIT",
			start: tcp.Established{},
			steps: []step{
				{ev: &tcp.Close{}, want: tcp.FinWait1{}, acts: []tcp.Action{&tcp.SendFin{}}},
				{ev: &tcp.Fin{}, want: tcp.Closing{}, acts: []tcp.Action{&tcp.SendAck{}}},
				{ev: &tcp.Ack{}, want: tcp.TimeWait{}, acts: []tcp.Action{&tcp.StartTimer{Timer: 1, Delay: twoMSL}}},
				{ev: &tcp.TimerFired{Timer: 1}, want: tcp.Closed{}, acts: []tcp.Action{&tcp.DeleteTCB{}}},
			},
		},
		{
			name: "simultaneous open: both SYNs cross",
			steps: []step{
				{ev: &tcp.Open{}, want: tcp.SynSent{}, acts: []tcp.Action{&tcp.CreateTCB{}, &tcp.SendSyn{}}},
				{ev: &tcp.Syn{}, want: tcp.SynReceived{}, acts: []tcp.Action{&tcp.SendSynAck{}}},
				{ev: &tcp.SynAck{}, want: tcp.Established{}},
			},
		},
		{
			name:  "a reset in ESTABLISHED closes and tells the user",
			start: tcp.Established{Passive: true},
			steps: []step{
				{ev: &tcp.Rst{}, want: tcp.Closed{}, acts: []tcp.Action{&tcp.SignalReset{}, &tcp.DeleteTCB{}}},
			},
		},
		{
			name: "a reset in SYN-RECEIVED after a passive open goes back to LISTEN",
			steps: []step{
				{ev: &tcp.Open{Passive: true}, want: tcp.Listen{Passive: true}, acts: []tcp.Action{&tcp.CreateTCB{}}},
				{ev: &tcp.Syn{}, want: tcp.SynReceived{Passive: true}, acts: []tcp.Action{&tcp.SendSynAck{}}},
				{ev: &tcp.Rst{}, want: tcp.Listen{Passive: true}},
				{ev: &tcp.Rst{}, want: tcp.Listen{Passive: true}}, // LISTEN ignores a reset
			},
		},
		{
			name: "a SEND in LISTEN makes the connection active: a reset then refuses it",
			steps: []step{
				{ev: &tcp.Open{Passive: true}, want: tcp.Listen{Passive: true}, acts: []tcp.Action{&tcp.CreateTCB{}}},
				{ev: &tcp.Send{}, want: tcp.SynSent{}, acts: []tcp.Action{&tcp.SendSyn{}}},
				{ev: &tcp.Syn{}, want: tcp.SynReceived{}, acts: []tcp.Action{&tcp.SendSynAck{}}},
				{ev: &tcp.Rst{}, want: tcp.Closed{}, acts: []tcp.Action{&tcp.SignalRefused{}, &tcp.DeleteTCB{}}},
			},
		},
		{
			name:  "a FIN retransmitted in TIME-WAIT restarts the 2MSL timer; the old timer is stale",
			start: tcp.FinWait2{},
			steps: []step{
				{ev: &tcp.Fin{}, want: tcp.TimeWait{}, acts: []tcp.Action{&tcp.SendAck{}, &tcp.StartTimer{Timer: 1, Delay: twoMSL}}},
				{ev: &tcp.Fin{}, want: tcp.TimeWait{}, acts: []tcp.Action{&tcp.CancelTimer{Timer: 1}, &tcp.SendAck{}, &tcp.StartTimer{Timer: 2, Delay: twoMSL}}},
				{ev: &tcp.TimerFired{Timer: 1}, want: tcp.TimeWait{}},
				{ev: &tcp.TimerFired{Timer: 2}, want: tcp.Closed{}, acts: []tcp.Action{&tcp.DeleteTCB{}}},
			},
		},
		{
			name:  "a SYN seen again once synchronized is acknowledged, deep in the hierarchy too",
			start: tcp.TimeWait{},
			steps: []step{
				{ev: &tcp.Syn{}, want: tcp.TimeWait{}, acts: []tcp.Action{&tcp.SendAck{}}},
				{ev: &tcp.SynAck{}, want: tcp.TimeWait{}, acts: []tcp.Action{&tcp.SendAck{}}},
			},
		},
		{
			name: "a segment for no connection is answered with a reset; a reset is not",
			steps: []step{
				{ev: &tcp.Syn{}, want: tcp.Closed{}, acts: []tcp.Action{&tcp.SendRst{}}},
				{ev: &tcp.Fin{}, want: tcp.Closed{}, acts: []tcp.Action{&tcp.SendRst{}}},
				{ev: &tcp.Rst{}, want: tcp.Closed{}},
			},
		},
		{
			name: "user calls the state refuses",
			steps: []step{
				{ev: &tcp.Close{}, want: tcp.Closed{}, reason: "connection does not exist"},
				{ev: &tcp.Abort{}, want: tcp.Closed{}, reason: "connection does not exist"},
				{ev: &tcp.Open{}, want: tcp.SynSent{}, acts: []tcp.Action{&tcp.CreateTCB{}, &tcp.SendSyn{}}},
				{ev: &tcp.Open{}, want: tcp.SynSent{}, reason: "connection already exists"},
				{ev: &tcp.SynAck{}, want: tcp.Established{}, acts: []tcp.Action{&tcp.SendAck{}}},
				{ev: &tcp.Close{}, want: tcp.FinWait1{}, acts: []tcp.Action{&tcp.SendFin{}}},
				{ev: &tcp.Send{}, want: tcp.FinWait1{}, reason: "connection closing"},
				{ev: &tcp.Close{}, want: tcp.FinWait1{}, reason: "connection closing"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &tcp.Recorder{}
			m := start(t, rec, tt.start)
			for i, s := range tt.steps {
				rec.Actions = nil
				err := m.HandleEvent(s.ev)
				if s.reason != "" {
					var rej *tcp.RejectedError
					require.ErrorAs(t, err, &rej, "step %d (%s)", i, s.ev.Kind())
					assert.Equal(t, s.reason, rej.Reason, "step %d (%s)", i, s.ev.Kind())
				} else {
					require.NoError(t, err, "step %d (%s)", i, s.ev.Kind())
				}
				assert.Equal(t, s.want, m.State(), "step %d (%s): state", i, s.ev.Kind())
				assert.Equal(t, s.acts, rec.Actions, "step %d (%s): actions", i, s.ev.Kind())
			}
		})
	}
}

// start returns a machine in state s (nil: a new one, in Closed) that
// hands its actions to rec.
func start(t *testing.T, rec *tcp.Recorder, s tcp.State) *tcp.Machine {
	t.Helper()
	c := tcp.Config{Behavior: tcp.Stack{MSL: msl}, Handler: rec}
	if s == nil {
		m, err := tcp.New(c)
		require.NoError(t, err)
		return m
	}
	m, err := tcp.Restore(c, s)
	require.NoError(t, err)
	return m
}

// TestAbortAndReset checks ABORT and a received reset in every state: the
// RFC's three answers to each (section 3.9), which the spec writes as one
// rule on Connection and one on each of AwaitingSyn and FinsExchanged.
func TestAbortAndReset(t *testing.T) {
	// A machine restored in TIME-WAIT numbers its timer 1.
	var (
		sendRst   = []tcp.Action{&tcp.SendRst{}, &tcp.SignalReset{}, &tcp.DeleteTCB{}}
		tellUser  = []tcp.Action{&tcp.SignalReset{}, &tcp.DeleteTCB{}}
		quiet     = []tcp.Action{&tcp.DeleteTCB{}}
		quietWait = []tcp.Action{&tcp.CancelTimer{Timer: 1}, &tcp.DeleteTCB{}}
	)
	tests := []struct {
		state tcp.State
		// abort and reset are the actions of ABORT and of a reset.
		abort, reset []tcp.Action
		// abortRefused: ABORT is refused (there is no connection).
		abortRefused bool
		// resetIgnored: the reset is dropped.
		resetIgnored bool
		// resetTo is the state a reset leads to.
		resetTo tcp.State
	}{
		{state: tcp.Closed{}, abortRefused: true, resetIgnored: true, resetTo: tcp.Closed{}},
		{state: tcp.Listen{Passive: true}, abort: tellUser, resetIgnored: true, resetTo: tcp.Listen{Passive: true}},
		{state: tcp.SynSent{}, abort: tellUser, reset: tellUser, resetTo: tcp.Closed{}},
		{state: tcp.SynReceived{}, abort: sendRst, reset: []tcp.Action{&tcp.SignalRefused{}, &tcp.DeleteTCB{}}, resetTo: tcp.Closed{}},
		{state: tcp.Established{}, abort: sendRst, reset: tellUser, resetTo: tcp.Closed{}},
		{state: tcp.CloseWait{}, abort: sendRst, reset: tellUser, resetTo: tcp.Closed{}},
		{state: tcp.FinWait1{}, abort: sendRst, reset: tellUser, resetTo: tcp.Closed{}},
		{state: tcp.FinWait2{}, abort: sendRst, reset: tellUser, resetTo: tcp.Closed{}},
		{state: tcp.Closing{}, abort: quiet, reset: quiet, resetTo: tcp.Closed{}},
		{state: tcp.LastAck{}, abort: quiet, reset: quiet, resetTo: tcp.Closed{}},
		{state: tcp.TimeWait{}, abort: quietWait, reset: quietWait, resetTo: tcp.Closed{}},
	}
	for _, tt := range tests {
		t.Run(tt.state.Kind().String(), func(t *testing.T) {
			t.Run("Abort", func(t *testing.T) {
				rec := &tcp.Recorder{}
				m := start(t, rec, tt.state)
				err := m.HandleEvent(&tcp.Abort{})
				if tt.abortRefused {
					require.ErrorIs(t, err, fsmrt.ErrRejected)
					assert.Equal(t, tt.state, m.State())
				} else {
					require.NoError(t, err)
					assert.Equal(t, tcp.Closed{}, m.State())
				}
				assert.Equal(t, tt.abort, rec.Actions)
			})
			t.Run("Rst", func(t *testing.T) {
				rec := &tcp.Recorder{}
				m := start(t, rec, tt.state)
				require.NoError(t, m.HandleEvent(&tcp.Rst{}))
				assert.Equal(t, tt.resetTo, m.State())
				if tt.resetIgnored {
					assert.Empty(t, rec.Actions)
				} else {
					assert.Equal(t, tt.reset, rec.Actions)
				}
			})
		})
	}
}

// TestTimeWaitLasts2MSL checks that the TIME-WAIT timer's delay is twice
// the MSL the Behavior is given, and that a machine restored in TIME-WAIT
// reports the timer to re-arm.
func TestTimeWaitLasts2MSL(t *testing.T) {
	tests := []struct {
		msl  time.Duration
		want time.Duration
	}{
		{msl: tcp.MSL, want: 4 * time.Minute},
		{msl: 30 * time.Second, want: time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.msl.String(), func(t *testing.T) {
			rec := &tcp.Recorder{}
			m, err := tcp.Restore(tcp.Config{Behavior: tcp.Stack{MSL: tt.msl}, Handler: rec}, tcp.FinWait2{})
			require.NoError(t, err)
			require.NoError(t, m.HandleEvent(&tcp.Fin{}))
			assert.Equal(t, []tcp.Action{&tcp.SendAck{}, &tcp.StartTimer{Timer: 1, Delay: tt.want}}, rec.Actions)

			restored, err := tcp.Restore(tcp.Config{Behavior: tcp.Stack{MSL: tt.msl}, Handler: &tcp.Recorder{}}, m.State())
			require.NoError(t, err)
			assert.Equal(t, []*tcp.StartTimer{{Timer: 1, Delay: tt.want}}, restored.Timers())
		})
	}
}
