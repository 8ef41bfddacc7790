package fsm

import "github.com/fsmgen/fsmgen/internal/compiler/spec"

// waits accepts the eventless row t of from, a leaf that is not
// transient: from then waits (State.Waits), its guards tested after every
// step that leaves the machine in it. It reports, and returns false, what
// such a row cannot be.
func (b *builder) waits(t *spec.Transition, from *State) bool {
	switch {
	case from.Final || from.Terminal:
		kind := "final"
		if from.Terminal {
			kind = "terminal"
		}
		b.errorf(t.Pos, "transition from %s has no \"on\": %s is %s, and a %s state has no transitions out of it", from.Name, from.Name, kind, kind)
	case b.par.inRegion() || from.Region != nil:
		b.errorf(t.Pos, "transition from %s has no \"on\": %s is inside a region of a parallel state, where a state that waits on eventless transitions is not supported yet; name the event that moves %s, or mark it \"transient: true\" if it is left in the step that enters it", from.Name, from.Name, from.Name)
	case len(t.Guards) == 0:
		b.errorf(t.Pos, "transition from %s has no \"on\" and no guard, so it leaves in the step that enters %s: mark %s \"transient: true\", or guard the transition with \"if\" so that it waits until the guard holds", from.Name, from.Name, from.Name)
	case t.Guards[len(t.Guards)-1].Else.Set:
		b.errorf(t.Guards[len(t.Guards)-1].Pos, "the eventless transition of %s ends with else, so it leaves in the step that enters %s: mark %s \"transient: true\", or remove the else so that %s waits until a guard holds", from.Name, from.Name, from.Name, from.Name)
	default:
		from.Waits = true
		return true
	}
	return false
}
