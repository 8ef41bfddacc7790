package fsm

import (
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves the rules of a parallel state nested as a region of
// another (see parnest.go): Media's rows, in Run. Media's rule for
// an event is taken when the event reaches Media, that is when no region
// of Media takes it (SCXML 1.0 §3.13: transitions are selected from the
// atomic states up through their ancestors, a descendant's preempting its
// ancestor's; XState's parallel node falls back to its own transitions
// only when no region has one). fsmgen writes a rule without a target,
// for each of its events, as a row of the own state of the one region of Media whose
// states take the event (or of Media's first region, when none does):
// that region's leaves without a rule of their own take Media's rule, and
// the other regions of Media, which never take the event, leave it, so
// the rule is taken exactly when Media's would be. A rule for an event
// several regions of Media take would wait on each of them, which a
// region's build does not see, and a rule with a target leaves Run:
// both are Run's (see parnestlift.go).

// groupRule places t, a row from a parallel state nested as a region
// (groups finds the region of each such state's first region), as rows
// of regions' own states (see above), one per event, and returns in lift
// the row for the events it writes from the outer parallel state instead
// (see parnestlift.go); ok is false when t is not from such a state. A
// row it refuses it reports and places nowhere.
func groupRule(t spec.Transition, groups map[string]*specRegion, regions []*specRegion, rows []spec.Transition, lifts *lifts, diags *diag.List) (placed map[*specRegion][]spec.Transition, lift *spec.Transition, ok bool) {
	i := slices.IndexFunc(t.From, func(n spec.String) bool { return groups[n.Value] != nil })
	if i < 0 {
		return nil, nil, false
	}
	from := t.From[i]
	first := groups[from.Value]
	g := first.groups[slices.IndexFunc(first.groups, func(s *spec.State) bool { return s.Name.Value == from.Value })]
	switch {
	case len(t.From) > 1:
		diags.Errorf(from.Pos, "parallel state %s, a region of parallel state %s, shares a row with other states: write a row of its own for it", g.Name.Value, first.par.Name.Value)
		return nil, nil, true
	case len(t.On) == 0:
		diags.Errorf(from.Pos, "parallel state %s, a region of parallel state %s, has a row without an event: it is not transient; give the row an event", g.Name.Value, first.par.Name.Value)
		return nil, nil, true
	}
	var inside []*specRegion
	for _, o := range regions {
		if slices.Contains(o.groups, g) {
			inside = append(inside, o)
		}
	}
	up := liftOf(g, first, &t, regions, rows)
	placed = map[*specRegion][]spec.Transition{}
	var lifted []spec.String
	for _, e := range t.On {
		to, ok := ruleRegion(g, e, inside, rows, diags)
		switch {
		case ok && (to == nil || len(targets(&t)) > 0):
			// Taken when no region of g takes e, where the regions of
			// g take it, or with a target: the outer parallel
			// state's rule, where no other region of it takes e.
			if up.check(e, lifts, diags) {
				lifted = append(lifted, e)
			}
			continue
		case to == nil:
			continue
		}
		o := t
		o.From = []spec.String{{Value: to.root.Name.Value, Pos: from.Pos, Set: true}}
		o.On = []spec.String{e}
		placed[to] = append(placed[to], o)
		if to.groupRules == nil {
			to.groupRules = map[diag.Pos]int{}
		}
		gi := slices.Index(to.groups, g)
		to.groupRules[t.Pos] = gi
		for _, br := range t.Guards {
			to.groupRules[br.Pos] = gi
		}
	}
	if len(lifted) > 0 {
		gi := slices.Index(first.groups, g)
		first.lift(t.Pos, gi)
		for _, br := range t.Guards {
			first.lift(br.Pos, gi)
		}
		lift = &t
		lift.From = []spec.String{{Value: first.par.Name.Value, Pos: from.Pos, Set: true}}
		lift.On = lifted
	}
	return placed, lift, true
}

// ruleRegion returns the region of inside, the regions under parallel
// state g, whose own state takes g's rule for event e (see groupRule);
// nil with ok set when states of several of them take e, and nil
// without ok when the rule is refused (reported).
func ruleRegion(g *spec.State, e spec.String, inside []*specRegion, rows []spec.Transition, diags *diag.List) (to *specRegion, ok bool) {
	if slices.ContainsFunc(listEntries(g), func(n spec.String) bool { return n.Value == e.Value }) {
		diags.Errorf(e.Pos, "parallel state %s lists %s and has a rule for it: remove one of them", g.Name.Value, e.Value)
		return nil, false
	}
	takers := 0
	for _, o := range inside {
		if in := groupTakes(o.groups[slices.Index(o.groups, g)+1:], e.Value, rows); in != nil {
			diags.Errorf(e.Pos, "parallel state %s has a rule for %s, which parallel state %s, nested in it, has a rule or a list for too: %s takes %s first, so the rule would wait on it; write the rule on %s, or on the states of %s's regions", g.Name.Value, e.Value, in.Name.Value, in.Name.Value, e.Value, in.Name.Value, g.Name.Value)
			return nil, false
		}
		if regionTakes(o, e.Value, rows) != "" {
			takers++
			to = o
		}
	}
	switch {
	case takers > 1:
		return nil, true
	case to == nil:
		return inside[0], true
	case rootNames(to, e.Value, rows):
		diags.Errorf(e.Pos, "parallel state %s has a rule for %s, which %s, the own state of its region, takes in every state: the rule would never reach %s; remove it, or write it on %s", g.Name.Value, e.Value, to.root.Name.Value, g.Name.Value, to.root.Name.Value)
		return nil, false
	}
	return to, true
}

// regionTakes names a state inside region r that takes event e by a row
// or a list; "" when none does.
func regionTakes(r *specRegion, e string, rows []spec.Transition) string {
	by := ""
	walkStates(r.root, func(s *spec.State) {
		if by == "" && slices.ContainsFunc(listEntries(s), func(n spec.String) bool { return n.Value == e || n.Value == "*" }) {
			by = s.Name.Value
		}
	})
	for _, t := range rows {
		if by != "" {
			break
		}
		if !slices.ContainsFunc(t.On, func(n spec.String) bool { return n.Value == e }) {
			continue
		}
		if i := slices.IndexFunc(t.From, func(n spec.String) bool { return r.names[n.Value] }); i >= 0 {
			by = t.From[i].Value
		}
	}
	return by
}

// groupTakes returns the first of groups, parallel states nested as
// regions, with a list entry or a row for event e; nil when none has.
func groupTakes(groups []*spec.State, e string, rows []spec.Transition) *spec.State {
	for _, g := range groups {
		if slices.ContainsFunc(listEntries(g), func(n spec.String) bool { return n.Value == e }) {
			return g
		}
		if hasRow(g, e, rows) {
			return g
		}
	}
	return nil
}

// hasRow reports whether one of rows is from s for event e.
func hasRow(s *spec.State, e string, rows []spec.Transition) bool {
	return slices.ContainsFunc(rows, func(t spec.Transition) bool {
		return slices.ContainsFunc(t.From, func(n spec.String) bool { return n.Value == s.Name.Value }) && slices.ContainsFunc(t.On, func(n spec.String) bool { return n.Value == e })
	})
}

// ruleGroup returns, for r, a rule of region reg's own state, the
// parallel state nested as a region (of sr's groups) whose list entry or
// row it comes from (see groupLists and groupRule); nil for another rule.
func ruleGroup(r *Rule, reg *Region, sr *specRegion) *State {
	if r.From != reg.Root {
		return nil
	}
	if i, ok := sr.groupRules[r.Pos]; ok && !r.Listed {
		return reg.Groups[i]
	}
	return listGroup(r, reg, sr)
}
