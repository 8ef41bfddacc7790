package export_test

import (
	"fmt"
	"os"
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
var parallelWaitsChance = func() float64 {
	var n int
	if _, err := fmt.Sscan(os.Getenv("FSMGEN_RANDOM_PARALLEL_WAITS"), &n); err != nil {
		return 0.25
	}
	return float64(n) / 100
}()

// parallelWaits draws eventless rows of the random chart's parallel
// states outside regions (at the top level, or inside a composite state) (docs/spec.md, "A parallel state that waits"), from a
// stream of its own (chartGen.pwait), after everything else, so a chart
// without them is the seed's before they were drawn. A parallel state with
// no parallel state inside it may get one row of one or two branches, each
// guarded by a guard of its own or by In() of a leaf of one of its
// regions, to a state outside it, or to its history when it is under
// one. Loops through the states that wait outside are left to the
// checker, which refuses them.
func (g *chartGen) parallelWaits() {
	w := g.pwait
	for _, p := range g.nodes() {
		if p.kind != parallelNode || p.region() != nil || p.group || p.hosted || w.Float64() >= parallelWaitsChance {
			continue
		}
		if slices.ContainsFunc(p.all(), func(n *rnode) bool { return n != p && n.kind == parallelNode }) {
			continue // (refused: see parwaits.go)
		}
		var ins []string
		for _, reg := range p.children {
			for _, n := range reg.all() {
				if n.kind == leafNode && !n.transient {
					ins = append(ins, "In("+n.name+")")
				}
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "  - from: %s\n    guards:\n", p.name)
		for range 1 + w.IntN(2) {
			guard := g.newGuard()
			if len(ins) > 0 && w.Float64() < 0.3 {
				guard = ins[w.IntN(len(ins))]
			}
			fmt.Fprintf(&b, "      - if: %s\n        to: %s\n", guard, g.outside(w, p))
			if w.Float64() < 0.5 {
				fmt.Fprintf(&b, "        action: %s\n", g.actions[w.IntN(len(g.actions))])
			}
		}
		g.rows = append(g.rows, b.String())
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
var compositeWaitsChance = func() float64 {
	var n int
	if _, err := fmt.Sscan(os.Getenv("FSMGEN_RANDOM_COMPOSITE_WAITS"), &n); err != nil {
		return 0.25
	}
	return float64(n) / 100
}()

// compositeWaits draws eventless rows of composite states inside the
// regions of the random chart's parallel states outside regions
// (docs/spec.md, "States that wait inside regions"), from a stream of its
// own (chartGen.cwait), after everything else. A composite state with no
// final or parallel state inside it may get one row of one or two
// branches, each guarded by a guard of its own or by In() of a leaf of
// another region, to a state of its region outside it or to a state
// outside the parallel state.
func (g *chartGen) compositeWaits() {
	w := g.cwait
	for _, p := range g.nodes() {
		if p.kind != parallelNode || p.region() != nil || p.group || p.hosted {
			continue
		}
		if slices.ContainsFunc(p.all(), func(n *rnode) bool { return n != p && n.kind == parallelNode }) {
			continue // (refused: see parwaits.go)
		}
		for _, reg := range p.children {
			if w.Float64() >= compositeWaitsChance {
				continue
			}
			var can []*rnode
			for _, c := range reg.all() {
				if c.kind == compositeNode && c != reg && !slices.ContainsFunc(c.all(), func(n *rnode) bool { return n.final || n.kind == parallelNode }) {
					can = append(can, c)
				}
			}
			if len(can) == 0 {
				continue
			}
			c := can[w.IntN(len(can))]
			var to, ins []string
			for _, n := range reg.all() {
				if n.kind == leafNode && !n.transient && !n.inside(c) {
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
			var b strings.Builder
			fmt.Fprintf(&b, "  - from: %s\n    guards:\n", c.name)
			for range 1 + w.IntN(2) {
				guard := g.newGuard()
				if len(ins) > 0 && w.Float64() < 0.3 {
					guard = ins[w.IntN(len(ins))]
				}
				target := g.outside(w, p)
				if len(to) > 0 && w.Float64() < 0.5 {
					target = to[w.IntN(len(to))]
				}
				fmt.Fprintf(&b, "      - if: %s\n        to: %s\n", guard, target)
				if w.Float64() < 0.5 {
					fmt.Fprintf(&b, "        action: %s\n", g.actions[w.IntN(len(g.actions))])
				}
			}
			g.rows = append(g.rows, b.String())
		}
	}
}
