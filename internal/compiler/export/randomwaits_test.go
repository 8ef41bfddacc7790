package export_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// randomWaitCharts is how many random charts TestDifferentialRandomWaits
// runs; FSMGEN_RANDOM_WAIT_CHARTS sets another number (FSMGEN_RANDOM_SEED
// and FSMGEN_RANDOM_DUMP as for TestDifferentialRandom).
const randomWaitCharts = 12

// TestDifferentialRandomWaits runs random charts without parallel states
// whose leaves wait on eventless rows (randomWaitChart) as
// TestDifferentialRandom runs its charts, which always hold a parallel
// state and so never a state that waits. Most of the charts drawn must
// check, and most of those must export to each target.
func TestDifferentialRandomWaits(t *testing.T) {
	differentialRandom(t, randomRun{
		prefix: "waits",
		chart:  randomWaitChart,
		count:  envInt(t, "FSMGEN_RANDOM_WAIT_CHARTS", randomWaitCharts),
		// The checker accepts more than nine charts in ten (see
		// randomWaitChart): the draws leave room for one in three
		// refused.
		draws: func(count int) int { return count + count/2 + 2 },
		// Both targets export every chart so far: the floor is three in
		// four.
		floor: func(checked int) int { return checked * 3 / 4 },
		checked: func(t *testing.T, specs map[string]*generate.Result, keys []string) {
			require.GreaterOrEqual(t, waitingCharts(t, specs, keys), len(keys)/2, "the checker refuses most charts with states that wait")
		},
	})
}

// TestRandomWaitCharts checks, without building or running them, that
// the checker accepts most of randomWaitChart's charts, and that most of
// those have states that wait: what it refuses is left in the log.
func TestRandomWaitCharts(t *testing.T) {
	t.Parallel()
	const draws = 100
	first := envInt(t, "FSMGEN_RANDOM_SEED", 1)
	dir := os.Getenv("FSMGEN_RANDOM_DUMP")
	if dir == "" {
		dir = t.TempDir()
	}
	checked, waiting, refused := 0, 0, map[string]int{}
	for seed := uint64(first); seed < uint64(first)+draws; seed++ {
		src := randomWaitChart(seed)
		path := filepath.Join(dir, fmt.Sprintf("waits%d.yaml", seed))
		require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
		res, err := generate.Load(path)
		require.NoError(t, err, "chart %d:\n%s", seed, src)
		if res.Machine == nil {
			for _, d := range res.Diags {
				if d.Severity == diag.Error {
					refused[d.Rule]++
					if testing.Verbose() {
						t.Logf("chart %d: %s", seed, d)
					}
				}
			}
			continue
		}
		checked++
		if slices.ContainsFunc(res.Machine.States, func(s *fsm.State) bool { return s.Waits }) {
			waiting++
		}
	}
	t.Logf("%d charts drawn, %d checked, %d of those with states that wait; the checker's reasons for the others: %v", draws, checked, waiting, refused)
	require.GreaterOrEqual(t, checked, draws*3/4, "the checker refuses too many charts")
	require.GreaterOrEqual(t, waiting, checked*3/4, "too few charts have states that wait")
}

// waitingCharts returns how many of the charts keys have states that
// wait, and logs it.
func waitingCharts(t *testing.T, specs map[string]*generate.Result, keys []string) int {
	t.Helper()
	waiting := 0
	for _, key := range keys {
		if slices.ContainsFunc(specs[key].Machine.States, func(s *fsm.State) bool { return s.Waits }) {
			waiting++
		}
	}
	t.Logf("%d of %d charts have states that wait", waiting, len(keys))
	return waiting
}
