package export_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// parallelWaitsChance is the chance that a parallel state outside regions
// of a random chart waits on eventless rows of its own (see
// parallelWaits): one in four, or, with FSMGEN_RANDOM_PARALLEL_WAITS set,
// that many in a hundred.
var parallelWaitsChance = envChance("FSMGEN_RANDOM_PARALLEL_WAITS", 0.25)

// parallelWaits draws eventless rows of the random chart's parallel
// states outside regions, at the top level or inside a composite state
// (docs/spec.md, "A parallel state that waits"), from a stream of its own
// (chartGen.pwait), after everything else, so a chart without them is
// the seed's before they were drawn. Each (see waitsIn) may get one row
// of one or two branches, each guarded by a guard of its own or by In()
// of a leaf of one of its regions, to a state outside it. Loops through
// the states that wait outside are left to the checker, which refuses
// them.
func (g *chartGen) parallelWaits() {
	w := g.pwait
	for _, p := range g.nodes() {
		if !p.waitsIn() || w.Float64() >= parallelWaitsChance {
			continue
		}
		var ins []string
		for _, reg := range p.children {
			for _, n := range reg.all() {
				if n.kind == leafNode && !n.transient {
					ins = append(ins, "In("+n.name+")")
				}
			}
		}
		g.eventlessRow(w, p.name, func() string {
			if len(ins) > 0 && w.Float64() < 0.3 {
				return ins[w.IntN(len(ins))]
			}
			return g.newGuard()
		}, func() string { return g.outside(w, p) })
	}
}

// parallelWaitCharts logs, and returns, how many of the charts keys have
// a parallel state that waits.
func parallelWaitCharts(t *testing.T, specs map[string]*generate.Result, keys []string) int {
	t.Helper()
	n := 0
	for _, key := range keys {
		if slices.ContainsFunc(specs[key].Machine.States, func(s *fsm.State) bool { return s.Regions != nil && s.Waits }) {
			n++
		}
	}
	t.Logf("%d of %d charts have a parallel state that waits", n, len(keys))
	return n
}

// compositeWaitsChance is the chance that a region of a random chart's
// parallel state outside regions gets a composite state that waits (see
// compositeWaits): one in four, or, with FSMGEN_RANDOM_COMPOSITE_WAITS
// set, that many in a hundred.
var compositeWaitsChance = envChance("FSMGEN_RANDOM_COMPOSITE_WAITS", 0.25)

// compositeWaits draws eventless rows of composite states inside the
// regions of the random chart's parallel states outside regions
// (docs/spec.md, "States that wait inside regions"), from a stream of its
// own (chartGen.cwait), after everything else. A composite state with no
// final or parallel state inside it, and inside no parallel state inside
// the region, may get one row of one or two branches, each guarded by a
// guard of its own or by In() of a leaf of another region, to a state of
// its region outside it (a parallel state inside the region too) or to a
// state outside the parallel state.
func (g *chartGen) compositeWaits() {
	w := g.cwait
	for _, p := range g.nodes() {
		if !p.waitsIn() {
			continue
		}
		for _, reg := range p.children {
			if w.Float64() >= compositeWaitsChance {
				continue
			}
			var can []*rnode
			for _, c := range reg.all() {
				if c.kind == compositeNode && c != reg && c.region() == reg && !slices.ContainsFunc(c.all(), func(n *rnode) bool { return n.final || n.kind == parallelNode }) {
					can = append(can, c)
				}
			}
			if len(can) == 0 {
				continue
			}
			c := can[w.IntN(len(can))]
			var to, ins []string
			for _, n := range reg.all() {
				if n.kind == leafNode && !n.transient && !n.inside(c) && n.region() == reg || n.hosted && n.region() == reg {
					to = append(to, n.name)
				}
			}
			for _, other := range p.children {
				if other != reg {
					for _, n := range other.all() {
						if n.kind == leafNode && !n.transient && !n.final {
							ins = append(ins, "In("+n.name+")")
						}
					}
				}
			}
			g.eventlessRow(w, c.name, func() string {
				if len(ins) > 0 && w.Float64() < 0.3 {
					return ins[w.IntN(len(ins))]
				}
				return g.newGuard()
			}, func() string {
				if len(to) > 0 && w.Float64() < 0.5 {
					return to[w.IntN(len(to))]
				}
				return g.outside(w, p)
			})
		}
	}
}

// waitsIn reports whether p is a parallel state outside regions with no
// parallel state nested in it as a region that has a done transition
// (fsmgen refuses those, see parwaits.go): it, and the states of its
// regions, may wait.
func (p *rnode) waitsIn() bool {
	return p.kind == parallelNode && p.region() == nil && !p.group && !p.hosted &&
		!slices.ContainsFunc(p.all(), func(q *rnode) bool { return q.group && (q.done != "" || len(q.doneIf) > 0) })
}

// eventlessRow adds an eventless row from state from of one or two
// branches drawn from w, each guarded by guard and leading to target,
// half of them with an action.
func (g *chartGen) eventlessRow(w *rand.Rand, from string, guard, target func() string) {
	var b strings.Builder
	fmt.Fprintf(&b, "  - from: %s\n    guards:\n", from)
	for range 1 + w.IntN(2) {
		// (In the order the draws were made before eventlessRow: the
		// guard, then the target.)
		gd := guard()
		fmt.Fprintf(&b, "      - if: %s\n        to: %s\n", gd, target())
		if w.Float64() < 0.5 {
			fmt.Fprintf(&b, "        action: %s\n", g.actions[w.IntN(len(g.actions))])
		}
	}
	g.rows = append(g.rows, b.String())
}
