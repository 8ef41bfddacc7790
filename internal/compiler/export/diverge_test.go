package export_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/export"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// TestRefusalsDiverge shows that what the export refuses in parallel
// states, and a deep history that remembers a final state, would run
// otherwise in the target: each chart of
// testdata/refused holds one construct a target refuses; written whatever
// the export refuses (export.Unchecked) and replayed in that target on
// the Go machine's walks, some step must end with other leaves or other
// actions than the Go machine's. Where a target does export the chart, it
// must agree on every step, as in TestDifferential.
func TestRefusalsDiverge(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the generated machines and runs node")
	}
	t.Parallel()
	charts, err := filepath.Glob("testdata/refused/*/*.yaml")
	require.NoError(t, err)
	require.Len(t, charts, 32, "the refused charts")
	paths := map[string]string{}
	for _, p := range charts {
		paths[specKey(p)] = p
	}
	specs, keys, walks, goResults := goSide(t, paths)
	for _, tg := range exportTargets(t) {
		t.Run(string(tg.format), func(t *testing.T) {
			var refused, exported []string
			for _, key := range keys {
				out, diags, err := export.Export(specs[key].Machine, tg.format)
				require.NoError(t, err)
				if out == nil {
					require.True(t, diags.HasErrors())
					refused = append(refused, key)
				} else {
					exported = append(exported, key)
				}
			}
			if len(exported) > 0 {
				w, g := walksFor(exported, walks, goResults)
				compareTarget(t, tg, specs, exported, w, g)
			}
			w, g := walksFor(refused, walks, goResults)
			unchecked := func(_ string, m *fsm.Machine) []byte { return export.Unchecked(m, tg.format) }
			js := replay(t, tg, specs, refused, w, g, unchecked)
			for _, key := range refused {
				m := specs[key].Machine
				diverged := false
				for i := range w {
					if w[i].Machine == key && diverges(t, m, g[i], js[i]) {
						diverged = true
						break
					}
				}
				assert.True(t, diverged, "%s: %s runs the chart the export refuses as the Go machine does on every walk: the refusal is not needed", key, tg.format)
			}
		})
	}
}

// walksFor returns the walks of the machines keys, and their Go results.
func walksFor(keys []string, walks []goWalk, goResults [][]goResult) ([]goWalk, [][]goResult) {
	var w []goWalk
	var g [][]goResult
	for i, walk := range walks {
		if slices.Contains(keys, walk.Machine) {
			w = append(w, walk)
			g = append(g, goResults[i])
		}
	}
	return w, g
}

// diverges reports whether a target's walk ends a step in other leaves,
// or with other actions, than the Go machine's.
func diverges(t *testing.T, m *fsm.Machine, g []goResult, js []jsResult) bool {
	t.Helper()
	if len(g) != len(js) {
		return true
	}
	for j := range g {
		var actions []string
		for _, a := range g[j].Actions {
			if act := actionOf(t, m, a.Kind); !act.Builtin {
				actions = append(actions, act.Name)
			}
		}
		if !slices.Equal(leafSet(g[j].Leaf), leafSet(js[j].Leaf)) || !slices.Equal(actions, js[j].Calls) {
			return true
		}
	}
	return false
}
