package fsm_test

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// TestReenteredRegionsSettle checks that a step whose parallel state's
// done transition leads, through a state that waits outside, into the
// parallel state again goes on through the eventless rules of the regions
// it entered anew, on the witness paths and the ways TestRules takes: in
// chart stale_waits, S5's done leads to S21, whose [g11] enters S5, where
// S11 waits on g12 and g13.
func TestReenteredRegionsSettle(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("testdata/witness/stale_waits.yaml")
	require.NoError(t, err)
	m, paths := witnessPaths(t, "stale_waits.yaml", src)
	const back = "S21 -- [g11]--> S5"
	// afterBack returns the guards way w tests after S21's [g11], and
	// whether it takes that rule after S5's done transition.
	afterBack := func(w *fsm.Way) ([]string, bool) {
		i := slices.IndexFunc(w.Rules, func(r *fsm.Rule) bool { return r.Label == back })
		if i < 1 || w.Rules[i-1].Done == nil {
			return nil, false
		}
		j := slices.IndexFunc(w.Tests, func(tt fsm.Test) bool { return tt.Guard.Name == "g11" && tt.Holds })
		require.GreaterOrEqual(t, j, 0, "%s tests g11", labels(w))
		var out []string
		for _, tt := range w.Tests[j+1:] {
			out = append(out, tt.Guard.Name)
		}
		return out, true
	}
	var ways []*fsm.Way
	for _, p := range paths {
		ways = append(ways, p.Steps...)
	}
	ways = append(ways, m.Ways...)
	reentered := 0
	for _, w := range ways {
		tests, ok := afterBack(w)
		if !ok {
			continue
		}
		reentered++
		assert.Contains(t, tests, "g12", "%s: S11's eventless rules are tested once S5 is entered anew", labels(w))
	}
	assert.Positive(t, reentered, "some way enters S5 anew by S21's [g11] after S5's done")
}

// TestReenterThroughHistoryEnds checks that the search of paths ends on a
// chart whose parallel state's done transition leads, through a state that
// waits, into another parallel state's deep history (reenter_history):
// it reports the chart's rules that can never fire.
func TestReenterThroughHistoryEnds(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("testdata/witness/reenter_history.yaml")
	require.NoError(t, err)
	_, diags := fsm.Build(parsed(t, "reenter_history.yaml", src), fsm.Env{})
	assert.Contains(t, fmt.Sprint(diags), "rule S8 --Poke [In(S5)]--> S1 can never fire")
}
