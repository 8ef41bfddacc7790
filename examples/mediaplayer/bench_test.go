package mediaplayer_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/examples/mediaplayer"
	"github.com/fsmgen/fsmgen/examples/mediaplayer/internal/flat"
)

// discard and flatDiscard are Handlers that perform no action, so that a
// benchmark measures the machine alone.
type (
	discard     struct{}
	flatDiscard struct{}
)

// The methods of discard and flatDiscard do nothing.
func (discard) PowerOn()     {}
func (discard) PowerOff()    {}
func (discard) StartAudio()  {}
func (discard) StopAudio()   {}
func (discard) MuteAudio()   {}
func (discard) UnmuteAudio() {}
func (discard) OpenSocket()  {}
func (discard) CloseSocket() {}
func (discard) OpenStream()  {}
func (discard) ShowSpinner() {}
func (discard) StartTimer(mediaplayer.TimerID, time.Duration) time.Time {
	return time.Time{}
}
func (discard) CancelTimer(mediaplayer.TimerID) {}
func (flatDiscard) PowerOn()                    {}
func (flatDiscard) PowerOff()                   {}
func (flatDiscard) StartAudio()                 {}
func (flatDiscard) StopAudio()                  {}
func (flatDiscard) MuteAudio()                  {}
func (flatDiscard) UnmuteAudio()                {}
func (flatDiscard) StartTimer(flat.TimerID, time.Duration) time.Time {
	return time.Time{}
}
func (flatDiscard) CancelTimer(flat.TimerID) {}

// dispatchCases are pairs of events, each pair taking the same two rules
// (with the same entry and exit actions) in the parallel machine, where a
// region takes them, and in the flat machine of package flat, and leaving
// both machines where they were.
var dispatchCases = []struct {
	name     string
	parallel mediaplayer.On // the regions' states; the flat machine starts in flatFrom
	flatFrom flat.State
	evs      []mediaplayer.Event
	flatEvs  []flat.Event
}{
	{
		name:     "Mute, Mute (Volume, 2nd region)",
		parallel: mediaplayer.On{Playback: mediaplayer.StateStopped, Volume: mediaplayer.StateNormal, Network: mediaplayer.StateOffline},
		flatFrom: flat.Normal{},
		evs:      []mediaplayer.Event{&mediaplayer.Mute{}, &mediaplayer.Mute{}},
		flatEvs:  []flat.Event{&flat.Mute{}, &flat.Mute{}},
	},
	{
		name:     "Play, Pause (Playback, 1st region)",
		parallel: mediaplayer.On{Playback: mediaplayer.StatePaused, Volume: mediaplayer.StateNormal, Network: mediaplayer.StateOffline},
		flatFrom: flat.Paused{},
		evs:      []mediaplayer.Event{&mediaplayer.Play{}, &mediaplayer.Pause{}},
		flatEvs:  []flat.Event{&flat.Play{}, &flat.Pause{}},
	},
	{
		name:     "Pause, Pause (ignored by On, no region takes it)",
		parallel: mediaplayer.On{Playback: mediaplayer.StatePaused, Volume: mediaplayer.StateNormal, Network: mediaplayer.StateOffline},
		flatFrom: flat.Paused{},
		evs:      []mediaplayer.Event{&mediaplayer.Pause{}, &mediaplayer.Pause{}},
		flatEvs:  []flat.Event{&flat.Pause{}, &flat.Pause{}},
	},
	{
		name:     "Mute, Reset (Reset in 2 regions)",
		parallel: mediaplayer.On{Playback: mediaplayer.StateStopped, Volume: mediaplayer.StateNormal, Network: mediaplayer.StateOffline},
		flatFrom: flat.Normal{},
		evs:      []mediaplayer.Event{&mediaplayer.Mute{}, &mediaplayer.Reset{}},
		flatEvs:  []flat.Event{&flat.Mute{}, &flat.Reset{}},
	},
}

// BenchmarkDispatch compares each pair of events in the parallel machine
// (docs/performance.md, "Parallel states") with the same pair in the flat
// one: the op is the pair, two events.
func BenchmarkDispatch(b *testing.B) {
	for _, bc := range dispatchCases {
		b.Run("parallel/"+bc.name, func(b *testing.B) {
			m, err := mediaplayer.Restore(mediaplayer.Config{Behavior: mediaplayer.Levels{}, Handler: discard{}}, bc.parallel)
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				for _, ev := range bc.evs {
					if err := m.HandleEvent(ev); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run("flat/"+bc.name, func(b *testing.B) {
			m, err := flat.Restore(flat.Config{Handler: flatDiscard{}}, bc.flatFrom)
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				for _, ev := range bc.flatEvs {
					if err := m.HandleEvent(ev); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// TestDispatchCases checks what the benchmark relies on: each pair takes
// rules in both machines, leaves each where it was, and allocates nothing.
// (Not parallel: testing.AllocsPerRun refuses parallel tests.)
func TestDispatchCases(t *testing.T) {
	for _, tc := range dispatchCases {
		m, err := mediaplayer.Restore(mediaplayer.Config{Behavior: mediaplayer.Levels{}, Handler: discard{}}, tc.parallel)
		require.NoError(t, err)
		f, err := flat.Restore(flat.Config{Handler: flatDiscard{}}, tc.flatFrom)
		require.NoError(t, err)
		var steps, flatSteps int
		m.SetObserver(func(mediaplayer.Step) { steps++ })
		f.SetObserver(func(flat.Step) { flatSteps++ })
		allocs := testing.AllocsPerRun(10, func() {
			for _, ev := range tc.evs {
				require.NoError(t, m.HandleEvent(ev))
			}
			for _, ev := range tc.flatEvs {
				require.NoError(t, f.HandleEvent(ev))
			}
		})
		require.Zero(t, allocs, tc.name)
		require.Equal(t, tc.parallel, m.State(), tc.name)
		require.Equal(t, tc.flatFrom, f.State(), tc.name)
		require.Positive(t, steps, tc.name)
		require.Positive(t, flatSteps, tc.name)
	}
}
