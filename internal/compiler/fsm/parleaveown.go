package fsm

import (
	"fmt"
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file takes a parallel state's own rule or list entry for an event
// out of the spec, as the last branches of the row that leaves it from
// inside a region (see parleave.go).

// ownBranches takes parallel state p's own rule for event e out of the
// spec's rows and p's lists, and returns it as the last branches of the
// row that leaves p (see merge): its branches, or its outcome as the
// else branch; its ignore or reject list entry (by name, else "*") as an
// else branch. None when p has neither: the event then goes where p's
// would.
func ownBranches(outer *spec.File, p *spec.State, e string) []spec.Branch {
	par := p.Name.Value
	var out []spec.Branch
	var kept []spec.Transition
	for _, t := range outer.Transitions {
		fi := slices.IndexFunc(t.From, func(n spec.String) bool { return n.Value == par })
		ei := slices.IndexFunc(t.On, func(n spec.String) bool { return n.Value == e })
		if fi < 0 || ei < 0 || out != nil {
			kept = append(kept, t)
			continue
		}
		if len(t.Guards) > 0 {
			out = t.Guards
		} else {
			out = []spec.Branch{{Pos: t.Pos, Else: spec.Bool{Value: true, Pos: t.Pos, Set: true}, Outcome: t.Outcome}}
		}
		if len(t.From) > 1 {
			o := t
			o.From = slices.Delete(slices.Clone(t.From), fi, fi+1)
			kept = append(kept, o)
		}
		if len(t.On) > 1 {
			o := t
			o.From = []spec.String{t.From[fi]}
			o.On = slices.Delete(slices.Clone(t.On), ei, ei+1)
			kept = append(kept, o)
		}
	}
	outer.Transitions = kept
	if out != nil {
		return out
	}
	for i := range outer.States {
		s := unlist(&outer.States[i], par, e)
		if s == nil {
			continue
		}
		if s.Ignore.Set {
			return []spec.Branch{{Pos: s.Ignore.Pos, Else: spec.Bool{Value: true, Pos: s.Ignore.Pos, Set: true}, Outcome: *s}}
		}
		return []spec.Branch{{Pos: s.Reject.Pos, Else: spec.Bool{Value: true, Pos: s.Reject.Pos, Set: true}, Outcome: *s}}
	}
	// Its "*" list, which takes every event p has no rule or list entry
	// for by name: e too, as the row's last branch.
	star := func(n spec.String) bool { return n.Value == "*" }
	if i := slices.IndexFunc(p.Ignore, star); i >= 0 {
		pos := p.Ignore[i].Pos
		return []spec.Branch{{Pos: pos, Else: spec.Bool{Value: true, Pos: pos, Set: true}, Outcome: spec.Outcome{Ignore: spec.Bool{Value: true, Pos: pos, Set: true}}}}
	}
	if i := slices.IndexFunc(p.Reject, star); i >= 0 {
		pos := p.Reject[i].Pos
		return []spec.Branch{{Pos: pos, Else: spec.Bool{Value: true, Pos: pos, Set: true}, Outcome: spec.Outcome{Reject: spec.String{Value: fmt.Sprintf("%s is not accepted in state %s", e, par), Pos: pos, Set: true}}}}
	}
	return nil
}

// unlist removes event e from the ignore and reject lists of the state
// named par among s and the states inside it, and returns the outcome
// that says what the list did; nil when neither lists e.
func unlist(s *spec.State, par, e string) *spec.Outcome {
	if s.Name.Value != par {
		for i := range s.States {
			if o := unlist(&s.States[i], par, e); o != nil {
				return o
			}
		}
		return nil
	}
	for i, n := range s.Ignore {
		if n.Value == e {
			s.Ignore = slices.Delete(slices.Clone(s.Ignore), i, i+1)
			return &spec.Outcome{Ignore: spec.Bool{Value: true, Pos: n.Pos, Set: true}}
		}
	}
	for i, n := range s.Reject {
		if n.Value == e {
			s.Reject = slices.Delete(slices.Clone(s.Reject), i, i+1)
			return &spec.Outcome{Reject: spec.String{Value: fmt.Sprintf("%s is not accepted in state %s", e, par), Pos: n.Pos, Set: true}}
		}
	}
	return nil
}
