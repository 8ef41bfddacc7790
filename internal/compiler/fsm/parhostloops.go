package fsm

import (
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
)

// This file refuses eventless rules that could loop through a parallel
// state Q inside a region within one step: a state of the region that
// waits leads into Q, the eventless rules of Q's regions may end every
// one of them in that step, and Q's done transition leads back to the
// state that waits. The region's own loop check (check.go) sees Q as a
// leaf whose done transition is no eventless rule of its own, and
// eventlessLoops follows the rules that leave the parallel state around;
// this one follows Q's regions. As those checks, it cannot tell that
// guards never hold together, and refuses every such loop.

// hostedLoops reports, and returns whether it found, eventless rules
// that could loop through a parallel state inside a region.
func hostedLoops(m *Machine, diags *diag.List) bool {
	explored := map[*State]bool{} // on no loop
	var visit func(s *State, path []*State) bool
	visit = func(s *State, path []*State) bool {
		if i := slices.Index(path, s); i >= 0 {
			j := slices.IndexFunc(path[i:], func(q *State) bool { return q.Regions != nil })
			if j < 0 {
				return false // check.go's
			}
			names := make([]string, 0, len(path)-i+1)
			for _, q := range path[i:] {
				names = append(names, q.Name)
			}
			diags.Errorf(s.Pos, "eventless transitions could loop without an event while their guards hold: %s → %s, through the eventless rules inside the regions of parallel state %s and its done transition: the checker cannot tell that their guards never hold together, so name the event that moves one of them (a row with \"on\"), or lead one elsewhere", strings.Join(names, " → "), s.Name, path[i+j].Name)
			return true
		}
		if explored[s] {
			return false
		}
		path = append(path, s)
		for _, r := range hostedNext(s) {
			for _, v := range append([]*Rule{r}, r.Variants...) {
				if v.Kind != Transition || v.To == nil {
					continue
				}
				to := v.To
				if to.Region == nil {
					continue // out of the parallel state: eventlessLoops'
				}
				if q := to.Region.Within; to.Region != s.Region && q != nil && q.Region == s.Region {
					to = q // a state inside a parallel state inside the region
				}
				if to.Region == s.Region && visit(to, path) {
					return true
				}
			}
		}
		explored[s] = true
		return false
	}
	for _, reg := range m.Regions {
		if reg.Host != nil {
			continue // (a region of a parallel state inside a region: its host's visit goes in)
		}
		for _, s := range reg.Leaves {
			if s.Waits && visit(s, nil) {
				return true
			}
		}
	}
	return false
}

// hostedNext returns the rules a leaf s of a region goes on by in the
// step that enters it: its eventless rules and done transitions (its
// Choice), or, for a parallel state inside the region with a done
// transition, that transition when the eventless rules of its regions
// may end every one of them in that step.
func hostedNext(s *State) []*Rule {
	if s.Regions == nil {
		if s.Choice == nil {
			return nil
		}
		return s.Choice.Rules
	}
	if s.Completion == nil {
		return nil
	}
	for _, reg := range s.Regions {
		if !endsQuietly(reg) {
			return nil
		}
	}
	return s.Completion.Rules
}

// endsQuietly reports whether region reg may reach a final leaf from one
// of its leaves by eventless rules alone (the states that wait and the
// transient states of the region): its initial state, or any, as a rule
// may target a state inside it or a history resume one.
func endsQuietly(reg *Region) bool {
	for _, l := range reg.Leaves {
		if slices.Contains(reg.Finals, l) {
			continue
		}
		seen := map[*State]bool{}
		queue := []*State{l}
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			if seen[x] {
				continue
			}
			seen[x] = true
			if slices.Contains(reg.Finals, x) {
				return true
			}
			if x.Choice == nil {
				continue
			}
			for _, r := range x.Choice.Rules {
				for _, v := range append([]*Rule{r}, r.Variants...) {
					if v.Kind == Transition && v.To != nil && v.To.Region == reg {
						queue = append(queue, v.To)
					}
				}
			}
		}
	}
	return false
}
