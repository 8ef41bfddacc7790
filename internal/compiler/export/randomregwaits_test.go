package export_test

import (
	"slices"
	"testing"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// regionWaitsChance is the chance that a parallel state outside regions
// of a random chart gets states that wait inside its regions (see
// regionWaits): one in two, or, with FSMGEN_RANDOM_REGION_WAITS set,
// that many in a hundred.
var regionWaitsChance = envChance("FSMGEN_RANDOM_REGION_WAITS", 0.5)

// regionWaits draws states that wait inside the regions of the random
// chart's top-level parallel states (docs/spec.md, "States that wait
// inside regions"), from a stream of its own (chartGen.rwait), after
// everything else, so a chart without them is the seed's before they
// were drawn. Each region may get one, and so may each region of a
// parallel state inside them or nested in p as a region (not when one
// nested so has a done transition: refused, see waitsIn): a leaf of the
// region that is neither final nor transient, whose eventless rows are
// one or two branches, each guarded by a guard of its own or by In() of
// a resting leaf of another region (not one around it), to another leaf
// of its region (a final one too) or a parallel state inside it. Loops
// through the region's transient states are left to the checker, which
// refuses them; XState's export refuses states that wait in two regions
// (see waitOrder), SCXML's writes them.
func (g *chartGen) regionWaits() {
	w := g.rwait
	for _, p := range g.top {
		if p.kind != parallelNode || w.Float64() >= regionWaitsChance {
			continue
		}
		if p.mustRest || !p.waitsIn() {
			continue
		}
		resting := func(under *rnode) []*rnode {
			var out []*rnode
			for _, n := range under.all() {
				if n.kind == leafNode && !n.transient && (!n.final || n.parent == n.region()) {
					out = append(out, n)
				}
			}
			return out
		}
		// The regions of p, then those of the parallel states inside
		// them or nested in p as regions.
		regs := slices.Clone(p.children)
		for _, q := range p.all() {
			if q != p && q.kind == parallelNode {
				regs = append(regs, q.children...)
			}
		}
		for _, reg := range regs {
			if reg.kind != regionNode || w.Float64() >= 0.6 {
				continue
			}
			var can []*rnode
			for _, n := range resting(reg) {
				if !n.final && n.region() == reg {
					can = append(can, n)
				}
			}
			if len(can) == 0 {
				continue
			}
			s := can[w.IntN(len(can))]
			var to, ins []string
			for _, n := range reg.all() {
				if n.kind == leafNode && n != s && !n.transient && n.region() == reg || n.hosted && n.region() == reg {
					to = append(to, n.name)
				}
			}
			for _, n := range resting(p) {
				// A leaf of another region, not of one around reg (In()
				// of a state reg is never active beside would never hold).
				if r := n.region(); r != reg && !reg.inside(r) {
					ins = append(ins, "In("+n.name+")")
				}
			}
			if len(to) == 0 {
				continue
			}
			g.eventlessRow(w, s.name, func() string {
				if len(ins) > 0 && w.Float64() < 0.4 {
					return ins[w.IntN(len(ins))]
				}
				return g.newGuard()
			}, func() string { return to[w.IntN(len(to))] })
		}
	}
}

// regionWaitCharts logs, and returns, how many of the charts keys have
// states that wait inside regions.
func regionWaitCharts(t *testing.T, specs map[string]*generate.Result, keys []string) int {
	t.Helper()
	n, beside := 0, 0
	for _, key := range keys {
		m := specs[key].Machine
		if slices.ContainsFunc(m.RegionLeaves(), func(s *fsm.State) bool { return s.Waits }) {
			n++
		}
		if slices.ContainsFunc(m.States, func(p *fsm.State) bool {
			return (p.Waits || p.WaitsIn()) && len(p.Flat) > len(p.Regions)
		}) {
			beside++
		}
	}
	t.Logf("%d of %d charts have states that wait inside regions; %d have a parallel state that waits, or states that wait in its regions, beside a parallel state inside them", n, len(keys), beside)
	return n
}
