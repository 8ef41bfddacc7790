package conference_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/examples/conference"
)

// inCall returns a machine that has joined the call, its Recorder
// emptied.
func inCall(t *testing.T) (*conference.Machine, *conference.Recorder) {
	t.Helper()
	rec := &conference.Recorder{}
	m, err := conference.New(conference.Config{Handler: rec})
	require.NoError(t, err)
	require.NoError(t, m.HandleEvent(&conference.Join{}))
	rec.Actions = nil
	return m, rec
}

// TestNestedRegions drives the call: Media's regions, Audio and Video,
// are Call's regions beside Link, entered after Call's and Media's
// entries and left before Media's and Call's exits (SCXML 1.0 §3.13,
// document order in, its reverse out); In(Connected) in Video tests the
// outer region Link; Down moves Video and Link in one step.
func TestNestedRegions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		events []conference.Event
		want   conference.State
		// acts are the actions of the last event.
		acts []conference.Action
	}{
		{
			name:   "joining enters Call, then Media, then the regions",
			events: []conference.Event{&conference.Up{}},
			want:   conference.Call{Audio: conference.StateMuted, Video: conference.StateCameraOff, Link: conference.StateConnected},
			acts:   []conference.Action{&conference.ShowConnected{}},
		},
		{
			name:   "the camera starts once connected",
			events: []conference.Event{&conference.Up{}, &conference.ToggleCamera{}},
			want:   conference.Call{Audio: conference.StateMuted, Video: conference.StateCameraOn, Link: conference.StateConnected},
			acts:   []conference.Action{&conference.StartCamera{}, &conference.StartTimer{Timer: 1, Delay: time.Hour}},
		},
		{
			name:   "a dropped link stops the camera and reconnects, one step",
			events: []conference.Event{&conference.Up{}, &conference.ToggleCamera{}, &conference.Down{}},
			want:   conference.Call{Audio: conference.StateMuted, Video: conference.StateCameraOff, Link: conference.StateReconnecting},
			acts: []conference.Action{
				&conference.CancelTimer{Timer: 1}, &conference.StopCamera{}, // Video's exit
				&conference.StartTimer{Timer: 2, Delay: 30 * time.Second}, // Link's entry
			},
		},
		{
			name:   "leaving leaves Link, Video, Audio, then Media, then Call",
			events: []conference.Event{&conference.ToggleMic{}, &conference.Up{}, &conference.ToggleCamera{}, &conference.Leave{}},
			want:   conference.Lobby{},
			acts: []conference.Action{
				&conference.CancelTimer{Timer: 1}, &conference.StopCamera{}, &conference.CloseMic{},
				&conference.CloseDevices{}, &conference.LeaveCall{},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, rec := inCall(t)
			for _, ev := range tt.events {
				rec.Actions = nil
				require.NoError(t, m.HandleEvent(ev))
			}
			assert.Equal(t, tt.want, m.State())
			assert.Equal(t, tt.acts, rec.Actions)
		})
	}
}

// TestJoin checks the entries of Join: Call's, Media's, then the
// regions' initial states' (none here), in document order.
func TestJoin(t *testing.T) {
	t.Parallel()
	rec := &conference.Recorder{}
	m, err := conference.New(conference.Config{Handler: rec})
	require.NoError(t, err)
	require.NoError(t, m.HandleEvent(&conference.Join{}))
	assert.Equal(t, []conference.Action{&conference.JoinCall{}, &conference.OpenDevices{}}, rec.Actions)
	assert.Equal(t, conference.Call{Audio: conference.StateMuted, Video: conference.StateCameraOff, Link: conference.StateConnecting}, m.State())
}

// TestCameraRejected checks In(Connected) across the nested and outer
// regions: before the link is up, the camera is refused and nothing
// changes.
func TestCameraRejected(t *testing.T) {
	t.Parallel()
	m, rec := inCall(t)
	err := m.HandleEvent(&conference.ToggleCamera{})
	var rej *conference.RejectedError
	require.ErrorAs(t, err, &rej)
	assert.Empty(t, rec.Actions)
	assert.Equal(t, conference.Call{Audio: conference.StateMuted, Video: conference.StateCameraOff, Link: conference.StateConnecting}, m.State())
}

// TestSaveLoad saves the call with the nested regions' states and a
// timer running, loads it back, and checks that Load and Restore read
// every region strictly.
func TestSaveLoad(t *testing.T) {
	t.Parallel()
	m, _ := inCall(t)
	for _, ev := range []conference.Event{&conference.ToggleMic{}, &conference.Up{}, &conference.ToggleCamera{}} {
		require.NoError(t, m.HandleEvent(ev))
	}
	data, err := m.Save()
	require.NoError(t, err)
	assert.Contains(t, string(data), `"audio":"live","video":"camera_on","link":"connected"`)
	m2, err := conference.Load(conference.Config{Handler: &conference.Recorder{}}, data)
	require.NoError(t, err)
	assert.Equal(t, m.State(), m2.State())

	for _, bad := range []struct{ name, from, to string }{
		{"a nested region missing", `"audio":"live",`, ``},
		{"a nested region in a state of another", `"audio":"live"`, `"audio":"camera_off"`},
		{"an outer region missing", `,"link":"connected"`, ``},
	} {
		_, err := conference.Load(conference.Config{Handler: &conference.Recorder{}}, []byte(strings.Replace(string(data), bad.from, bad.to, 1)))
		assert.Error(t, err, bad.name)
	}
	_, err = conference.Restore(conference.Config{Handler: &conference.Recorder{}}, conference.Call{Audio: conference.StateCameraOn, Video: conference.StateCameraOff, Link: conference.StateConnected})
	require.Error(t, err, "Audio in a state of Video")
	_, err = conference.Restore(conference.Config{Handler: &conference.Recorder{}}, conference.Call{Audio: conference.StateLive, Video: conference.StateCameraOff})
	require.Error(t, err, "Link in no state")
}
