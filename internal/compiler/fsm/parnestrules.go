package fsm

import (
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves the rules of a parallel state nested as a region of
// another (see parnest.go) that stay in it: Media's rows, in Run, without
// a target (an effect and actions, or ignore, or reject). Media's rule for
// an event is taken when the event reaches Media, that is when no region
// of Media takes it (SCXML 1.0 §3.13: transitions are selected from the
// atomic states up through their ancestors, a descendant's preempting its
// ancestor's; XState's parallel node falls back to its own transitions
// only when no region has one). fsmgen writes the rule, for each of its
// events, as a row of the own state of the one region of Media whose
// states take the event (or of Media's first region, when none does):
// that region's leaves without a rule of their own take Media's rule, and
// the other regions of Media, which never take the event, leave it, so
// the rule is taken exactly when Media's would be. An event several
// regions of Media take is refused: the rule would then wait on each of
// them, which a region's build does not see (write it on the states of
// those regions).

// groupRule places t, a row from a parallel state nested as a region
// (groups finds the region of each such state's first region), as rows
// of regions' own states (see above), one per event; ok is false when t
// is not from such a state. A row it refuses it reports and places
// nowhere.
func groupRule(t spec.Transition, groups map[string]*specRegion, regions []*specRegion, rows []spec.Transition, diags *diag.List) (placed map[*specRegion][]spec.Transition, ok bool) {
	i := slices.IndexFunc(t.From, func(n spec.String) bool { return groups[n.Value] != nil })
	if i < 0 {
		return nil, false
	}
	from := t.From[i]
	first := groups[from.Value]
	g := first.groups[slices.IndexFunc(first.groups, func(s *spec.State) bool { return s.Name.Value == from.Value })]
	switch tos := targets(&t); {
	case len(t.From) > 1:
		diags.Errorf(from.Pos, "parallel state %s, a region of parallel state %s, shares a row with other states: write a row of its own for it", g.Name.Value, first.par.Name.Value)
		return nil, true
	case len(tos) > 0:
		diags.Errorf(tos[0].Pos, "parallel state %s, a region of parallel state %s, has a rule into %s: fsmgen gives a nested parallel state rules that stay in it only yet (an effect and actions, ignore or reject, without to); write the row from %s, which leaves every region, or from the states of %s's regions", g.Name.Value, first.par.Name.Value, tos[0].Value, first.par.Name.Value, g.Name.Value)
		return nil, true
	case len(t.On) == 0:
		diags.Errorf(from.Pos, "parallel state %s, a region of parallel state %s, has a row without an event: it is not transient; give the row an event", g.Name.Value, first.par.Name.Value)
		return nil, true
	}
	var inside []*specRegion
	for _, o := range regions {
		if slices.Contains(o.groups, g) {
			inside = append(inside, o)
		}
	}
	placed = map[*specRegion][]spec.Transition{}
	for _, e := range t.On {
		to := ruleRegion(g, e, inside, rows, diags)
		if to == nil {
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
	return placed, true
}

// ruleRegion returns the region of inside, the regions under parallel
// state g, whose own state takes g's rule for event e (see groupRule),
// or nil when the rule is refused (reported).
func ruleRegion(g *spec.State, e spec.String, inside []*specRegion, rows []spec.Transition, diags *diag.List) *specRegion {
	if slices.ContainsFunc(listEntries(g), func(n spec.String) bool { return n.Value == e.Value }) {
		diags.Errorf(e.Pos, "parallel state %s lists %s and has a rule for it: remove one of them", g.Name.Value, e.Value)
		return nil
	}
	var takers []string
	var to *specRegion
	for _, o := range inside {
		if in := groupTakes(o.groups[slices.Index(o.groups, g)+1:], e.Value, rows); in != nil {
			diags.Errorf(e.Pos, "parallel state %s has a rule for %s, which parallel state %s, nested in it, has a rule or a list for too: %s takes %s first, so the rule would wait on it; write the rule on %s, or on the states of %s's regions", g.Name.Value, e.Value, in.Name.Value, in.Name.Value, e.Value, in.Name.Value, g.Name.Value)
			return nil
		}
		if by := regionTakes(o, e.Value, rows); by != "" {
			takers = append(takers, by+" (region "+o.root.Name.Value+")")
			to = o
		}
	}
	switch {
	case len(takers) > 1:
		diags.Errorf(e.Pos, "parallel state %s has a rule for %s, which states of several of its regions take (%s): fsmgen takes a nested parallel state's rule for an event at most one of its regions takes only yet; write the rule on the states of those regions that leave %s", g.Name.Value, e.Value, strings.Join(takers, ", "), e.Value)
		return nil
	case to == nil:
		return inside[0]
	case rootNames(to, e.Value, rows):
		diags.Errorf(e.Pos, "parallel state %s has a rule for %s, which %s, the own state of its region, takes in every state: the rule would never reach %s; remove it, or write it on %s", g.Name.Value, e.Value, to.root.Name.Value, g.Name.Value, to.root.Name.Value)
		return nil
	}
	return to
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
		for _, t := range rows {
			if slices.ContainsFunc(t.From, func(n spec.String) bool { return n.Value == g.Name.Value }) && slices.ContainsFunc(t.On, func(n spec.String) bool { return n.Value == e }) {
				return g
			}
		}
	}
	return nil
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
