package fsm

import (
	"fmt"
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file checks the rows that leave a parallel state from inside a
// region (see parleave.go) for what fsmgen does not write yet.

// check reports whether fsmgen writes the rows list of parallel state p
// for event e (as p's rules, or kept by their regions: see
// parleavekept.go), naming what refuses them.
func (l *leaving) check(p *spec.State, e string, list []leaveRow, rows []spec.Transition, regions []*specRegion, diags *diag.List) bool {
	ok := true
	first := list[0]
	label := func(lr leaveRow) string { return fmt.Sprintf("%s --%s--> %s", lr.src.Value, e, targetNames(&lr.t)) }
	for _, o := range regions {
		if o.top != p {
			continue
		}
		if o.host == nil || slices.ContainsFunc(list, func(lr leaveRow) bool { return lr.r == o }) {
			continue
		}
		if by := regionTakes(o, e, rows); by != "" {
			diags.Errorf(first.src.Pos, "rule %s leaves parallel state %s, and %s, in region %s of parallel state %s inside %s, has a rule or a list entry for %s too: fsmgen does not write a rule that leaves a parallel state beside a rule of a parallel state inside it yet; leave %s on %s from %s, or give the events different names", label(first), p.Name.Value, by, o.root.Name.Value, o.par.Name.Value, p.Name.Value, e, p.Name.Value, e, p.Name.Value)
			return false
		}
	}
	for _, n := range p.Defer {
		if n.Value == e || n.Value == "*" {
			diags.Errorf(n.Pos, "parallel state %s defers %s, and rule %s leaves it on %s: fsmgen does not write both yet; write %s's own rule for %s as a row", p.Name.Value, e, label(first), e, p.Name.Value, e)
			ok = false
		}
	}
	return ok
}

// around returns the states of region root around the state named s,
// outermost first, the root included; nil when s is not inside it.
func around(root *spec.State, s string) []*spec.State {
	if root.Name.Value == s {
		return []*spec.State{}
	}
	for i := range root.States {
		if in := around(&root.States[i], s); in != nil {
			return append([]*spec.State{root}, in...)
		}
	}
	return nil
}

// stateNamed returns the state named n inside s, s included.
func stateNamed(s *spec.State, n string) *spec.State {
	var out *spec.State
	walkStates(s, func(x *spec.State) {
		if x.Name.Value == n {
			out = x
		}
	})
	return out
}

// movesOnly reports whether every rule and list entry of the states of
// region o for event e (rows are the spec's) moves within the region or
// rejects e: none ignores, defers, or stays without a target, which
// SCXML would run beside a rule that leaves the parallel state.
func movesOnly(o *specRegion, e string, rows []spec.Transition) bool {
	ok := true
	walkStates(o.root, func(s *spec.State) {
		for _, n := range slices.Concat(s.Ignore, s.Defer) {
			if n.Value == e || n.Value == "*" {
				ok = false
			}
		}
	})
	moves := func(out spec.Outcome) bool { return out.To.Set || out.Reject.Set }
	for _, t := range rows {
		if !slices.ContainsFunc(t.On, func(n spec.String) bool { return n.Value == e }) || !slices.ContainsFunc(t.From, func(n spec.String) bool { return o.names[n.Value] }) {
			continue
		}
		if len(t.Guards) == 0 {
			ok = ok && moves(t.Outcome)
		}
		for _, br := range t.Guards {
			ok = ok && moves(br.Outcome)
		}
	}
	return ok
}
