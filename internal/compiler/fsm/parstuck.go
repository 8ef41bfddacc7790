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
// it (stuckRegions). A parallel state inside a region's state (see
// parinreg.go) is a leaf of its host region's build, which records
// whether a rule other than its done transition leaves it; when none
// does, it is left only when a rule leaves the parallel state around
// its host region, and so on out.

// stuckLeaf is a state of a region from which the region never ends.
type stuckLeaf struct {
	in   *specRegion
	name string
	pos  diag.Pos
	// from are the states of the region that lead there and could end.
	from []string
}

// stuckLeaves records, in a region's build, the parallel states inside
// the region that a rule other than their done transition leaves and,
// for a region of a parallel state with a done transition, the states
// the region may reach but never end from, that a state which could end
// leads to (the first a path enters).
func (b *builder) stuckLeaves(succ map[*State][]*State, reached map[*State]bool) {
	r := b.par.region
	out := b.successorsBy(func(r *Rule) bool { return r.Done == nil })
	for _, s := range b.m.States {
		if b.parallel(s) && len(out[s]) > 0 {
			if r.left == nil {
				r.left = map[string]bool{}
			}
			r.left[s.Name] = true
		}
	}
	if r.par.Done == nil {
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
			r.stuck = append(r.stuck, stuckLeaf{in: r, name: s.Name, pos: s.Pos, from: from})
		}
	}
}

// stuckRegions reports, in the machine's build, the states of the
// regions of each parallel state from which their region never ends (see
// stuckLeaves) when its done transition is its only way out (a rule back
// into the parallel state is one: it enters every region anew). The
// done transition of a parallel state around it is none: it waits for
// the region that holds it to end.
func (b *builder) stuckRegions() {
	if b.par == nil || len(b.par.stuck) == 0 {
		return
	}
	succ := b.successorsBy(func(r *Rule) bool { return r.Done == nil })
	named := map[string]*State{}
	for _, s := range b.m.States {
		named[s.Name] = s
	}
	for _, l := range b.par.stuck {
		if left(l.in, named, succ) {
			continue
		}
		region, p := l.in.root.Name.Value, l.in.par.Name.Value
		b.errorf(l.pos, "state %s, in region %s of parallel state %s, never leads to a final state of %s (%s leads to it), and nothing but the done transition of %s, which waits for %s to end, leaves %s: the machine would stay in %s for ever; add a transition from %s toward a final state, or a rule that leaves %s", l.name, region, p, region, strings.Join(l.from, " and "), p, region, p, p, l.name, p)
	}
}

// left reports whether a rule other than a done transition leaves the
// parallel state of region r: its own or that of a state around it, in
// its host region's build for one inside a region, or else leaves the
// parallel state around that region, and so on out; succ are the
// machine's successors through such rules.
func left(r *specRegion, named map[string]*State, succ map[*State][]*State) bool {
	p := r.par.Name.Value
	for host := r.host; host != nil; host = host.host {
		if host.left[p] {
			return true
		}
		p = host.par.Name.Value
	}
	return len(succ[named[p]]) > 0
}
