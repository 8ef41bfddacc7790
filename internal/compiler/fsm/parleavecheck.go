package fsm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file checks that the rows that leave a parallel state from inside
// a region (see parleave.go) may be written as the parallel state's.

// check reports whether the rows list of parallel state p for event e
// may be written as p's (see above), naming what refuses them.
func (l *leaving) check(p *spec.State, e string, list []leaveRow, rows []spec.Transition, regions []*specRegion, diags *diag.List) bool {
	ok := true
	first := list[0]
	label := func(lr leaveRow) string { return fmt.Sprintf("%s --%s--> %s", lr.src.Value, e, targetNames(&lr.t)) }
	for _, o := range regions {
		if o.top != p || slices.ContainsFunc(list, func(lr leaveRow) bool { return lr.r == o }) {
			continue
		}
		if o.place < first.r.place && o.groups == nil && o.host == nil && movesOnly(o, e, rows) {
			// An earlier region whose rules for e move within it or
			// reject: SCXML drops the rule that leaves where one is
			// taken, as the generated code does.
			continue
		}
		by := regionTakes(o, e, rows)
		if by == "" {
			if g := groupTakes(o.groups, e, rows); g != nil {
				by = g.Name.Value
			}
		}
		if by != "" {
			hint := ""
			if ign := ignoredOnly(o, e, rows); ign != nil {
				hint = fmt.Sprintf("; or, as region %s only ignores %s (in %s), take %s out of those ignore lists: a state inside a region may leave an event to its parallel state (docs/spec.md, Parallel states, Totality)", o.root.Name.Value, e, strings.Join(ign, ", "), e)
			}
			diags.Errorf(first.src.Pos, "rule %s leaves parallel state %s, and %s, in region %s of %s, has a rule or a list entry for %s too: SCXML takes the rule of the first region in document order and drops the other (SCXML 1.0 §3.13, removeConflictingTransitions), which fsmgen writes only where the other region comes first and its rules for %s move within it or reject; leave %s on %s from %s, or give the events different names%s", label(first), p.Name.Value, by, o.root.Name.Value, p.Name.Value, e, e, p.Name.Value, e, p.Name.Value, hint)
			return false
		}
	}
	last := list[len(list)-1]
	if i := slices.IndexFunc(list, func(lr leaveRow) bool { return lr.leave != nil }); i >= 0 && first.r != last.r {
		// A row that stays in its region by some branches, beside rows
		// that leave p from another region: the region's branch that
		// stays would run where SCXML takes the first region's rule that
		// leaves p and drops it.
		lr, o := list[i], first
		if o.r == lr.r {
			o = last
		}
		diags.Errorf(lr.src.Pos, "rule %s leaves parallel state %s by some branches of its guards and stays in region %s by others, and rule %s leaves %s from region %s on %s too: fsmgen writes a row that both leaves and stays only where no other region leaves %s on its event (SCXML 1.0 §3.13, removeConflictingTransitions keeps the first region's transition that leaves and drops a later one that stays); give every branch a target outside %s, or give the events different names", label(lr), p.Name.Value, lr.r.root.Name.Value, label(o), p.Name.Value, o.r.root.Name.Value, e, p.Name.Value, p.Name.Value)
		return false
	}
	for i, lr := range list {
		if lr.r != last.r && (i == 0 || lr.r != list[i-1].r) && !movesOnly(lr.r, e, rows) {
			// Rules that leave p from two regions: the first region's,
			// in document order, is tried first (see merge), and where
			// its region takes e otherwise, that rule decides.
			diags.Errorf(lr.src.Pos, "rules %s and %s leave parallel state %s from two of its regions, %s and %s, and %s ignores, defers or stays on %s in another state: SCXML would run that rule beside the one that leaves from %s (SCXML 1.0 §3.13, removeConflictingTransitions drops only a transition whose exits intersect an earlier one's), which fsmgen does not write; move within %s or reject %s there, or leave %s from there too", label(lr), label(last), p.Name.Value, lr.r.root.Name.Value, last.r.root.Name.Value, lr.r.root.Name.Value, e, last.r.root.Name.Value, lr.r.root.Name.Value, e, p.Name.Value)
			return false
		}
		for _, a := range around(lr.r.root, lr.src.Value) {
			listed := slices.ContainsFunc(listEntries(a), func(n spec.String) bool { return n.Value == e || n.Value == "*" })
			if listed || hasRow(a, e, rows) {
				diags.Errorf(lr.src.Pos, "rule %s leaves parallel state %s, and %s, around %s in region %s, has a rule or a list entry for %s too, which %s would take inside the region: fsmgen does not write both yet; write %s's rule on the states inside %s instead", label(lr), p.Name.Value, a.Name.Value, lr.src.Value, lr.r.root.Name.Value, e, lr.src.Value, a.Name.Value, a.Name.Value)
				ok = false
			}
		}
		if s := stateNamed(lr.r.root, lr.src.Value); s != nil && slices.ContainsFunc(listEntries(s), func(n spec.String) bool { return n.Value == "*" }) {
			diags.Errorf(lr.src.Pos, "rule %s leaves parallel state %s, and %s resolves every other event by its \"*\" list, which fsmgen would let take %s inside the region: list the events %s ignores or rejects by name", label(lr), p.Name.Value, lr.src.Value, e, lr.src.Value)
			ok = false
		}
	}
	for _, lr := range list {
		if lr.leave != nil {
			// Its branches without a target stay in the region, whose
			// rule runs beside the earlier region's, as SCXML's does.
			continue
		}
		by := ""
		for _, o := range regions {
			if by == "" && o.top == p && o.place < lr.r.place {
				by = regionTakes(o, e, rows)
			}
		}
		for _, br := range lr.t.Guards {
			if by != "" && !br.To.Set && !br.Ignore.Set && !br.Reject.Set {
				// SCXML runs a transition without a target beside any
				// other: fsmgen's code, beside the earlier region's rule
				// (or a rule that leaves p from it), runs that rule alone.
				diags.Errorf(br.Pos, "rule %s leaves parallel state %s by some branches of its guards and stays in %s without a target by this one, whose content SCXML runs beside the rule %s, in a region before it, has for %s (a transition without a target conflicts with none, SCXML 1.0 §3.13, removeConflictingTransitions), where fsmgen runs that rule alone: give the branch a target, ignore %s there, or give the events different names", label(lr), p.Name.Value, lr.src.Value, by, e, e)
				ok = false
			}
		}
	}
	for _, n := range listEntries(p) {
		if n.Value == "*" || n.Value == e && slices.ContainsFunc(p.Defer, func(d spec.String) bool { return d.Value == e }) {
			diags.Errorf(n.Pos, "parallel state %s defers %s or resolves every other event by a \"*\" list, and rule %s leaves it on %s: fsmgen does not write both yet; write %s's own rule for %s as a row", p.Name.Value, e, label(first), e, p.Name.Value, e)
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

// ignoredOnly returns the states of region o whose ignore lists name
// event e, where that is all o does with e (no row, no reject or defer
// entry, no "*" list; rows are the spec's); nil otherwise.
func ignoredOnly(o *specRegion, e string, rows []spec.Transition) []string {
	var names []string
	only := true
	walkStates(o.root, func(s *spec.State) {
		named := func(n spec.String) bool { return n.Value == e || n.Value == "*" }
		if slices.ContainsFunc(s.Reject, named) || slices.ContainsFunc(s.Defer, named) || hasRow(s, e, rows) {
			only = false
		}
		for _, n := range s.Ignore {
			switch n.Value {
			case "*":
				only = false
			case e:
				names = append(names, s.Name.Value)
			}
		}
	})
	if !only {
		return nil
	}
	return names
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
