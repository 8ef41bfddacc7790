package fsm

import "github.com/fsmgen/fsmgen/internal/compiler/spec"

// This file resolves completion (UML 2.5.1 §14.2.3.8.3, completion events;
// SCXML §3.7.1 and §3.13, done.state.ID) at generate time. A leaf marked
// "final: true" completes its composite state; when that state has a
// "done" transition, the leaf is a transient state whose eventless rule is
// the done transition: entering the leaf takes it in the same step, and it
// leaves and enters as a rule of the composite state would.

// finals reads "final" and "done" of every state, once the states are read.
func (b *builder) finals() {
	for _, s := range b.all {
		ss := b.specOf[s]
		if ss.Done != nil {
			if b.parallel(s) {
				b.parallelDone(s, ss.Done)
			} else if !s.Composite() {
				b.errorf(ss.Done.Pos, "state %s has a done transition, but no states inside it to complete: put done on a composite state", s.Name)
			} else if !hasFinal(b, s) {
				b.errorf(ss.Done.Pos, "composite state %s has a done transition, but no final child, so it can never complete: mark the child that completes it \"final: true\"", s.Name)
			} else if len(ss.Done.Guards) == 0 && !ss.Done.To.Set && !ss.Done.Ignore.Set && !ss.Done.Reject.Set {
				b.errorf(ss.Done.Pos, "the done transition of %s must leave its final state: give it \"to\"", s.Name)
			}
		}
		if !ss.Final.Value {
			continue
		}
		switch {
		case s.Composite():
			b.errorf(ss.Final.Pos, "composite state %s cannot be final: mark the leaf inside it that completes it", s.Name)
			continue
		case s.Parent == nil:
			b.errorf(ss.Final.Pos, "state %s is final, but only a state inside a composite state completes it: at the top level, use \"terminal: true\"", s.Name)
			continue
		case ss.Initial.Value:
			b.errorf(ss.Final.Pos, "state %s cannot be final and initial: %s would complete as it is entered", s.Name, s.Parent.Name)
			continue
		case s.Terminal || s.Transient:
			b.errorf(ss.Final.Pos, "state %s cannot be final and terminal or transient: final already says how it is left", s.Name)
			continue
		}
		s.Final = true
		if b.specOf[s.Parent].Done == nil {
			continue // the composite state completes, and nothing follows: the leaf rests
		}
		if ss.Entry != nil || ss.Exit != nil || len(ss.After) > 0 {
			b.errorf(ss.Name.Pos, "final state %s is left in the step that enters it, by the done transition of %s: it has no entry, exit or after; put the actions on done or on the transitions into it", s.Name, s.Parent.Name)
		}
		s.Transient, s.Completes = true, s.Parent
	}
}

// parallelDone checks the done transition of parallel state s, taken
// when every region of s is in a final state (SCXML 1.0 §3.4 and §3.13,
// done.state.ID of a <parallel>; regionsOf checks that every region has
// one): it leaves s, from every branch.
func (b *builder) parallelDone(s *State, d *spec.Done) {
	if !leaves(d) {
		b.errorf(d.Pos, "the done transition of parallel state %s must leave its final states and %s: give it \"to\" (in every branch)", s.Name, s.Name)
	}
}

// leaves reports whether done transition d leaves its state in every
// branch: each has "to", and none ignores or rejects.
func leaves(d *spec.Done) bool {
	if len(d.Guards) == 0 {
		return d.To.Set && !d.Ignore.Set && !d.Reject.Set
	}
	for _, br := range d.Guards {
		if !br.To.Set || br.Ignore.Set || br.Reject.Set {
			return false
		}
	}
	return true
}

// hasFinal reports whether composite state s has a child marked final.
func hasFinal(b *builder, s *State) bool {
	for _, c := range s.Children {
		if b.specOf[c].Final.Value {
			return true
		}
	}
	return false
}

// finals returns the final leaves of a composite state that complete it.
func (s *State) finals() []*State {
	var out []*State
	for _, c := range s.Children {
		if c.Completes == s {
			out = append(out, c)
		}
	}
	return out
}

// doneRows makes the done transition of every composite state that has
// one: the eventless rules of each of its final leaves.
func (b *builder) doneRows() {
	for _, s := range b.all {
		if s.Completes == nil {
			b.parallelDoneRows(s)
			continue
		}
		d := b.specOf[s.Completes].Done
		if len(d.Guards) == 0 && !d.To.Set {
			continue // reported by finals
		}
		t := &spec.Transition{Pos: d.Pos, Outcome: d.Outcome, Guards: d.Guards}
		rules := b.rowRules(t, s, nil)
		if rules == nil {
			continue
		}
		for _, r := range rules {
			r.Done = s.Completes
		}
		if prev := b.eventless[s.Index]; prev != nil {
			b.errorf(prev.pos, "final state %s is left by the done transition of %s (%s): it has no transitions of its own", s.Name, s.Completes.Name, d.Pos)
			continue
		}
		b.eventless[s.Index] = &pending{rules: rules, pos: d.Pos}
	}
}

// parallelDoneRows makes the done transition of parallel state s, when it
// has one: eventless rules of s itself, which leave s as its rows do (its
// regions, then s), and which the generated code takes in the step that
// puts the last region in a final state.
func (b *builder) parallelDoneRows(s *State) {
	d := b.specOf[s].Done
	if d == nil || !b.parallel(s) || !leaves(d) {
		return
	}
	t := &spec.Transition{Pos: d.Pos, Outcome: d.Outcome, Guards: d.Guards}
	rules := b.rowRules(t, s, nil)
	for _, r := range rules {
		r.Done = s
	}
	if rules != nil {
		b.eventless[s.Index] = &pending{rules: rules, pos: d.Pos}
	}
}
