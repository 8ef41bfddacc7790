package fsm

import (
	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves a parallel state nested in another: a parallel state
// that is a region's own state, right under the outer parallel state
// (SCXML 1.0 §3.4: a <parallel>'s children may be <parallel>; XState's
// type: "parallel" anywhere). It is active exactly while the outer one is,
// so its regions are regions of the outer parallel state, grouped under
// it (Region.Group): they take their places among the outer one's regions
// in document order, their leaves are fields of the outer parallel state's
// value, and they are dispatched, entered and left as its other regions
// are, which is SCXML's order (§3.13: transitions are selected from the
// atomic states in document order; enterStates and exitStates sort by
// document order). A parallel state deeper in a region, which a rule of
// the region enters and leaves, is refused: its regions would be active
// only while their parallel state is.

// groupOf checks inner, a parallel state right under parallel state
// outer, whose regions become outer's; it reports whether they do. Such a
// state groups its regions and nothing more: what would make it more than
// a name in the chart is refused, naming it.
func groupOf(outer, inner *spec.State, diags *diag.List) bool {
	refuse := func(pos diag.Pos, has, instead string) {
		diags.Errorf(pos, "parallel state %s, a region of parallel state %s, has %s: fsmgen nests a parallel state as a group of regions only yet, active exactly while %s is; %s", inner.Name.Value, outer.Name.Value, has, outer.Name.Value, instead)
	}
	ok := true
	switch {
	case len(inner.States) < 2:
		diags.Errorf(inner.Parallel.Pos, "parallel state %s has %d regions: a parallel state needs at least two (its states), each active at once; a single region is an ordinary composite state", inner.Name.Value, len(inner.States))
		return false
	case inner.Initial.Set:
		diags.Errorf(inner.Initial.Pos, "region %s of parallel state %s is marked initial: the regions of a parallel state are all entered with it; remove initial", inner.Name.Value, outer.Name.Value)
	case outer.Done != nil:
		// SCXML 1.0 §3.13 enterStates raises done.state of a final
		// state's grandparent only: the outer parallel state would not
		// complete when a region of the inner one ends last.
		refuse(outer.Done.Pos, "regions that another parallel state's done transition would wait for", "a parallel state with a done transition does not group its regions yet (SCXML raises done.state of the grandparent only, §3.13); make "+inner.Name.Value+"'s regions regions of "+outer.Name.Value)
		ok = false
	case inner.Entry != nil:
		refuse(inner.Entry.Pos, "an entry", "move the entry to "+outer.Name.Value+" or to the states of its regions")
	case inner.Exit != nil:
		refuse(inner.Exit.Pos, "an exit", "move the exit to "+outer.Name.Value+" or to the states of its regions")
	case len(inner.After) > 0:
		refuse(inner.After[0].Pos, "a timer", "give the timer to "+outer.Name.Value)
	case inner.Done != nil:
		refuse(inner.Done.Pos, "a done transition", "give "+outer.Name.Value+" the done transition")
	case inner.History.Set:
		refuse(inner.History.Pos, "a history", "remove the history")
	case inner.Final.Set:
		refuse(inner.Final.Pos, "final", "remove final")
	case inner.Terminal.Set || inner.Transient.Set:
		refuse(inner.Name.Pos, "terminal or transient", "remove it")
	case len(inner.Fields) > 0:
		refuse(inner.Fields[0].Name.Pos, "fields", "give the fields to "+outer.Name.Value)
	case len(inner.Ignore)+len(inner.Reject)+len(inner.Defer) > 0:
		refuse(inner.Name.Pos, "ignore, reject or defer lists", "write them on "+outer.Name.Value+" or on the states of its regions")
	}
	for i := range inner.States {
		if s := &inner.States[i]; s.Parallel.Value {
			diags.Errorf(s.Parallel.Pos, "parallel state %s is a region of parallel state %s, itself a region of %s: fsmgen nests parallel states one level deep yet; make %s's regions regions of %s", s.Name.Value, inner.Name.Value, outer.Name.Value, s.Name.Value, inner.Name.Value)
			ok = false
		}
	}
	return ok
}

// groupRow refuses a row from or to group, a parallel state that groups
// regions of outer (see groupOf): it has no rules of its own, and is
// entered and left with outer. It reports whether it refused the row.
func groupRow(t *spec.Transition, groups map[string]*specRegion, diags *diag.List) bool {
	refused := false
	for _, from := range t.From {
		if r := groups[from.Value]; r != nil {
			refused = true
			diags.Errorf(from.Pos, "parallel state %s groups regions of parallel state %s and has no rules of its own yet: write the row from %s, or from the states of %s's regions", from.Value, r.par.Name.Value, r.par.Name.Value, from.Value)
		}
	}
	for _, to := range targets(t) {
		if r := groups[to.Value]; r != nil {
			refused = true
			diags.Errorf(to.Pos, "parallel state %s groups regions of parallel state %s and is entered with it: target %s instead", to.Value, r.par.Name.Value, r.par.Name.Value)
		}
	}
	return refused
}

// groupState returns the state of group, a parallel state grouping
// regions of parallel state p, made once (its regions are added by the
// caller). It is in none of the machine's lists: it has no kind, no rules
// and no value of its own.
func groupState(group *spec.State, p *State, outer, inRegion map[string]*State, diags *diag.List) *State {
	for _, reg := range p.Regions {
		if reg.Group != nil && reg.Group.Name == group.Name.Value {
			return reg.Group
		}
	}
	name := group.Name.Value
	if o := outer[name]; o != nil {
		diags.Errorf(group.Name.Pos, "state %s is declared twice (also at %s): state names are unique across the whole machine", name, o.Pos)
	}
	if o := inRegion[name]; o != nil {
		diags.Errorf(group.Name.Pos, "state %s is declared twice (also at %s): state names are unique across the whole machine", name, o.Pos)
	}
	g := &State{Decl: Decl{Name: name, GoName: GoName(name), Snake: SnakeName(name), Doc: group.Doc.Value, Pos: group.Name.Pos}, Parent: p, Depth: p.Depth + 1}
	inRegion[name] = g
	return g
}

// Groups returns the parallel states nested as regions of others (see
// Region.Group), in document order.
func (m *Machine) Groups() []*State {
	var out []*State
	for _, reg := range m.Regions {
		if reg.Group != nil && reg.Group.Regions[0] == reg {
			out = append(out, reg.Group)
		}
	}
	return out
}
