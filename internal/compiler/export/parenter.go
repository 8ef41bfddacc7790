package export

import "github.com/fsmgen/fsmgen/internal/compiler/fsm"

// acrossRule refuses rule r of a state inside a region of parallel
// state P into a state inside another region of P when P has an entry,
// an exit, timers or a history: SCXML 1.0 §3.13 leaves and enters P (the
// transition's domain is the compound state around it: findLCCA takes no
// <parallel>), as fsmgen does, where XState v5 and SCION (which the
// SCXML export is checked with) take P itself as the domain and leave
// and enter its regions only, so P's entry and exit would not run, its
// timers would go on and its history would not record; and any such
// rule between two regions of a parallel state nested as a region of P,
// where both take that nested parallel state as the domain. target names
// the export's target.
func acrossRule(r *fsm.Rule, p *problems, target string) {
	if g := r.Group; g != nil && r.EntersInside() {
		groupInto(r, g, p, target)
		return
	}
	if r.Source == nil || !r.EntersInside() || r.Target == nil || r.Target.Region == nil {
		return
	}
	if g := sharedGroup(r.Source.Region, r.Target.Region); g != nil {
		p.refuse(r.Pos, "rule %s moves from region %s into region %s, both of parallel state %s, nested as a region of %s: SCXML 1.0 §3.13 leaves and enters %s (a transition's domain is the compound state around it), as fsmgen does, but %s takes %s as the domain and leaves and enters its regions only, so the other regions of %s would stay as they are: send an event that region %s takes", r.Label, r.Source.Region.Root.Name, r.Target.Region.Root.Name, g.Name, r.Target.Region.Parallel.Name, r.Target.Region.Parallel.Name, target, g.Name, r.Target.Region.Parallel.Name, r.Target.Region.Root.Name)
		return
	}
	q := r.Target.Region.Parallel
	if w := r.Source.Region.Within; w != nil {
		// A row of a region of a parallel state inside a region's state,
		// which fsmgen writes as that parallel state's rule: the targets
		// take it as the domain where the target is inside it too, and
		// the compound state around it otherwise, as SCXML does.
		if !insideOf(r.Target.Region, w) {
			return
		}
		q = w
	}
	if q.Entry == nil && q.Exit == nil && len(q.Timers) == 0 && q.History == fsm.HistoryNone {
		return
	}
	into := r.Target.Region.Root.Name + " of " + q.Name
	if w := r.Target.Region.Within; w != nil && w != q {
		// A region of a parallel state inside a region's state.
		into = r.Target.Region.Root.Name + " of " + w.Name + ", inside " + q.Name
	}
	p.refuse(r.Pos, "rule %s moves from region %s into region %s: SCXML 1.0 §3.13 leaves and enters %s (a transition's domain is the compound state around it), as fsmgen does, but %s takes %s as the domain and leaves and enters its regions only, so %s's entry, exit, timers or history would not run: move %s's entry and exit into its regions, or send an event that region %s takes", r.Label, r.Source.Region.Root.Name, into, q.Name, target, q.Name, q.Name, q.Name, r.Target.Region.Root.Name)
}

// insideOf reports whether region reg is a region of parallel state w,
// a parallel state inside a region's state, or of one inside its
// regions' states in turn.
func insideOf(reg *fsm.Region, w *fsm.State) bool {
	for ; reg != nil; reg = reg.Host {
		if reg.Within == w {
			return true
		}
	}
	return false
}

// sharedGroup returns the innermost parallel state nested as a region
// (see fsm.Region.Groups) that holds both regions a and b; nil when none
// does.
func sharedGroup(a, b *fsm.Region) *fsm.State {
	var out *fsm.State
	for i := 0; i < len(a.Groups) && i < len(b.Groups) && a.Groups[i] == b.Groups[i]; i++ {
		out = a.Groups[i]
	}
	return out
}

// groupInto refuses rule r of parallel state g, nested as a region of
// parallel state P, into a state inside P (one of g's regions' too) when P
// has an entry, an exit, timers or a history: SCXML 1.0 §3.13 leaves and
// enters P, as fsmgen does, where XState v5 and SCION take P as the domain
// (the least state around g and the target) and leave and enter its
// regions only.
func groupInto(r *fsm.Rule, g *fsm.State, p *problems, target string) {
	q := r.To
	if q.Entry == nil && q.Exit == nil && len(q.Timers) == 0 && q.History == fsm.HistoryNone {
		return
	}
	p.refuse(r.Pos, "rule %s of parallel state %s, nested as a region of %s, moves into %s, inside %s: SCXML 1.0 §3.13 leaves and enters %s (a transition's domain is the compound state around it), as fsmgen does, but %s takes %s as the domain and leaves and enters its regions only, so %s's entry, exit, timers or history would not run: move %s's entry and exit into its regions, or target %s", r.Label, g.Name, q.Name, r.Target.Name, q.Name, q.Name, target, q.Name, q.Name, q.Name, q.Name)
}
