package mediaplayer_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/examples/mediaplayer"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// t0 is when the tests' machines start their first timer.
var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// twoTimedRegions returns a machine whose Playback region is Paused (its
// timer started at t0) and whose Network region is Buffering (its two
// timers started a minute later), with its Recorder emptied.
func twoTimedRegions(t *testing.T) (*mediaplayer.Machine, *mediaplayer.Recorder) {
	t.Helper()
	rec := &mediaplayer.Recorder{Now: t0}
	m, err := mediaplayer.New(mediaplayer.Config{Behavior: mediaplayer.Levels{}, Handler: rec})
	require.NoError(t, err)
	for _, ev := range []mediaplayer.Event{&mediaplayer.Power{}, &mediaplayer.Play{}, &mediaplayer.Pause{}} {
		require.NoError(t, m.HandleEvent(ev))
	}
	rec.Now = t0.Add(time.Minute)
	for _, ev := range []mediaplayer.Event{&mediaplayer.Connected{}, &mediaplayer.Stall{}} {
		require.NoError(t, m.HandleEvent(ev))
	}
	require.Equal(t, mediaplayer.On{Playback: mediaplayer.StatePaused, Volume: mediaplayer.StateNormal, Network: mediaplayer.StateBuffering}, m.State())
	rec.Actions = nil
	return m, rec
}

// savedTimer is a running timer as Save writes it.
type savedTimer struct {
	State    string    `json:"state"`
	Timer    string    `json:"timer,omitempty"`
	ID       uint64    `json:"id"`
	Delay    string    `json:"delay"`
	Deadline time.Time `json:"deadline"`
}

// TestRegionTimersSaveLoad saves a machine with timers running in two
// regions: Save writes each with its state and absolute deadline, and
// Load puts each back as it was, so that they fire in their regions as
// they would have.
func TestRegionTimersSaveLoad(t *testing.T) {
	t.Parallel()
	m, _ := twoTimedRegions(t)
	data, err := m.Save()
	require.NoError(t, err)
	var saved struct {
		Timers    []savedTimer `json:"timers"`
		LastTimer uint64       `json:"last_timer"`
	}
	require.NoError(t, json.Unmarshal(data, &saved))
	assert.Equal(t, []savedTimer{
		{State: "paused", ID: 1, Delay: "10m0s", Deadline: t0.Add(10 * time.Minute)},
		{State: "buffering", ID: 2, Delay: "30s", Deadline: t0.Add(time.Minute + 30*time.Second)},
		{State: "buffering", Timer: "spinner", ID: 3, Delay: "2s", Deadline: t0.Add(time.Minute + 2*time.Second)},
	}, saved.Timers)
	assert.Equal(t, uint64(3), saved.LastTimer)

	rec := &mediaplayer.Recorder{}
	loaded, err := mediaplayer.Load(mediaplayer.Config{Behavior: mediaplayer.Levels{}, Handler: rec}, data)
	require.NoError(t, err)
	assert.Empty(t, rec.Actions, "Load hands out no action")
	assert.Equal(t, m.State(), loaded.State())
	assert.Equal(t, m.Timers(), loaded.Timers())
	for _, st := range saved.Timers {
		assert.True(t, loaded.Deadline(mediaplayer.TimerID(st.ID)).Equal(st.Deadline), "timer %d", st.ID)
	}
	again, err := loaded.Save()
	require.NoError(t, err)
	assert.JSONEq(t, string(data), string(again))

	// The loaded timers fire in their regions: the spinner keeps Buffering,
	// the 30 s timer gives up (nothing to cancel: the spinner is spent), and
	// the pause stops playback.
	for _, step := range []struct {
		id    mediaplayer.TimerID
		state mediaplayer.On
		acts  []mediaplayer.Action
	}{
		{3, mediaplayer.On{Playback: mediaplayer.StatePaused, Volume: mediaplayer.StateNormal, Network: mediaplayer.StateBuffering}, []mediaplayer.Action{&mediaplayer.ShowSpinner{}}},
		{2, mediaplayer.On{Playback: mediaplayer.StatePaused, Volume: mediaplayer.StateNormal, Network: mediaplayer.StateOffline}, nil},
		{1, mediaplayer.On{Playback: mediaplayer.StateStopped, Volume: mediaplayer.StateNormal, Network: mediaplayer.StateOffline}, nil},
		{2, mediaplayer.On{Playback: mediaplayer.StateStopped, Volume: mediaplayer.StateNormal, Network: mediaplayer.StateOffline}, nil}, // fired already: ignored
	} {
		rec.Actions = nil
		deadline := loaded.Deadline(step.id)
		require.NoError(t, loaded.HandleEvent(&mediaplayer.TimerFired{Timer: step.id, Deadline: deadline, Now: deadline}))
		assert.Equal(t, step.state, loaded.State(), "timer %d", step.id)
		assert.Equal(t, step.acts, rec.Actions, "timer %d", step.id)
	}
	assert.Empty(t, loaded.Timers())
}

// TestRegionTimersPowerOff switches the player off with timers running in
// two regions: leaving On cancels them, each state's before its exit,
// regions in reverse document order.
func TestRegionTimersPowerOff(t *testing.T) {
	t.Parallel()
	m, rec := twoTimedRegions(t)
	require.NoError(t, m.HandleEvent(&mediaplayer.Power{}))
	assert.Equal(t, []mediaplayer.Action{
		&mediaplayer.CancelTimer{Timer: 2}, &mediaplayer.CancelTimer{Timer: 3}, &mediaplayer.CloseSocket{},
		&mediaplayer.CancelTimer{Timer: 1}, &mediaplayer.PowerOff{},
	}, rec.Actions)
	assert.Empty(t, m.Timers())
}

// TestRegionTimersLoadStrictly loads saved data whose timers do not match
// the regions' states, and re-arms timers saved with another delay.
func TestRegionTimersLoadStrictly(t *testing.T) {
	t.Parallel()
	m, _ := twoTimedRegions(t)
	data, err := m.Save()
	require.NoError(t, err)
	cfg := mediaplayer.Config{Behavior: mediaplayer.Levels{}, Handler: &mediaplayer.Recorder{}}

	_, err = mediaplayer.Load(cfg, []byte(replace(string(data), `"network":"buffering"`, `"network":"online"`)))
	require.ErrorIs(t, err, fsmrt.ErrTimerNotRunning)
	assert.Contains(t, err.Error(), `timer 2 of state "buffering" runs, but region Network of On is in Online`)
	_, err = mediaplayer.Load(cfg, []byte(replace(string(data), `"playback":"paused"`, `"playback":"stopped"`)))
	require.ErrorIs(t, err, fsmrt.ErrTimerNotRunning)
	assert.Contains(t, err.Error(), `timer 1 of state "paused" runs, but region Playback of On is in Stopped`)
	_, err = mediaplayer.Load(cfg, []byte(replace(string(data), `"timer":"spinner"`, `"timer":"nope"`)))
	require.Error(t, err, "a timer the state does not have")

	// Saved when Buffering gave up after a minute: Load keeps the saved
	// deadline; LoadWith with Rearm moves it to the start plus 30 s.
	older := []byte(replace(string(data), `"delay":"30s"`, `"delay":"1m0s"`))
	kept, err := mediaplayer.Load(cfg, older)
	require.NoError(t, err)
	assert.True(t, kept.Deadline(2).Equal(t0.Add(time.Minute+30*time.Second)))
	rearmed, err := mediaplayer.LoadWith(cfg, older, mediaplayer.LoadOptions{Rearm: true})
	require.NoError(t, err)
	assert.True(t, rearmed.Deadline(2).Equal(t0.Add(time.Minute)), "started at t0+30s by the saved delay, re-armed for 30s: %s", rearmed.Deadline(2))
	assert.True(t, rearmed.Deadline(1).Equal(t0.Add(10*time.Minute)), "Paused's timer keeps its delay")
}
