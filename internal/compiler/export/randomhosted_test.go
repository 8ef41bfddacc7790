package export_test

import (
	"fmt"
	"testing"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// This file draws, for the random charts (see randomchart_test.go), rows
// that leave the parallel state outside regions from a region of a
// parallel state inside a region's state.

// hostLeavingChance is how often hostedLeaving draws such a row for a
// state: FSMGEN_RANDOM_HOSTED_LEAVING in a hundred (30 by default, at
// which the default draw has two charts with such rules; few charts hold
// a parallel state inside a region's state).
var hostLeavingChance = envChance("FSMGEN_RANDOM_HOSTED_LEAVING", 0.3)

// hostedLeaving draws, last and from a stream of its own (so the chart is
// otherwise the seed's before), for some states of the regions of the
// parallel states inside a region's state, a row on event Quit, which no
// other row names, to a state outside the parallel state P outside
// regions that holds them, or P itself; or a row on event Hop, which no
// other row names either, to a state of the region that holds their own
// parallel state Q outside it (Q itself too); guarded or not; or, for a
// state with a timer, either target as the timer's instead. fsmgen refuses such a row beside another
// region's rule for its event that SCXML would choose otherwise, or a
// rule of a state around it, which the events of their own keep away.
// The top-level states ignore Quit and Hop where they have no row for
// them, P among them.
func (g *chartGen) hostedLeaving() {
	used := map[string]bool{}
	for _, s := range g.nodes() {
		reg := s.region()
		if reg == nil || !reg.parent.hosted || s.kind == regionNode || s.group || s.final || s.transient || g.hout.Float64() >= hostLeavingChance {
			continue
		}
		p := reg.parent
		for p.region() != nil {
			p = p.region().parent
		}
		if p.kind != parallelNode || p.group || p.hosted {
			continue
		}
		e, to := "Quit", g.outside(g.hout, p)
		if host := g.hostTargets(reg.parent); len(host) > 0 && g.hout.Float64() < 0.5 {
			e, to = "Hop", host[g.hout.IntN(len(host))] // it leaves Q for a state of its host
		}
		if s.timer != "" && g.hout.Float64() < 0.5 {
			s.timer = to // its timer leaves
			continue
		}
		row := fmt.Sprintf("  - from: %s\n    on: %s\n    to: %s\n", s.name, e, to)
		if g.hout.Float64() < 0.35 {
			row = fmt.Sprintf("  - from: %s\n    on: %s\n    guards:\n      - if: %s\n        to: %s\n", s.name, e, g.guards[g.hout.IntN(len(g.guards))], to)
		}
		if g.hout.Float64() < 0.5 {
			row += "    action: " + g.actions[g.hout.IntN(len(g.actions))] + "\n"
		}
		g.rows = append(g.rows, row)
		used[e] = true
	}
	for _, e := range []string{"Quit", "Hop"} {
		if used[e] {
			g.events = append(g.events, e)
		}
	}
}

// hostTargets returns the states of the region that holds parallel
// state q, a state of one of its states, outside q's regions: q among
// them, which a row of q's regions leaves q for.
func (g *chartGen) hostTargets(q *rnode) []string {
	var out []string
	for _, s := range g.nodes() {
		if s.region() == q.region() && s.kind != regionNode && !s.group && (s == q || !s.inside(q)) {
			out = append(out, s.name)
		}
	}
	return out
}

// hostLeavingCharts counts, and logs, the charts of keys with a rule
// that leaves a parallel state from a region of a parallel state inside
// a region's state (see hostedLeaving): the outer parallel state's rule,
// its source in that region.
func hostLeavingCharts(t *testing.T, specs map[string]*generate.Result, keys []string) int {
	t.Helper()
	return chartsWithRule(t, specs, keys, "rules that leave a parallel state from a region of a parallel state inside a region's state", func(r *fsm.Rule) bool {
		return r.Source != nil && r.Source.Region != nil && r.Source.Region.Host != nil
	})
}
