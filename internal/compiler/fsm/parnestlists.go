package fsm

import (
	"maps"
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
// docs/spec.md). So Media's list is, in each of its regions, the list of
// a state around the region's own state: a leaf of the region that has
// no rule of the region for the event ignores, rejects or defers it, and
// the regions' rules, taken together, decide as before. That holds for
// an ignore and a deferral whatever the other regions of Media do; a
// rejection refuses the event for the whole machine, so Media's
// rejection of an event that a state of its regions takes otherwise is
// refused (see groupRejects).

// groupLists returns root, the own state of region r, with the lists of
// the parallel states nested as regions that hold r (r.groups), the
// innermost first, for the events neither root nor a group nearer it
// names (by a list, or a row of root's among rows): those lists are the
// lists of states around root.
func groupLists(root spec.State, r *specRegion, rows []spec.Transition) spec.State {
	named := map[string]bool{}
	for _, list := range [][]spec.String{root.Ignore, root.Reject, root.Defer} {
		for _, e := range list {
			named[e.Value] = true
		}
	}
	for _, t := range rows {
		if slices.ContainsFunc(t.From, func(n spec.String) bool { return n.Value == root.Name.Value }) {
			for _, e := range t.On {
				named[e.Value] = true
			}
		}
	}
	root.Ignore, root.Reject, root.Defer = slices.Clone(root.Ignore), slices.Clone(root.Reject), slices.Clone(root.Defer)
	for i := len(r.groups) - 1; i >= 0 && !named["*"]; i-- {
		g := r.groups[i]
		add := map[string]bool{}
		for _, l := range []struct {
			from []spec.String
			to   *[]spec.String
		}{{g.Ignore, &root.Ignore}, {g.Reject, &root.Reject}, {g.Defer, &root.Defer}} {
			for _, e := range l.from {
				switch {
				case named[e.Value]:
				case e.Value == "*":
					// Every other event, the root's own entries of
					// the list among them: "*" stands alone.
					*l.to = []spec.String{e}
				default:
					*l.to = append(*l.to, e)
				}
				add[e.Value] = true
			}
		}
		for e := range add {
			named[e] = true
		}
	}
	return root
}

// groupRejects refuses an event a parallel state nested as a region
// rejects (by name, or by "*") while a state inside its regions has
// another rule for it, a row or an ignore or defer list: in the
// configurations where that state takes the event, the event does not
// reach the nested parallel state, but its rejection, written in each of
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
			listed := map[string]bool{}
			for _, e := range slices.Concat(g.Ignore, g.Defer) {
				listed[e.Value] = true
			}
			for _, e := range g.Reject {
				by := takes[e.Value]
				if e.Value == "*" {
					for _, n := range slices.Sorted(maps.Keys(takes)) {
						if !listed[n] && !slices.ContainsFunc(g.Reject, func(x spec.String) bool { return x.Value == n }) {
							by = takes[n]
							e.Value = n
							break
						}
					}
				} else if by == "" {
					by = takes["*"]
				}
				if by != "" {
					diags.Errorf(e.Pos, "parallel state %s rejects %s, which state %s inside its regions takes otherwise: %s does not reach %s while %s is active, yet %s's rejection in its other regions would refuse it for the whole machine; reject %s in the states of %s's regions that leave it instead", g.Name.Value, e.Value, by, e.Value, g.Name.Value, by, g.Name.Value, e.Value, g.Name.Value)
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
// the parallel state nested as a region (of sr's groups, innermost
// first) whose list it comes from (see groupLists); nil for another rule.
func listGroup(r *Rule, reg *Region, sr *specRegion) *State {
	if !r.Listed || r.From != reg.Root {
		return nil
	}
	for i := len(sr.groups) - 1; i >= 0; i-- {
		g := sr.groups[i]
		if slices.ContainsFunc(slices.Concat(g.Ignore, g.Reject, g.Defer), func(e spec.String) bool { return e.Pos == r.Pos }) {
			return reg.Groups[i]
		}
	}
	return nil
}

// relabel names r, a copy of a nested parallel state's list entry in one
// of its regions, after that state and the region: "Media (Audio)
// --Knock--> rejected: Knock is not accepted while in Media".
func relabel(r *Rule) {
	if r.Kind == Reject && r.Event != nil {
		r.Reason = r.Event.Name + " is not accepted while in " + r.Group.Name
	}
	r.Label = r.Group.Name + " (" + r.From.Name + ")" + strings.TrimPrefix(RuleLabel(r), r.From.String())
}
