package fsm

import (
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// inward rewrites the targets of row t of the states of region r (and
// of its guarded branches; a timer's, see inwardTimer) that name a
// state A, or A's history, inside a parallel state Q inside one of r's
// states, at any depth: SCXML 1.0 §3.13 enters Q with A's ancestors
// (addAncestorStatesToEnter) and every region of Q
// (addDescendantStatesToEnter), so the row is one into Q, the region of
// Q around A entered through A, the others through their initial states
// (see Run.Into), as a rule from outside a parallel state enters a state
// inside it. It refuses, naming them, the targets
// such a rule is refused (see refusal), and reports whether it refused
// one.
func (e *entering) inward(t *spec.Transition, r *specRegion, diags *diag.List) bool {
	bad := false
	one := func(o *spec.Outcome, pos diag.Pos) {
		other := e.inwardTarget(o.To, r)
		if other == nil {
			return
		}
		name := strings.TrimSuffix(o.To.Value, historySuffix)
		q := other.within(r).par.Name.Value
		if why := e.refusal(o.To, other, q, true); why != "" {
			diags.Errorf(o.To.Pos, "region %s cannot move to %s, inside region %s of parallel state %s%s", r.root.Name.Value, o.To.Value, other.root.Name.Value, other.par.Name.Value, why)
			bad = true
			return
		}
		e.inwards[pos] = o.To.Value // (a history's name kept: see enterInward)
		enteredThrough(other, name)
		o.To = spec.String{Value: q, Pos: o.To.Pos, Set: true}
	}
	eachOutcome(t, one)
	return bad
}

// inwardTargets reports whether row t of a state of region r targets a
// state inside a parallel state inside one of r's states (see inward).
func (e *entering) inwardTargets(t *spec.Transition, r *specRegion) bool {
	return slices.ContainsFunc(targets(t), func(to spec.String) bool { return e.inwardTarget(to, r) != nil })
}

// inwardTarget returns the region of target to, when it names a state
// (or its history) inside a parallel state inside one of region r's
// states, not one nested as a region there; nil otherwise.
func (e *entering) inwardTarget(to spec.String, r *specRegion) *specRegion {
	o := e.regionOf[strings.TrimSuffix(to.Value, historySuffix)]
	if !to.Set || o == nil || o.within(r) == nil || len(o.groups) > 0 {
		return nil
	}
	return o
}

// inwardTimer is inward for timer t of a state of region r (its row, see
// specRegion.timers): the region's build reads the rewritten targets
// from a stand-in for the state's timer (see lifts.apply). It reports
// whether t targets such a state, refused or not.
func (e *entering) inwardTimer(t *spec.Transition, r *specRegion, lifts *lifts, diags *diag.List) bool {
	if !e.inwardTargets(t, r) {
		return false
	}
	s := stateNamed(r.root, t.From[0].Value)
	if s == nil {
		return false
	}
	i := slices.IndexFunc(s.After, func(a *spec.After) bool { return a.Pos == t.Pos })
	if i < 0 {
		return false // a parallel state's own timer, lifted (see parinreg.go)
	}
	if e.inward(t, r, diags) {
		return true
	}
	a := s.After[i]
	lifts.standIns[a] = &spec.After{Pos: a.Pos, ID: a.ID, Delay: a.Delay, Guards: t.Guards, Outcome: t.Outcome}
	return true
}

// inwardDones is inward for the done transitions of the states of
// region r (a composite state's, or a parallel state's inside r, which
// are rules of r): the region's build reads the rewritten targets from
// a stand-in for the state's done transition (see lifts.apply).
func (e *entering) inwardDones(r *specRegion, lifts *lifts, diags *diag.List) {
	walkStates(r.root, func(s *spec.State) {
		d := s.Done
		if d == nil || s == r.root || e.regionOf[s.Name.Value] != r {
			return
		}
		t := spec.Transition{Pos: d.Pos, Outcome: d.Outcome, Guards: d.Guards}
		if !e.inwardTargets(&t, r) || e.inward(&t, r, diags) {
			return
		}
		cp := *d
		cp.Outcome, cp.Guards = t.Outcome, t.Guards
		lifts.dones[d] = &cp
	})
}

// enterInward points each rule of a region whose target was inside a
// parallel state inside one of the region's states (see inward) at that
// target, and the parallel state's entry at the leaf its region is
// entered through (Run.Into). A rule into a history there gets a
// variant for each state the history may resume (see regionResumes),
// right after it among its region's rules, as the variants of a rule
// into its own region's history are; the region rules are numbered
// again.
func enterInward(m *Machine, e *entering, inRegion map[string]*State) {
	if e == nil || len(e.inwards) == 0 {
		return
	}
	added := false
	for _, reg := range m.Regions {
		var rules []*Rule
		for _, r := range reg.Rules {
			rules = append(rules, r)
			name, ok := e.inwards[r.Pos]
			if !ok || r.To == nil || r.To.Regions == nil || r.Resume != nil {
				continue
			}
			name, hist := strings.CutSuffix(name, historySuffix)
			a := inRegion[name]
			if a == nil {
				continue
			}
			vs := pointInto(r, a, hist)
			rules = append(rules, vs...)
			added = added || len(vs) > 0
		}
		reg.Rules = rules
	}
	if added {
		for i, r := range m.RegionRules() {
			r.Index = len(m.Rules) + i
		}
	}
}

// targeted returns the regions whose done events rules (rule i a rule of
// region regs[i]) may raise, for raised: the region of each rule with a
// target, followed by the regions of the parallel states inside it that
// the rule enters through a state inside them (Run.IntoLeaf), in
// document order, whose final states SCXML 1.0 §3.13 (enterStates)
// raises done events for as it enters them.
func (p *State) targeted(rules []*Rule, regs []*Region) []*Region {
	var out []*Region
	for i, r := range rules {
		if r.To == nil {
			continue
		}
		out = append(out, regs[i])
		for _, run := range r.Entries {
			if !hosting(run) || run.Into == nil {
				continue
			}
			for _, x := range p.Flat {
				if x != regs[i] && run.IntoLeaf(x) != nil && !slices.Contains(out, x) {
					out = append(out, x)
				}
			}
		}
	}
	return out
}
