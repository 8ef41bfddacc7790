package fsm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStaleTimerKeepsNothing checks that a TimerFired of no running timer
// in a parallel state whose regions wait tests nothing, as the generated
// code, which drops it before any rule; a rule that keeps the parallel
// state (its ignore of an event, say) tests the regions' eventless rules
// (chart stale_waits: S5's regions wait in S11 and S17, and S5 ignores
// every event it has no rule for).
func TestStaleTimerKeepsNothing(t *testing.T) {
	t.Parallel()
	m := builtFile(t, "testdata/witness/stale_waits.yaml")
	require.NotNil(t, m.Stale)
	s5 := machineState(t, m, "S5")
	var ignore *Rule
	for _, r := range m.Rules {
		if r.From == s5 && r.Kind == Ignore && r.Event != nil && r.Event.Name == "Go" {
			ignore = r
		}
	}
	require.NotNil(t, ignore, "S5 ignores Go")
	cfg := initialConfig(m)
	tests := []struct {
		name  string
		way   *Way
		keeps bool
	}{
		{"a TimerFired of no running timer", &Way{From: s5, Event: m.TimerFired, Rules: []*Rule{m.Stale}, To: s5, Config: cfg}, false},
		{"S5 ignores Go", &Way{From: s5, Event: ignore.Event, Rules: []*Rule{ignore}, To: s5, Config: cfg}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.keeps, m.keepsWaiting(tc.way))
			settled := m.settleKept(regionWay{way: tc.way, after: cfg})
			if !tc.keeps {
				require.Len(t, settled, 1)
				assert.Same(t, tc.way, settled[0].way, "the way goes on through no rule")
				return
			}
			assert.Greater(t, len(settled), 1, "one way per branch of S11's guards")
		})
	}
}
