package fsm

import (
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
)

// A region whose parallel state waits for it to end may enter a state
// from which no rule of the region leads to a final state: once there,
// the done transition can never be taken, and a parallel state with no
// other way out would hold the machine for ever, as a state with no way
// out does outside regions. The region's build finds those states
// (stuckLeaves); the machine's build, which knows the parallel state's
// own rules and those around it, reports them when nothing else leaves
// it (stuckRegions).

// stuckLeaf is a state of a region from which the region never ends.
type stuckLeaf struct {
	region, name string
	pos          diag.Pos
	// from are the states of the region that lead there and could end.
	from []string
}

// stuckLeaves records, in a region's build of a parallel state with a
// done transition, the states the region may reach but never end from,
// that a state which could end leads to (the first a path enters).
func (b *builder) stuckLeaves(succ map[*State][]*State, reached map[*State]bool) {
	r := b.par.region
	if r.par.Done == nil || r.host != nil {
		return
	}
	pred := map[*State][]*State{}
	var ends []*State
	for _, s := range b.m.States {
		for _, t := range succ[s] {
			pred[t] = append(pred[t], s)
		}
		if s.Final && s.Depth == 1 {
			ends = append(ends, s)
		}
	}
	canEnd := map[*State]bool{}
	for len(ends) > 0 {
		s := ends[0]
		ends = ends[1:]
		if canEnd[s] {
			continue
		}
		canEnd[s] = true
		ends = append(ends, pred[s]...)
	}
	for _, s := range b.m.States {
		if !reached[s] || canEnd[s] || s.Composite() {
			continue
		}
		var from []string
		for _, q := range pred[s] {
			if reached[q] && canEnd[q] && !slices.Contains(from, q.Name) {
				from = append(from, q.Name)
			}
		}
		if len(from) > 0 {
			r.stuck = append(r.stuck, stuckLeaf{region: r.root.Name.Value, name: s.Name, pos: s.Pos, from: from})
		}
	}
}

// stuckRegions reports, in the machine's build, the states of the
// regions of each parallel state from which its region never ends
// (see stuckLeaves) when its done transition is its only way out (a
// rule back into the parallel state is one: it enters every region
// anew).
func (b *builder) stuckRegions() {
	if b.par == nil || len(b.par.stuck) == 0 {
		return
	}
	succ := b.successorsBy(func(r *Rule) bool { return r.Done == nil })
	for _, p := range b.m.States {
		leaves := b.par.stuck[p.Name]
		if len(leaves) == 0 || !b.parallel(p) || len(succ[p]) > 0 {
			continue
		}
		for _, l := range leaves {
			b.errorf(l.pos, "state %s, in region %s of parallel state %s, never leads to a final state of %s (%s leads to it), and nothing but the done transition of %s, which waits for %s to end, leaves %s: the machine would stay in %s for ever; add a transition from %s toward a final state, or a rule that leaves %s", l.name, l.region, p.Name, l.region, strings.Join(l.from, " and "), p.Name, l.region, p.Name, p.Name, l.name, p.Name)
		}
	}
}
