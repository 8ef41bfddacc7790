package rollout_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/examples/rollout"
)

// TestRollout drives rollouts with the real Checks: Deploying waits on
// its eventless rows, tested after every probe, so the probe that tips
// the count moves the machine in its own HandleEvent.
func TestRollout(t *testing.T) {
	t.Parallel()
	pass, fail := &rollout.Probe{Ok: true}, &rollout.Probe{Ok: false}
	for _, tc := range []struct {
		name    string
		events  []rollout.Event
		want    rollout.State
		actions []rollout.ActionKind
	}{
		{"two passing probes: still deploying",
			[]rollout.Event{&rollout.Deploy{}, pass, pass},
			rollout.Deploying{Healthy: 2},
			[]rollout.ActionKind{rollout.ActionShiftTraffic, rollout.ActionStartTimer}},
		{"the third passing probe promotes",
			[]rollout.Event{&rollout.Deploy{}, pass, fail, pass, pass},
			rollout.Live{},
			[]rollout.ActionKind{rollout.ActionShiftTraffic, rollout.ActionStartTimer, rollout.ActionCancelTimer, rollout.ActionPromoted}},
		{"the second failed probe rolls back",
			[]rollout.Event{&rollout.Deploy{}, fail, pass, fail},
			rollout.RollingBack{},
			[]rollout.ActionKind{rollout.ActionShiftTraffic, rollout.ActionStartTimer, rollout.ActionCancelTimer, rollout.ActionRevert}},
		{"the timer rolls back",
			[]rollout.Event{&rollout.Deploy{}, pass, &rollout.TimerFired{Timer: 1}},
			rollout.RollingBack{},
			[]rollout.ActionKind{rollout.ActionShiftTraffic, rollout.ActionStartTimer, rollout.ActionTimedOut, rollout.ActionRevert}},
		{"reset after a rollback, and deploy again",
			[]rollout.Event{&rollout.Deploy{}, fail, fail, &rollout.Reset{}, &rollout.Deploy{}},
			rollout.Deploying{},
			[]rollout.ActionKind{rollout.ActionShiftTraffic, rollout.ActionStartTimer, rollout.ActionCancelTimer, rollout.ActionRevert, rollout.ActionShiftTraffic, rollout.ActionStartTimer}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &rollout.Recorder{}
			m, err := rollout.New(rollout.Config{Behavior: rollout.Checks{}, Handler: rec})
			require.NoError(t, err)
			for _, ev := range tc.events {
				require.NoError(t, m.HandleEvent(ev))
			}
			assert.Equal(t, tc.want, m.State())
			var kinds []rollout.ActionKind
			for _, a := range rec.Actions {
				kinds = append(kinds, a.Kind())
			}
			assert.Equal(t, tc.actions, kinds)
		})
	}
}
