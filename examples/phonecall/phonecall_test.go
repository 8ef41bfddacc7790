package phonecall_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/examples/phonecall"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// step is one event of a script and what must come of it.
type step struct {
	ev   phonecall.Event
	want phonecall.State
	// acts are the actions the event must hand out, in order.
	acts []phonecall.Action
	// rejected: the event must be refused, changing nothing.
	rejected bool
}

// connected is the way from the receiver down to a connected call.
var connected = []phonecall.Event{&phonecall.CallDialed{Callee: "qmuntal"}, &phonecall.CallConnected{}}

// TestCall drives calls through the machine one event at a time, checking
// the state and the actions (entries and exits included, in order) after
// each.
func TestCall(t *testing.T) {
	tests := []struct {
		name  string
		path  []phonecall.Event // events handled before the script, unchecked
		steps []step
	}{
		{
			name: "dial, connect, hold, unhold, hang up",
			steps: []step{
				{
					ev:   &phonecall.CallDialed{Callee: "qmuntal"},
					want: phonecall.Ringing{},
					acts: []phonecall.Action{&phonecall.Dial{Callee: "qmuntal"}, &phonecall.StartRingingTone{}},
				},
				{
					ev:   &phonecall.CallConnected{},
					want: phonecall.Handset{},
					acts: []phonecall.Action{&phonecall.StopRingingTone{}, &phonecall.StartCallTimer{}},
				},
				{
					// local: Connected is not left, so its timer is not restarted.
					ev:   &phonecall.PlacedOnHold{},
					want: phonecall.OnHold{},
					acts: []phonecall.Action{&phonecall.PlayHoldMusic{}},
				},
				{
					ev:   &phonecall.TakenOffHold{},
					want: phonecall.Handset{},
					acts: []phonecall.Action{&phonecall.StopHoldMusic{}},
				},
				{
					ev:   &phonecall.LeftMessage{},
					want: phonecall.OffHook{},
					acts: []phonecall.Action{&phonecall.StopCallTimer{}},
				},
			},
		},
		{
			name: "hanging up on hold exits OnHold, then Connected",
			path: append(connected[:2:2], &phonecall.PlacedOnHold{}),
			steps: []step{
				{
					ev:   &phonecall.LeftMessage{},
					want: phonecall.OffHook{},
					acts: []phonecall.Action{&phonecall.StopHoldMusic{}, &phonecall.StopCallTimer{}},
				},
			},
		},
		{
			name: "hurling the phone on hold: every exit runs before the transition's action",
			path: append(connected[:2:2], &phonecall.PlacedOnHold{}),
			steps: []step{
				{
					ev:   &phonecall.PhoneHurledAgainstWall{},
					want: phonecall.PhoneDestroyed{},
					acts: []phonecall.Action{&phonecall.StopHoldMusic{}, &phonecall.StopCallTimer{}, &phonecall.ReportDestroyed{}},
				},
				{ev: &phonecall.CallDialed{Callee: "anyone"}, want: phonecall.PhoneDestroyed{}, rejected: true},
			},
		},
		{
			name: "Connected's internal transitions hold on hold too, and leave nothing",
			path: connected,
			steps: []step{
				{ev: &phonecall.SetVolume{Volume: 2}, want: phonecall.Handset{}, acts: []phonecall.Action{&phonecall.ChangeVolume{Volume: 2}}},
				{ev: &phonecall.PlacedOnHold{}, want: phonecall.OnHold{}, acts: []phonecall.Action{&phonecall.PlayHoldMusic{}}},
				{ev: &phonecall.MuteMicrophone{}, want: phonecall.OnHold{}, acts: []phonecall.Action{&phonecall.Mute{}}},
				{ev: &phonecall.UnmuteMicrophone{}, want: phonecall.OnHold{}, acts: []phonecall.Action{&phonecall.Unmute{}}},
				{ev: &phonecall.SetVolume{Volume: 11}, want: phonecall.OnHold{}, acts: []phonecall.Action{&phonecall.ChangeVolume{Volume: 11}}},
			},
		},
		{
			name: "taken off hold, the call resumes on the speakerphone it was put on hold from (Talking's history)",
			path: connected,
			steps: []step{
				{ev: &phonecall.SpeakerOn{}, want: phonecall.Speakerphone{}, acts: []phonecall.Action{&phonecall.RouteToSpeaker{}}},
				{ev: &phonecall.SpeakerOn{}, want: phonecall.Speakerphone{}},
				{ev: &phonecall.PlacedOnHold{}, want: phonecall.OnHold{}, acts: []phonecall.Action{&phonecall.PlayHoldMusic{}}},
				{ev: &phonecall.SpeakerOff{}, want: phonecall.OnHold{}, rejected: true},
				// No RouteToSpeaker: Speakerphone's entry has no action, and
				// the call never left the loudspeaker.
				{ev: &phonecall.TakenOffHold{}, want: phonecall.Speakerphone{}, acts: []phonecall.Action{&phonecall.StopHoldMusic{}}},
				{ev: &phonecall.SpeakerOff{}, want: phonecall.Handset{}, acts: []phonecall.Action{&phonecall.RouteToHandset{}}},
				{ev: &phonecall.PlacedOnHold{}, want: phonecall.OnHold{}, acts: []phonecall.Action{&phonecall.PlayHoldMusic{}}},
				{ev: &phonecall.TakenOffHold{}, want: phonecall.Handset{}, acts: []phonecall.Action{&phonecall.StopHoldMusic{}}},
			},
		},
		{
			name: "the next call starts on the handset: a default entry of Talking takes its initial child, not its history",
			path: append(connected[:2:2], &phonecall.SpeakerOn{}, &phonecall.LeftMessage{}, &phonecall.CallDialed{Callee: "again"}),
			steps: []step{
				// CallConnected enters Connected, whose initial child Talking
				// is entered by default (not through its history): Handset.
				{ev: &phonecall.CallConnected{}, want: phonecall.Handset{}, acts: []phonecall.Action{&phonecall.StopRingingTone{}, &phonecall.StartCallTimer{}}},
			},
		},
		{
			name: "dialling again while it rings re-enters Ringing",
			path: connected[:1],
			steps: []step{
				{
					ev:   &phonecall.CallDialed{Callee: "stateless"},
					want: phonecall.Ringing{},
					acts: []phonecall.Action{
						&phonecall.StopRingingTone{},
						&phonecall.Dial{Callee: "stateless"},
						&phonecall.StartRingingTone{},
					},
				},
			},
		},
		{
			name: "ignored and refused events change nothing",
			path: connected,
			steps: []step{
				{ev: &phonecall.CallDialed{Callee: "anyone"}, want: phonecall.Handset{}},
				{ev: &phonecall.TakenOffHold{}, want: phonecall.Handset{}, rejected: true},
				{ev: &phonecall.PhoneHurledAgainstWall{}, want: phonecall.Handset{}, rejected: true},
				{ev: &phonecall.PlacedOnHold{}, want: phonecall.OnHold{}, acts: []phonecall.Action{&phonecall.PlayHoldMusic{}}},
				{ev: &phonecall.PlacedOnHold{}, want: phonecall.OnHold{}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &phonecall.Recorder{}
			m, err := phonecall.New(phonecall.Config{Handler: rec})
			require.NoError(t, err)
			for i, ev := range tt.path {
				require.NoError(t, m.HandleEvent(ev), "event %d (%s) of the path", i, ev.Kind())
			}
			for i, s := range tt.steps {
				rec.Actions = nil
				err := m.HandleEvent(s.ev)
				if s.rejected {
					require.ErrorIs(t, err, fsmrt.ErrRejected, "step %d (%s)", i, s.ev.Kind())
				} else {
					require.NoError(t, err, "step %d (%s)", i, s.ev.Kind())
				}
				assert.Equal(t, s.want, m.State(), "step %d (%s): state", i, s.ev.Kind())
				assert.Equal(t, s.acts, rec.Actions, "step %d (%s): actions", i, s.ev.Kind())
			}
		})
	}
}

// TestStatelessExample replays the event sequence of stateless's own
// example (example_test.go in qmuntal/stateless) and checks the actions in
// order. It differs from stateless's output in one place: stateless runs
// the "wasted" callback as OnHold is exited (OnExitWith), before the call
// timer stops; here it is the transition's action, which runs after every
// exit.
func TestStatelessExample(t *testing.T) {
	rec := &phonecall.Recorder{}
	m, err := phonecall.New(phonecall.Config{Handler: rec})
	require.NoError(t, err)
	for _, ev := range []phonecall.Event{
		&phonecall.CallDialed{Callee: "qmuntal"},
		&phonecall.CallConnected{},
		&phonecall.SetVolume{Volume: 2},
		&phonecall.PlacedOnHold{},
		&phonecall.MuteMicrophone{},
		&phonecall.UnmuteMicrophone{},
		&phonecall.TakenOffHold{},
		&phonecall.SetVolume{Volume: 11},
		&phonecall.PlacedOnHold{},
		&phonecall.PhoneHurledAgainstWall{},
	} {
		require.NoError(t, m.HandleEvent(ev), "%s", ev.Kind())
	}
	assert.Equal(t, phonecall.PhoneDestroyed{}, m.State())
	assert.Equal(t, []phonecall.Action{
		&phonecall.Dial{Callee: "qmuntal"},
		&phonecall.StartRingingTone{},
		&phonecall.StopRingingTone{},
		&phonecall.StartCallTimer{},
		&phonecall.ChangeVolume{Volume: 2},
		&phonecall.PlayHoldMusic{},
		&phonecall.Mute{},
		&phonecall.Unmute{},
		&phonecall.StopHoldMusic{},
		&phonecall.ChangeVolume{Volume: 11},
		&phonecall.PlayHoldMusic{},
		&phonecall.StopHoldMusic{},
		&phonecall.StopCallTimer{},
		&phonecall.ReportDestroyed{},
	}, rec.Actions)
}
