package export_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/export"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// randomCharts is how many random charts TestDifferentialRandom runs;
// FSMGEN_RANDOM_CHARTS sets another number, FSMGEN_RANDOM_SEED the first
// seed, FSMGEN_RANDOM_DUMP a directory to write the charts to (one
// directory each, as randomN/randomN.yaml), to look at one that fails,
// and FSMGEN_RANDOM_WAITS in how many charts in a hundred to draw states
// that wait (see chartGen.waits).
const randomCharts = 30

// TestDifferentialRandom draws random statecharts (randomChart: parallel
// states with composite and final states in their regions, parallel
// states nested as regions with their lists, rules and timers, done
// transitions, histories, guard chains that fall back, In() guards,
// timers, and in one chart in two top-level states that wait on eventless
// rows: the initial state, the targets of done transitions, others; see
// randomparwaits_test.go), keeps those the checker accepts, and runs each in XState and
// SCION as TestDifferential runs the repository's charts: on every
// witness path and on random walks, every step must end in the same
// leaves with the same exits, entries, guards, actions and timers. A
// chart a target refuses to export is left out of that target only.
func TestDifferentialRandom(t *testing.T) {
	differentialRandom(t, randomRun{
		prefix: "random",
		chart:  randomChart,
		count:  envInt(t, "FSMGEN_RANDOM_CHARTS", randomCharts),
		draws:  func(count int) int { return 40 * count },
		// A floor against a generator that draws mostly what the
		// target refuses: SCXML exports about a third of the random
		// charts (it refuses a parallel state's rule beside a region's
		// that SCXML would run too, and deep histories that may
		// remember a final state, which SCION does not record), XState
		// nearly all; an eighth leaves room for a seed's bad luck.
		floor: func(checked int) int { return checked / 8 },
		checked: func(t *testing.T, specs map[string]*generate.Result, keys []string) {
			// chartGen.waits draws them in one chart in two; the checker
			// refuses some of those, as it does the others.
			if waiting := waitingCharts(t, specs, keys); waitsChance > 0 && len(keys) >= 10 {
				require.Positive(t, waiting, "no chart with states that wait was accepted")
			}
			// chartGen.doneLeaving draws them in the few charts whose
			// shape allows one: counted, not required.
			doneLeavingCharts(t, specs, keys)
			// chartGen.entering draws them in few charts: counted.
			groupEnteringCharts(t, specs, keys)
			// chartGen.leaving draws them in few charts: counted.
			groupLeavingCharts(t, specs, keys)
			// chartGen.leaving draws them in few charts: counted.
			hostLeavingCharts(t, specs, keys)
			// chartGen.regionWaits draws them in one parallel state in
			// two; the checker refuses some of those.
			if n := regionWaitCharts(t, specs, keys); len(keys) >= 10 {
				require.Positive(t, n, "no chart with states that wait inside regions was accepted")
			}
			// chartGen.parallelWaits draws them in one parallel state in
			// four; the checker refuses some of those.
			if n := parallelWaitCharts(t, specs, keys); parallelWaitsChance > 0 && len(keys) >= 10 {
				require.Positive(t, n, "no chart with a parallel state that waits was accepted")
			}
		},
	})
}

// randomRun is a run of the differential test on random charts.
type randomRun struct {
	prefix string                   // of the charts' keys: prefix + seed
	chart  func(seed uint64) string // draws the chart of a seed, as a spec
	count  int                      // how many charts the checker accepts to run
	draws  func(count int) int      // how many charts to draw at most to find them
	floor  func(checked int) int    // how many of them each target must export
	// checked, when set, looks at the charts the checker accepted before
	// they run.
	checked func(t *testing.T, specs map[string]*generate.Result, keys []string)
}

// differentialRandom draws random charts with run.chart from the seed
// FSMGEN_RANDOM_SEED (1) on, keeps the first run.count the checker
// accepts (it fails when more than run.draws of them are drawn to find
// those), and runs them as TestDifferential runs the repository's charts,
// each target the charts it exports (at least run.floor of them).
func differentialRandom(t *testing.T, run randomRun) {
	if testing.Short() {
		t.Skip("-short: builds every generated machine and runs node")
	}
	t.Parallel()
	count, first := run.count, envInt(t, "FSMGEN_RANDOM_SEED", 1)
	dir := os.Getenv("FSMGEN_RANDOM_DUMP")
	if dir == "" {
		dir = t.TempDir()
	}
	paths, sources := map[string]string{}, map[string]string{}
	drawn, refused := 0, map[string]int{}
	for seed := uint64(first); len(paths) < count && drawn < run.draws(count); seed++ {
		drawn++
		src := run.chart(seed)
		key := fmt.Sprintf("%s%d", run.prefix, seed)
		path := filepath.Join(dir, key, key+".yaml")
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
		res, err := generate.Load(path)
		require.NoError(t, err, "chart %d:\n%s", seed, src)
		if res.Machine == nil {
			for _, d := range res.Diags {
				if d.Severity == diag.Error {
					refused[d.Rule]++
				}
			}
			continue
		}
		paths[key], sources[key] = path, src
	}
	t.Logf("%d charts drawn, %d checked; the checker's reasons for the others: %v", drawn, len(paths), refused)
	require.Len(t, paths, count, "the checker accepts too few random charts: the generator draws what it refuses")
	specs, keys, walks, goResults := goSide(t, paths)
	if run.checked != nil {
		run.checked(t, specs, keys)
	}
	for _, tg := range exportTargets(t) {
		t.Run(string(tg.format), func(t *testing.T) {
			var exported []string
			reasons := map[string]int{}
			for _, key := range keys {
				out, diags, err := export.Export(specs[key].Machine, tg.format)
				require.NoError(t, err)
				if out == nil {
					for _, d := range diags {
						if d.Severity == diag.Error {
							reasons[d.Rule]++
						}
					}
					continue
				}
				exported = append(exported, key)
			}
			t.Logf("%d of %d charts exported; refused: %v", len(exported), len(keys), reasons)
			require.GreaterOrEqual(t, len(exported), run.floor(len(keys)), "the export refuses most random charts")
			if len(exported) == 0 {
				return // a run of one to three charts, none of which this target exports
			}
			w, g := walksFor(exported, walks, goResults)
			compareTarget(t, tg, specs, exported, w, g)
			if t.Failed() {
				for _, key := range exported {
					t.Logf("%s:\n%s", key, sources[key])
				}
			}
		})
	}
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var n int
	_, err := fmt.Sscan(v, &n)
	require.NoError(t, err, "%s=%q is not a number", name, v)
	return n
}
