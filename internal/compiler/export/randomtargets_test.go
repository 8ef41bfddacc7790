package export_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// This file draws the targets of the random charts' rows, timers and
// done transitions (see randomchart_test.go): within a region, out of a
// parallel state, into one from outside, and into the parallel states
// inside a region's states.

// target picks where a row from n may go: within n's region when n is
// inside one, else any state outside regions or a history; "" for a row
// without a target.
func (g *chartGen) target(n *rnode) string {
	reg := n.region()
	if reg == nil && g.chance(0.15) || g.chance(0.03) {
		// (SCXML runs a parallel state's rule beside a region's rule
		// without a target, which the export refuses: few of those)
		return ""
	}
	var can []string
	for _, s := range g.nodes() {
		if s.kind == regionNode && s == reg && s.history != "" && g.chance(0.5) {
			can = append(can, s.name+".history") // its own region's
		}
		if s.kind == regionNode || s.group || s.region() != reg || reg != nil && !s.inside(reg) {
			continue
		}
		can = append(can, s.name)
		if s.history != "" && g.chance(0.5) {
			can = append(can, s.name+".history")
		}
	}
	return can[g.r.IntN(len(can))]
}

// leaving may pick, for a row from n inside a region of a parallel state
// P (not one inside a region, nor one nested as a region: for a region of
// one nested as a region, P is the outermost, see groupLeavable), a
// target outside P, or P itself, which the row leaves P for (P holds no
// parallel state inside a region's state; drawn from a stream of its
// own, so the charts are otherwise those of the seed before); ""
// otherwise.
func (g *chartGen) leaving(n *rnode) string {
	if reg := n.region(); reg != nil && reg.parent.group {
		return g.outside(g.out, groupLeavable(reg, g.out))
	}
	p, _ := leavable(n, g.out, 0.2)
	return g.outside(g.out, p)
}

// groupLeavingChance is how often groupLeavable draws a rule that leaves:
// such a rule often makes others unreachable, which the checker finds
// only once its search has ended, seconds into a large chart.
var groupLeavingChance = envChance("FSMGEN_RANDOM_GROUP_LEAVING", 0.08)

// groupLeavable returns, when stream r draws below groupLeavingChance
// (FSMGEN_RANDOM_GROUP_LEAVING in a hundred) for region reg of a
// parallel state nested as a region, the outermost parallel state P it is
// nested in, if a row of reg may leave P: P is neither inside a region
// nor nested as one, and holds no parallel state inside a region's
// state; nil otherwise. fsmgen refuses such a row beside a nested
// parallel state's own rule for its event: the harness draws another
// chart then.
func groupLeavable(reg *rnode, r *rand.Rand) *rnode {
	if r.Float64() >= groupLeavingChance {
		return nil
	}
	p := reg.parent
	for p.group {
		p = p.parent
	}
	if p.kind != parallelNode || p.hosted || p.region() != nil || slices.ContainsFunc(p.all(), func(q *rnode) bool { return q.hosted }) {
		return nil
	}
	return p
}

// doneLeaving may pick, for the done transition of composite state n
// inside a region of a parallel state P (one leaving may pick for), a
// target outside P, P itself, or a state of another region of P, which
// the done transition leaves P for (from a region of a parallel state
// nested as a region, P is the outermost, and no other region's state)
// (drawn from a stream of its own, so the charts are otherwise those of
// the seed before); "" otherwise, and where fsmgen refuses it: under a
// deep history of P or around it, and where a composite state inside P
// that holds a final or a transient state keeps a history (these would
// remember a region in a state it never rests in).
func (g *chartGen) doneLeaving(n *rnode) string {
	if n.kind != compositeNode || n.deepUnder() || n.region() == nil || n.region().parent.history != "" {
		return ""
	}
	p, reg := leavable(n, g.quit, 1)
	grouped := n.region().parent.group
	if grouped {
		// Out of the outermost parallel state (see leaving).
		p = groupLeavable(n.region(), g.quit)
	}
	if p == nil || slices.ContainsFunc(p.all(), func(q *rnode) bool {
		return q.history != "" && slices.ContainsFunc(q.all(), func(f *rnode) bool { return f.final || f.transient })
	}) {
		return ""
	}
	if !grouped && !p.entry && !p.exit && p.timer == "" && g.quit.Float64() < 0.4 {
		// Into another region of P, which leaves P and enters it again
		// (where P has no entry, exit or timer, which the exports refuse
		// it for, as across says).
		can := g.insideRegions(func(s *rnode) bool { return s.inside(p) && !s.inside(reg) })
		if t := g.pick(g.quit, slices.DeleteFunc(can, func(c string) bool { return strings.HasSuffix(c, ".history") })); t != "" {
			return t
		}
	}
	return g.outside(g.quit, p)
}

// outside picks with r a target for a rule that leaves parallel state p:
// p itself, or a state outside it; "" for a nil p.
func (g *chartGen) outside(r *rand.Rand, p *rnode) string {
	if p == nil {
		return ""
	}
	var can []string
	for _, s := range g.nodes() {
		if s == p || s.kind != regionNode && !s.group && s.region() == nil && !s.inside(p) && !p.inside(s) {
			can = append(can, s.name)
		}
	}
	return can[r.IntN(len(can))]
}

// leavable returns, when stream r draws below chance for n inside a
// region, the region's parallel state P and the region, if a row from n
// may leave P: P is neither inside a region nor nested as a region, and
// holds no parallel state inside a region's state (fsmgen refuses rows
// that leave beside the rules of their regions); nil otherwise.
func leavable(n *rnode, r *rand.Rand, chance float64) (p, reg *rnode) {
	reg = n.region()
	if reg == nil || r.Float64() >= chance {
		return nil, nil
	}
	p = reg.parent
	if p.kind != parallelNode || p.hosted || p.group || p.region() != nil || slices.ContainsFunc(p.all(), func(q *rnode) bool { return q.hosted }) {
		return nil, nil
	}
	return p, reg
}

// entering may pick, for a row from n outside every region, a target
// inside a region of a parallel state P outside regions: a state of the
// region, inside the parallel states inside it or nested as its regions
// too, or its history (drawn from a stream of its own, so the charts are
// otherwise those of the seed before); "" otherwise.
func (g *chartGen) entering(n *rnode) string {
	if n.region() != nil || g.into.Float64() >= 0.1 {
		return ""
	}
	return g.pick(g.into, g.statesInRegions(func(*rnode) bool { return true }, true))
}

// inwards may pick, for a row, a timer or a done transition of n inside
// a region (not a region of a parallel state nested as a region), a
// target inside a parallel state inside one of the region's states, at
// any depth: a state of its regions or its history (drawn from a stream
// of its own, so the charts are otherwise those of the seed before); ""
// otherwise. fsmgen refuses some (a deep history that may resume a
// parallel state in turn): the harness draws another chart then.
func (g *chartGen) inwards(n *rnode) string {
	reg := n.region()
	if reg == nil || reg.parent.group || g.inward.Float64() >= 0.15 {
		return ""
	}
	return g.pick(g.inward, g.insideRegions(func(s *rnode) bool { return s.region() != reg && s.inside(reg) }))
}

// across may pick, for a row or a timer of n inside a region of a
// parallel state P (one leaving may pick for), a target inside another
// region of P: a state there, inside the parallel states inside it or
// nested as it too, or its history; the row or timer leaves P and enters it again (drawn
// from a stream of its own, so the charts are otherwise those of the
// seed before); "" otherwise, and where P has an entry, an exit, a
// timer or a history, which the exports refuse such a row for.
func (g *chartGen) across(n *rnode) string {
	p, reg := leavable(n, g.cross, 0.1)
	if p == nil || p.entry || p.exit || p.timer != "" || p.history != "" {
		return ""
	}
	return g.pick(g.cross, g.statesInRegions(func(s *rnode) bool { return s.inside(p) && !s.inside(reg) }, true))
}

// insideRegions lists the states inside regions that keep holds for (not
// those inside a parallel state nested as a region), each followed by
// its history when it has one: targets for a row into a region.
func (g *chartGen) insideRegions(keep func(s *rnode) bool) []string {
	return g.statesInRegions(keep, false)
}

// statesInRegions is insideRegions, with the states inside parallel
// states nested as regions too when grouped is set.
func (g *chartGen) statesInRegions(keep func(s *rnode) bool, grouped bool) []string {
	var can []string
	for _, s := range g.nodes() {
		if s.kind == regionNode || s.group || s.region() == nil || !keep(s) {
			continue
		}
		if !grouped && slices.ContainsFunc(g.nodes(), func(q *rnode) bool { return q.group && s.inside(q) }) {
			continue // inside a parallel state nested as a region
		}
		can = append(can, s.name)
		if s.history != "" {
			can = append(can, s.name+".history")
		}
	}
	return can
}

// pick draws one of can from stream r; "" when can is empty.
func (g *chartGen) pick(r *rand.Rand, can []string) string {
	if len(can) == 0 {
		return ""
	}
	return can[r.IntN(len(can))]
}

// chartsWithRule counts, and logs as having what, the charts of keys
// with a rule that has holds for.
func chartsWithRule(t *testing.T, specs map[string]*generate.Result, keys []string, what string, has func(r *fsm.Rule) bool) int {
	t.Helper()
	n := 0
	for _, key := range keys {
		if slices.ContainsFunc(specs[key].Machine.Rules, has) {
			n++
		}
	}
	t.Logf("%d of %d charts have %s", n, len(keys), what)
	return n
}

// doneLeavingCharts counts, and logs, the charts of keys with a done
// transition that leaves a parallel state from inside a region (see
// doneLeaving): the parallel state's rule, its source a final state.
func doneLeavingCharts(t *testing.T, specs map[string]*generate.Result, keys []string) int {
	t.Helper()
	return chartsWithRule(t, specs, keys, "done transitions that leave a parallel state from inside a region", func(r *fsm.Rule) bool {
		return r.Done != nil && r.Source != nil
	})
}

// groupEnteringCharts counts, and logs, the charts of keys with a rule
// from outside a parallel state into a state inside a parallel state
// nested as one of its regions (see entering).
func groupEnteringCharts(t *testing.T, specs map[string]*generate.Result, keys []string) int {
	t.Helper()
	return chartsWithRule(t, specs, keys, "rules from outside a parallel state into a parallel state nested as its region", func(r *fsm.Rule) bool {
		return slices.ContainsFunc(r.Entries, func(run *fsm.Run) bool {
			if run.Into == nil {
				return false
			}
			for reg := run.Into.Region; reg != nil; reg = reg.Host {
				if reg.Group != nil {
					return true
				}
			}
			return false
		})
	})
}

// groupLeavingCharts counts, and logs, the charts of keys with a rule
// that leaves a parallel state from a region of a parallel state nested
// as one of its regions (see leaving): the parallel state's rule, its
// source in that region.
func groupLeavingCharts(t *testing.T, specs map[string]*generate.Result, keys []string) int {
	t.Helper()
	return chartsWithRule(t, specs, keys, "rules that leave a parallel state from a parallel state nested as its region", func(r *fsm.Rule) bool {
		return r.Source != nil && r.Source.Region != nil && r.Source.Region.Group != nil
	})
}
