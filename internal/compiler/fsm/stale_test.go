package fsm_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStaleTimerTestsNothing checks that no witness path tests a guard on
// a TimerFired of no running timer: the generated code drops it before
// any rule, so the regions' states that wait are not tested after it as
// after a rule that keeps their parallel state.
func TestStaleTimerTestsNothing(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("testdata/witness/stale_waits.yaml")
	require.NoError(t, err)
	m, paths := witnessPaths(t, "stale_waits.yaml", src)
	require.NotEmpty(t, paths)
	stale := 0
	for label, p := range paths {
		for i, w := range p.Steps {
			if w.Event == m.TimerFired && w.Timer == nil {
				stale++
				assert.Empty(t, w.Tests, "%s: step %d, a TimerFired of no running timer", label, i+1)
			}
		}
	}
	t.Logf("%d steps of the paths send a TimerFired of no running timer", stale)
}
