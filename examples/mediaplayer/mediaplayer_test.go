package mediaplayer_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/examples/mediaplayer"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// on returns a machine switched on, with its Recorder emptied.
func on(t *testing.T) (*mediaplayer.Machine, *mediaplayer.Recorder) {
	t.Helper()
	rec := &mediaplayer.Recorder{}
	m, err := mediaplayer.New(mediaplayer.Config{Behavior: mediaplayer.Levels{}, Handler: rec})
	require.NoError(t, err)
	require.NoError(t, m.HandleEvent(&mediaplayer.Power{}))
	rec.Actions = nil
	return m, rec
}

// TestRegionsAreIndependent plays, mutes and connects: each event moves
// its own region and leaves the others where they are.
func TestRegionsAreIndependent(t *testing.T) {
	t.Parallel()
	m, rec := on(t)
	want := mediaplayer.On{Playback: mediaplayer.StateStopped, Volume: mediaplayer.StateNormal, Network: mediaplayer.StateOffline}
	require.Equal(t, want, m.State())
	for _, step := range []struct {
		ev   mediaplayer.Event
		want mediaplayer.On
		acts []mediaplayer.Action
	}{
		{&mediaplayer.Play{}, mediaplayer.On{Playback: mediaplayer.StatePlaying, Volume: mediaplayer.StateNormal, Network: mediaplayer.StateOffline}, []mediaplayer.Action{&mediaplayer.StartAudio{}}},
		{&mediaplayer.Mute{}, mediaplayer.On{Playback: mediaplayer.StatePlaying, Volume: mediaplayer.StateMuted, Network: mediaplayer.StateOffline}, []mediaplayer.Action{&mediaplayer.MuteAudio{}}},
		{&mediaplayer.Connected{}, mediaplayer.On{Playback: mediaplayer.StatePlaying, Volume: mediaplayer.StateMuted, Network: mediaplayer.StateOnline}, []mediaplayer.Action{&mediaplayer.OpenSocket{}}},
		// Play in Playing: Playback has no rule, so On ignores it.
		{&mediaplayer.Play{}, mediaplayer.On{Playback: mediaplayer.StatePlaying, Volume: mediaplayer.StateMuted, Network: mediaplayer.StateOnline}, nil},
	} {
		rec.Actions = nil
		require.NoError(t, m.HandleEvent(step.ev))
		assert.Equal(t, step.want, m.State(), "%T", step.ev)
		assert.Equal(t, step.acts, rec.Actions, "%T", step.ev)
	}
}

// TestInGuard streams only while the network region is Online: In(Online)
// is a guard on the state of another region.
func TestInGuard(t *testing.T) {
	t.Parallel()
	m, rec := on(t)
	err := m.HandleEvent(&mediaplayer.Stream{})
	require.ErrorIs(t, err, fsmrt.ErrRejected)
	assert.Contains(t, err.Error(), "the network is offline")
	assert.Equal(t, mediaplayer.StateStopped, m.State().(mediaplayer.On).Playback, "a rejected event changes nothing")

	require.NoError(t, m.HandleEvent(&mediaplayer.Connected{}))
	rec.Actions = nil
	require.NoError(t, m.HandleEvent(&mediaplayer.Stream{}))
	assert.Equal(t, mediaplayer.StatePlaying, m.State().(mediaplayer.On).Playback)
	assert.Equal(t, []mediaplayer.Action{&mediaplayer.OpenStream{}, &mediaplayer.StartAudio{}}, rec.Actions)
}

// TestOneEventSeveralRegions sends Reset, which Playback and Volume both
// take, as one step in SCXML's order (SCXML 1.0 §3.13): the exits of both
// rules in reverse document order (Volume's UnmuteAudio before Playback's
// StopAudio), then their actions and entries in document order, Volume's
// setting the level back to 0; the observer sees both rules, each from
// and to the parallel state.
func TestOneEventSeveralRegions(t *testing.T) {
	t.Parallel()
	m, rec := on(t)
	require.NoError(t, m.HandleEvent(&mediaplayer.Play{}))
	require.NoError(t, m.HandleEvent(&mediaplayer.VolumeUp{}))
	require.NoError(t, m.HandleEvent(&mediaplayer.Mute{}))
	require.Equal(t, 1, m.State().(mediaplayer.On).Level)
	rec.Actions = nil
	var steps []mediaplayer.Step
	m.SetObserver(func(s mediaplayer.Step) { steps = append(steps, s) })
	require.NoError(t, m.HandleEvent(&mediaplayer.Reset{}))
	assert.Equal(t, []mediaplayer.Action{&mediaplayer.UnmuteAudio{}, &mediaplayer.StopAudio{}}, rec.Actions)
	assert.Equal(t, mediaplayer.On{Playback: mediaplayer.StateStopped, Volume: mediaplayer.StateNormal, Network: mediaplayer.StateOffline}, m.State())
	require.Len(t, steps, 2)
	rules := mediaplayer.Rules()
	assert.Equal(t, "Playback --Reset--> Stopped", rules[steps[0].Rule].Label)
	assert.Equal(t, "Volume --Reset--> Normal {level=0}", rules[steps[1].Rule].Label)
	for _, s := range steps {
		assert.Equal(t, mediaplayer.StateOn, s.From)
		assert.Equal(t, mediaplayer.StateOn, s.To)
	}
}

// TestPowerOffLeavesEveryRegion switches the player off while it plays
// muted and online: every region is left, in reverse document order, each
// innermost first, before On itself.
func TestPowerOffLeavesEveryRegion(t *testing.T) {
	t.Parallel()
	m, rec := on(t)
	for _, ev := range []mediaplayer.Event{&mediaplayer.Play{}, &mediaplayer.Mute{}, &mediaplayer.Connected{}} {
		require.NoError(t, m.HandleEvent(ev))
	}
	rec.Actions = nil
	require.NoError(t, m.HandleEvent(&mediaplayer.Power{}))
	assert.Equal(t, mediaplayer.StateOff, m.Kind())
	assert.Equal(t, []mediaplayer.Action{&mediaplayer.CloseSocket{}, &mediaplayer.UnmuteAudio{}, &mediaplayer.StopAudio{}, &mediaplayer.PowerOff{}}, rec.Actions)

	// On again: every region starts in its initial state.
	require.NoError(t, m.HandleEvent(&mediaplayer.Power{}))
	assert.Equal(t, mediaplayer.On{Playback: mediaplayer.StateStopped, Volume: mediaplayer.StateNormal, Network: mediaplayer.StateOffline}, m.State())
}

// TestSaveLoad saves the machine with its regions' states and loads it in
// a new machine; Load refuses a region in a state that is not its own.
func TestSaveLoad(t *testing.T) {
	t.Parallel()
	m, _ := on(t)
	require.NoError(t, m.HandleEvent(&mediaplayer.Play{}))
	require.NoError(t, m.HandleEvent(&mediaplayer.Connected{}))
	require.NoError(t, m.HandleEvent(&mediaplayer.VolumeUp{}))
	data, err := m.Save()
	require.NoError(t, err)
	assert.Contains(t, string(data), `"state":{"kind":"on","level":1,"playback":"playing","volume":"normal","network":"online"}`)

	m2, err := mediaplayer.Load(mediaplayer.Config{Behavior: mediaplayer.Levels{}, Handler: &mediaplayer.Recorder{}}, data)
	require.NoError(t, err)
	assert.Equal(t, m.State(), m2.State())

	for _, bad := range []struct{ from, to, want string }{
		{`"volume":"normal"`, `"volume":"playing"`, "region Volume is in Playing"},
		{`"volume":"normal"`, `"volume":"loud"`, `unknown state "loud"`},
		{`"volume":"normal",`, ``, "region Volume is in no state, not one of Normal and Muted"},
	} {
		_, err := mediaplayer.Load(mediaplayer.Config{Behavior: mediaplayer.Levels{}, Handler: &mediaplayer.Recorder{}}, []byte(replace(string(data), bad.from, bad.to)))
		require.Error(t, err, bad.to)
		assert.Contains(t, err.Error(), bad.want)
	}
}

// TestVolumeLevel raises and lowers On's field level with the rules of
// region Volume: their effects read it and set it, up to 10 and down to
// 0; VolumeUp unmutes one step louder, and VolumeDown is ignored muted.
func TestVolumeLevel(t *testing.T) {
	t.Parallel()
	m, rec := on(t)
	level := func() int { return m.State().(mediaplayer.On).Level }
	for range 12 {
		require.NoError(t, m.HandleEvent(&mediaplayer.VolumeUp{}))
	}
	assert.Equal(t, 10, level())
	require.NoError(t, m.HandleEvent(&mediaplayer.VolumeDown{}))
	assert.Equal(t, 9, level())
	require.NoError(t, m.HandleEvent(&mediaplayer.Mute{}))
	require.NoError(t, m.HandleEvent(&mediaplayer.VolumeDown{}))
	assert.Equal(t, 9, level(), "ignored while muted")
	rec.Actions = nil
	require.NoError(t, m.HandleEvent(&mediaplayer.VolumeUp{}))
	assert.Equal(t, mediaplayer.On{Level: 10, Playback: mediaplayer.StateStopped, Volume: mediaplayer.StateNormal, Network: mediaplayer.StateOffline}, m.State())
	assert.Equal(t, []mediaplayer.Action{&mediaplayer.UnmuteAudio{}}, rec.Actions)
}

// replace replaces the first from in s with to.
func replace(s, from, to string) string { return strings.Replace(s, from, to, 1) }
