package fsm

import (
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves the ignore, reject and defer lists of a parallel
// state nested as a region of another (see parnest.go): Media's lists,
// in Run, apply to the states of Media's regions as a list of a state
// around them does. An event reaches Media when no region of Media takes
// it (SCXML 1.0 §3.13: transitions are selected from the atomic states
// up through their ancestors; XState's parallel node falls back to its
// own transitions only when no region has one), and a region's ignore or
// reject counts as a rule that takes the event (see Parallel states in
// docs/spec.md). So Media's list is, in the first of its regions whose
// own state does not name the event, the list of a state around that
// state: a leaf of the region that has no rule of the region for the
// event ignores, rejects or defers it, and the regions' rules, taken
// together, decide as before. That holds for an ignore and a deferral
// whatever the other regions of Media do; a rejection refuses the event
// for the whole machine, so Media's rejection of an event that a state
// of its regions takes otherwise is refused (see groupRejects).

// groupLists gives each entry of the lists of the parallel states nested
// as regions to one region under it (specRegion.lists): the first, in
// document order, whose own state does not name the event (by a list,
// or a row of its own among rows). There the entry is a list of a state
// around the region's own state; the other regions under the nested
// parallel state leave the event, and the regions' rules, taken
// together, decide as the nested parallel state's list would: a
// region's ignore or deferral beside another region's rule lets that
// rule run, and a rejection is refused where a state of the regions
// takes the event otherwise (see groupRejects). An entry an inner
// nested parallel state names too never applies (the inner one takes
// the event first), and is refused.
func groupLists(regions []*specRegion, rows map[*specRegion][]spec.Transition, diags *diag.List) {
	seen := map[*spec.State]bool{}
	for _, r := range regions {
		for _, g := range r.groups {
			if seen[g] {
				continue
			}
			seen[g] = true
			for k, list := range [3][]spec.String{g.Ignore, g.Reject, g.Defer} {
				for _, e := range list {
					if e.Value == "*" {
						diags.Errorf(e.Pos, "parallel state %s, a region of parallel state %s, lists \"*\": fsmgen gives a nested parallel state's lists by name only yet; name the events, or write \"*\" on %s or on the states of %s's regions", g.Name.Value, r.par.Name.Value, r.par.Name.Value, g.Name.Value)
						continue
					}
					if in := innerLists(regions, g, e.Value); in != nil {
						diags.Errorf(e.Pos, "parallel state %s lists %s, which parallel state %s, nested in it, lists too: %s takes %s first in every configuration (SCXML 1.0 §3.13), so it never reaches %s; remove it from one of them", g.Name.Value, e.Value, in.Name.Value, in.Name.Value, e.Value, g.Name.Value)
						continue
					}
					for _, o := range regions {
						if slices.Contains(o.groups, g) && !rootNames(o, e.Value, rows[o]) {
							o.lists[k] = append(o.lists[k], e)
							break
						}
					}
				}
			}
		}
	}
}

// innerLists returns a parallel state nested in g, at any depth, that
// lists event e; nil when none does.
func innerLists(regions []*specRegion, g *spec.State, e string) *spec.State {
	for _, o := range regions {
		i := slices.Index(o.groups, g)
		if i < 0 {
			continue
		}
		for _, in := range o.groups[i+1:] {
			if slices.ContainsFunc(listEntries(in), func(n spec.String) bool { return n.Value == e }) {
				return in
			}
		}
	}
	return nil
}

// rootNames reports whether the own state of region r names event e: in
// its lists ("*" included), or by a row of its own among rows.
func rootNames(r *specRegion, e string, rows []spec.Transition) bool {
	root := r.root
	if slices.ContainsFunc(listEntries(root), func(n spec.String) bool { return n.Value == e || n.Value == "*" }) {
		return true
	}
	return hasRow(root, e, rows)
}

// groupRejects refuses an event a parallel state nested as a region
// rejects while a state inside its regions has
// another rule for it, a row or an ignore or defer list: in the
// configurations where that state takes the event, the event does not
// reach the nested parallel state, but its rejection, written in one of
// its regions (see groupLists), would refuse the event for the whole
// machine beside that state's rule.
func groupRejects(regions []*specRegion, rows map[*specRegion][]spec.Transition, diags *diag.List) {
	seen := map[*spec.State]bool{}
	for _, r := range regions {
		for _, g := range r.groups {
			if seen[g] || len(g.Reject) == 0 {
				continue
			}
			seen[g] = true
			takes := map[string]string{} // event → a state of g's regions that takes it otherwise
			var inside []*specRegion
			for _, o := range regions {
				if slices.Contains(o.groups, g) {
					inside = append(inside, o)
				}
			}
			for _, o := range inside {
				walkStates(o.root, func(s *spec.State) {
					for _, e := range slices.Concat(s.Ignore, s.Defer) {
						if takes[e.Value] == "" {
							takes[e.Value] = s.Name.Value
						}
					}
				})
				for _, t := range rows[o] {
					for _, e := range t.On {
						if takes[e.Value] == "" {
							takes[e.Value] = t.From[0].Value
						}
					}
				}
			}
			for _, e := range g.Reject {
				by := takes[e.Value]
				if by == "" {
					by = takes["*"]
				}
				if by != "" {
					diags.Errorf(e.Pos, "parallel state %s rejects %s, which state %s inside its regions takes otherwise: %s does not reach %s while %s is active, yet %s's rejection, in its regions, would refuse it for the whole machine; reject %s in the states of %s's regions that leave it instead", g.Name.Value, e.Value, by, e.Value, g.Name.Value, by, g.Name.Value, e.Value, g.Name.Value)
				}
			}
		}
	}
}

// walkStates calls f on s and every state inside it, in document order.
func walkStates(s *spec.State, f func(*spec.State)) {
	f(s)
	for i := range s.States {
		walkStates(&s.States[i], f)
	}
}

// listGroup returns, for r, a listed rule of region reg's own state,
// the parallel state nested as a region (of sr's groups) whose list it
// comes from (see groupLists); nil for another rule.
func listGroup(r *Rule, reg *Region, sr *specRegion) *State {
	if !r.Listed || r.From != reg.Root {
		return nil
	}
	if i, _ := sr.listedBy(r.Pos); i >= 0 {
		return reg.Groups[i]
	}
	return nil
}

// listedBy returns the place in r.groups of the parallel state nested as
// a region around r whose ignore, reject or defer list has an entry at
// pos (the innermost, should several), and the entry; -1 when none has.
func (r *specRegion) listedBy(pos diag.Pos) (int, spec.String) {
	for i := len(r.groups) - 1; i >= 0; i-- {
		entries := listEntries(r.groups[i])
		if j := slices.IndexFunc(entries, func(e spec.String) bool { return e.Pos == pos }); j >= 0 {
			return i, entries[j]
		}
	}
	return -1, spec.String{}
}

// listEntries returns the entries of the ignore, reject and defer lists of s.
func listEntries(s *spec.State) []spec.String { return slices.Concat(s.Ignore, s.Reject, s.Defer) }

// relabel names r, a nested parallel state's list entry or rule that a
// region holds, after that state: "Media --Knock--> rejected: Knock is
// not accepted while in Media".
func relabel(r *Rule) {
	if r.Listed && r.Kind == Reject && r.Event != nil {
		r.Reason = r.Event.Name + " is not accepted while in " + r.Group.Name
	}
	r.Label = r.Group.Name + strings.TrimPrefix(RuleLabel(r), r.From.String())
}
