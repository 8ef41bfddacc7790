package fsm

import (
	"slices"
	"time"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves a parallel state inside a region of another parallel
// state, below the region's own state: a state Q of region R that a rule
// of R enters and leaves (SCXML 1.0 §3.4: a <state> may hold a
// <parallel>; XState's type: "parallel" at any depth). R's build holds Q
// as a leaf, as the machine's build holds a parallel state; Q's regions
// are built on their own, as every region is, and join the machine's
// regions right after R (document order: Q's leaves are R's atomic
// states), hosted by R (Region.Host) inside Q (Region.Within). Their
// slots of m.rgn hold their leaves while R is in Q and zero otherwise,
// so the code dispatches them region by region, as it does the others,
// and never the product of their states. A rule of one of Q's regions
// preempts Q's own and those of R around Q, as a region's rule preempts
// its parallel state's (SCXML 1.0 §3.13, removeConflictingTransitions: a
// descendant's transition wins).

// hostedRegions returns the regions of parallel state q, inside region
// host below its own state, and those of the parallel states inside them
// in turn, in document order, refusing what fsmgen does not resolve for
// them yet. deep is the innermost composite state inside host around q
// with a deep history (nil when none is): it remembers the leaf of each
// of q's regions too (SCXML 1.0 §3.10), as q's own deep history does, so
// their leaves may be resumed.
func hostedRegions(host *specRegion, q *spec.State, deep *spec.State, diags *diag.List) []*specRegion {
	if len(q.States) < 2 {
		tooFewRegions(q, diags)
		return nil
	}
	if host.resumed {
		diags.Errorf(q.Parallel.Pos, "parallel state %s is inside region %s, and a deep history of or around parallel state %s would remember the leaves of its regions: fsmgen does not resume a parallel state inside a region yet; make the history shallow or drop it, or move %s out of %s", q.Name.Value, host.root.Name.Value, host.par.Name.Value, q.Name.Value, host.root.Name.Value)
		return nil
	}
	// q's own deep history remembers the leaf of each of its regions, as
	// any parallel state's does (a shallow one is refused there): r's
	// build gives q a history as it gives the machine's parallel states
	// theirs (see histories), and the memories follow (see memories).
	resumed := deepHistoryOf(q, deep, diags)
	var out []*specRegion
	for place := range q.States {
		root := &q.States[place]
		if root.Parallel.Value {
			diags.Errorf(root.Parallel.Pos, "parallel state %s is a region of parallel state %s, which region %s of %s enters and leaves: fsmgen does not nest a parallel state as a region there yet; make %s an ordinary region, or put the parallel state inside one of its states", root.Name.Value, q.Name.Value, host.root.Name.Value, host.par.Name.Value, root.Name.Value)
			continue
		}
		r := &specRegion{par: q, top: host.top, host: host, place: place, root: root, names: map[string]bool{}, finals: map[string]bool{}, resumed: resumed}
		checkRegion(r, r.root, nil, diags)
		if q.Done != nil && len(r.finals) == 0 {
			// SCXML 1.0 §3.4: done.state.ID of a <parallel> is raised once
			// every child region is in a final state.
			diags.Errorf(root.Name.Pos, "region %s of parallel state %s has no final state, so %s's done transition can never be taken: mark the state the region ends in \"final: true\"", root.Name.Value, q.Name.Value, q.Name.Value)
		}
		// Its transient states and the done transitions of its composite
		// states are taken with those of the other regions (see settle
		// and eventless), q's own done after them once they end its last
		// region.
		hostedStates(root, root, q, host, diags)
		out = append(out, r)
		out = append(out, regionsOf(root.States, diags, r, deepOf(root, nil))...)
	}
	return out
}

// hostedStates refuses, in s and the states inside it (a region of a
// parallel state inside another's region), what fsmgen does not resolve
// there yet: deferred events. Histories remember their region's leaf as
// in any region, when q is left too (see rememberHosted), and a deep one
// around a parallel state inside them the leaves of its regions.
func hostedStates(s, root, q *spec.State, host *specRegion, diags *diag.List) {
	if len(s.Defer) > 0 {
		diags.Errorf(s.Defer[0].Pos, "region %s of parallel state %s, which region %s enters and leaves: its state %s defers %s; fsmgen does not defer events inside a parallel state inside a region yet; ignore the event, or handle it", root.Name.Value, q.Name.Value, host.root.Name.Value, s.Name.Value, s.Defer[0].Value)
	}
	for i := range s.States {
		if !s.States[i].Parallel.Value {
			hostedStates(&s.States[i], root, q, host, diags)
		}
	}
}

// checkHosting checks q, a parallel state inside region r below its own
// state (see hostedRegions): a leaf of r's build, entered and left by
// r's rules, with rules of its own, an entry and exit (whose effects
// read and set the fields of the parallel state around r) and a deep
// history (checked with its regions, see hostedRegions), and nothing
// more yet.
func checkHosting(r *specRegion, q *spec.State, diags *diag.List) {
	refuse := func(pos diag.Pos, has, instead string) {
		diags.Errorf(pos, "parallel state %s, inside region %s of parallel state %s, has %s: fsmgen does not resolve that for a parallel state a region's rules enter and leave yet; %s", q.Name.Value, r.root.Name.Value, r.par.Name.Value, has, instead)
	}
	switch {
	case len(q.After) > 0 && !timerSpec(q):
		refuse(q.After[0].Pos, "a timer whose delay an effect computes", "give it a duration such as 30s")
	case q.Final.Set || q.Terminal.Set || q.Transient.Set:
		refuse(q.Name.Pos, "final, terminal or transient", "remove it")
	case len(q.Fields) > 0:
		refuse(q.Fields[0].Name.Pos, "fields", "give the fields to "+r.top.Name.Value)
	}
	for _, a := range q.After {
		// Its timers are r's, as any state's of r: their rules move
		// within r (checked as r's rows are, see splitRows).
		r.timers = append(r.timers, spec.Transition{Pos: a.Pos, From: []spec.String{q.Name}, Outcome: a.Outcome, Guards: a.Guards})
	}
}

// hostingDepth is how deep parallel states nest inside regions: 0 when
// no region holds one.
func hostingDepth(regions []*specRegion) int {
	depth := 0
	for _, r := range regions {
		d := 0
		for h := r.host; h != nil; h = h.host {
			d++
		}
		depth = max(depth, d)
	}
	return depth
}

// timerSpec reports whether the timers of q all have constant delays, as
// a region's timers need (an effect inside a region is refused).
func timerSpec(q *spec.State) bool {
	for _, a := range q.After {
		if _, err := time.ParseDuration(a.Delay.Value); err != nil {
			return false
		}
	}
	return true
}

// hostedResumes refuses a deep history that remembers the leaves of the
// regions of a parallel state inside a region (see Memory), around it or
// its own, where fsmgen does not resume them yet: a region that may rest
// in a final state, or a memory of every region final (its
// own history beside its done transition; resuming either raises done
// events again). It reports whether it refused one.
func hostedResumes(m *Machine, diags *diag.List) bool {
	refused := map[*State]bool{}
	for _, mem := range m.Memories {
		h, reg, q := mem.History, mem.Region, mem.Region.Owner()
		if reg.Host == nil || refused[h] {
			continue
		}
		var why string
		switch {
		case q.RestsFinal() || slices.ContainsFunc(q.Regions, func(reg *Region) bool { return slices.ContainsFunc(reg.Leaves, (*State).Rests) }):
			why = "one of its regions, or the parallel state itself, may rest in a final state when no guard of its done transition holds"
		case h == q && m.RemembersFinal(h, q):
			why = "its done transition leaves it from its regions' final states, so its history may remember every region final"
		case m.RemembersFinal(h, q):
			why = "its done transition leaves the history's state, so the history may remember every region final"
		default:
			continue
		}
		refused[h] = true
		if h == q {
			// A shallow history of a parallel state is refused anyway
			// (see deepHistoryOf).
			diags.Errorf(h.Pos, "parallel state %s inside region %s has a deep history of its own, which remembers the leaves of its regions, and %s: fsmgen does not resume such a parallel state inside a region yet; drop the history (a rule into %s enters its regions anew)", q.Name, reg.Host.Root.Name, why, q.Name)
			continue
		}
		diags.Errorf(h.Pos, "the deep history of %s remembers the leaves of the regions of parallel state %s inside region %s, and %s: fsmgen does not resume such a parallel state inside a region yet; make the history of %s shallow (which enters %s anew) or drop it", h.Name, q.Name, reg.Host.Root.Name, why, h.Name, q.Name)
	}
	return len(refused) > 0
}

// startsWaiting reports whether a region of parallel state q, or of a
// parallel state it starts in, starts in a state that waits (see
// continueRegion: resuming q tests the rows of the states resumed).
func startsWaiting(q *State) bool {
	return slices.ContainsFunc(q.Regions, func(reg *Region) bool {
		return reg.Initial.Eventless() || reg.Initial.Regions != nil && startsWaiting(reg.Initial)
	})
}
