package fsm

import (
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// waits accepts the eventless row t of from, a leaf that is not
// transient: from then waits (State.Waits), its guards tested after every
// step that leaves the machine in it. It reports, and returns false, what
// such a row cannot be.
func (b *builder) waits(t *spec.Transition, from *State) bool {
	switch {
	case from.Final || from.Terminal:
		kind := kindOf(from)
		b.errorf(t.Pos, "transition from %s has no \"on\": %s is %s, and a %s state has no transitions out of it", from.Name, from.Name, kind, kind)
	case b.parallel(from) && b.par.inRegion():
		b.errorf(t.Pos, "transition from %s has no \"on\": %s is a parallel state inside a region of another, and fsmgen does not write a parallel state that waits there yet; name the event that moves %s, or write the row from the states of its regions", from.Name, from.Name, from.Name)
	case len(t.Guards) == 0 && b.parallel(from):
		b.errorf(t.Pos, "transition from %s has no \"on\" and no guard, so it would leave parallel state %s in the step that enters it: guard the transition with \"if\" so that %s waits until the guard holds", from.Name, from.Name, from.Name)
	case len(t.Guards) == 0:
		b.errorf(t.Pos, "transition from %s has no \"on\" and no guard, so it leaves in the step that enters %s: mark %s \"transient: true\", or guard the transition with \"if\" so that it waits until the guard holds", from.Name, from.Name, from.Name)
	case t.Guards[len(t.Guards)-1].Else.Set && b.parallel(from):
		b.errorf(t.Guards[len(t.Guards)-1].Pos, "the eventless transition of parallel state %s ends with else, so it would leave %s in the step that enters it: remove the else so that %s waits until a guard holds", from.Name, from.Name, from.Name)
	case t.Guards[len(t.Guards)-1].Else.Set:
		b.errorf(t.Guards[len(t.Guards)-1].Pos, "the eventless transition of %s ends with else, so it leaves in the step that enters %s: mark %s \"transient: true\", or remove the else so that %s waits until a guard holds", from.Name, from.Name, from.Name, from.Name)
	default:
		from.Waits, from.parWaits = true, b.parallel(from)
		return true
	}
	return false
}

// aroundRows are the rules a composite state's eventless row gives one
// leaf inside it (see compositeWaits).
type aroundRows struct {
	owner *State
	rules []*Rule
}

// compositeWaits accepts the eventless row t of composite state c: every
// leaf inside it waits on the row, after its own eventless rows and those
// of the composite states inside c around it, as SCXML 1.0 §3.13 selects
// an atomic state's eventless transitions before its ancestors'
// (selectEventlessTransitions). Each leaf takes the row as rules of its
// own, as a row from the list of c's leaves would give it.
func (b *builder) compositeWaits(t *spec.Transition, c *State) {
	var leaves []*State
	for _, s := range b.m.States {
		if !s.Composite() && s != c && c.Contains(s) {
			leaves = append(leaves, s)
		}
	}
	bad := slices.IndexFunc(leaves, func(s *State) bool { return s.Final || s.Terminal || b.parallel(s) && b.par.inRegion() })
	switch {
	case b.parallel(c):
		b.errorf(t.Pos, "transition from %s has no \"on\": %s is a parallel state or a composite state inside a region of one, which cannot wait on eventless transitions yet; name the event that moves it, or write the row from the leaves inside it (a leaf inside a region may wait)", c.Name, c.Name)
	case bad >= 0:
		b.errorf(t.Pos, "transition from composite state %s has no \"on\": every state inside %s would wait on it, and %s is %s (a state that waits is neither final nor terminal, nor yet a parallel state inside a region); write the row from the states inside %s that may wait on it", c.Name, c.Name, leaves[bad].Name, kindOf(leaves[bad]), c.Name)
	case len(t.Guards) == 0:
		b.errorf(t.Pos, "transition from composite state %s has no \"on\" and no guard, so it would leave %s in the step that enters it: guard it with \"if\" so that the states inside %s wait until the guard holds", c.Name, c.Name, c.Name)
	case t.Guards[len(t.Guards)-1].Else.Set:
		b.errorf(t.Guards[len(t.Guards)-1].Pos, "the eventless transition of composite state %s ends with else, so it would leave %s in the step that enters it: remove the else so that the states inside %s wait until a guard holds", c.Name, c.Name, c.Name)
	default:
		for i := range t.Guards {
			// (A branch out of the region is a stand-in without a target
			// by now, the parallel state's rule for each state inside c:
			// see parleaveeventless.go.)
			if to := t.Guards[i].To; to.Set {
				if s := b.states[to.Value]; s != nil && c.Contains(s) || to.Value == c.Name+historySuffix {
					b.errorf(to.Pos, "the eventless transition of composite state %s leads to %s, inside it: its states would take it again after it, forever while the guard holds; lead it out of %s", c.Name, to.Value, c.Name)
					return
				}
			}
		}
		if b.around == nil {
			b.around = map[*State][]aroundRows{}
		}
		for _, a := range b.around[leaves[0]] {
			if a.owner == c {
				b.errorf(t.Pos, "%s is already handled at %s: two transitions for one pair can both fire; merge them into one transition with guards", pairName(c, nil), a.rules[0].Pos)
				return
			}
		}
		for _, s := range leaves {
			if s.Transient {
				continue // left by its own rows, which end with else
			}
			s.Waits, s.parWaits = true, b.parallel(s)
			rules := b.rowRules(t, s, nil)
			if rules == nil {
				return // reported at the row, for its first leaf
			}
			for _, r := range rules {
				r.Around = c
			}
			b.around[s] = append(b.around[s], aroundRows{owner: c, rules: rules})
		}
	}
}

// waitRules returns the eventless rules of leaf s, whose own eventless
// rows are p (nil: none): p's, then those of the composite states around
// it that it waits on, innermost first.
func (b *builder) waitRules(s *State, p *pending) []*Rule {
	var out []*Rule
	if p != nil {
		out = append(out, p.rules...)
	}
	around := slices.Clone(b.around[s])
	slices.SortStableFunc(around, func(x, y aroundRows) int { return y.owner.Depth - x.owner.Depth })
	for _, a := range around {
		out = append(out, a.rules...)
	}
	return out
}

// kindOf names what keeps leaf s from waiting: "final", "terminal" or
// "parallel" (see builder.parallel).
func kindOf(s *State) string {
	switch {
	case s.Final:
		return "final"
	case s.Terminal:
		return "terminal"
	}
	return "parallel"
}
