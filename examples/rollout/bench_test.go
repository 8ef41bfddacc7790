package rollout_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/examples/rollout"
	"github.com/fsmgen/fsmgen/examples/rollout/internal/eager"
)

// still is a Behavior of both machines whose probes count nothing, so
// that a benchmark's machine stays where it is: every guard is false.
type still struct{}

func (still) EnoughHealthy(int) bool                       { return false }
func (still) TooManyFailed(int) bool                       { return false }
func (still) Count(healthy, failed int, _ bool) (int, int) { return healthy, failed }

// discard is a Handler of both machines that performs nothing.
type discard struct{}

func (discard) ShiftTraffic() {}
func (discard) Revert()       {}
func (discard) TimedOut()     {}
func (discard) Promoted()     {}
func (discard) StartTimer(rollout.TimerID, time.Duration) time.Time {
	return time.Time{}
}
func (discard) CancelTimer(rollout.TimerID) {}

// eagerDiscard is discard for package eager's timer ids.
type eagerDiscard struct{ discard }

func (eagerDiscard) StartTimer(eager.TimerID, time.Duration) time.Time { return time.Time{} }
func (eagerDiscard) CancelTimer(eager.TimerID)                         {}

// BenchmarkProbe sends a probe that moves nothing to a machine deploying:
// rollout's Deploying, which waits (the rule without a target, then its
// eventless rows), against eager's, where the probe leads into a
// transient state that tests the guards and back (docs/performance.md).
func BenchmarkProbe(b *testing.B) {
	probe, eagerProbe := &rollout.Probe{Ok: true}, &eager.Probe{Ok: true}
	b.Run("waits", func(b *testing.B) {
		m, err := rollout.New(rollout.Config{Behavior: still{}, Handler: discard{}})
		require.NoError(b, err)
		require.NoError(b, m.HandleEvent(&rollout.Deploy{}))
		b.ReportAllocs()
		for b.Loop() {
			if err := m.HandleEvent(probe); err != nil {
				b.Fatal(err)
			}
		}
		require.Equal(b, rollout.StateDeploying, m.Kind())
	})
	b.Run("transient", func(b *testing.B) {
		m, err := eager.New(eager.Config{Behavior: still{}, Handler: eagerDiscard{}})
		require.NoError(b, err)
		require.NoError(b, m.HandleEvent(&eager.Deploy{}))
		b.ReportAllocs()
		for b.Loop() {
			if err := m.HandleEvent(eagerProbe); err != nil {
				b.Fatal(err)
			}
		}
		require.Equal(b, eager.StateCounted, m.Kind())
	})
}
