package fsm

import (
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves completion (UML 2.5.1 §14.2.3.8.3, completion events;
// SCXML §3.7.1 and §3.13, done.state.ID) at generate time. A leaf marked
// "final: true" completes its composite state; when that state has a
// "done" transition, the leaf's eventless rules are the done transition:
// entering the leaf tests them in the same step, and they leave and enter
// as a rule of the composite state would. The leaf is transient when they
// end with an else (or have no guards); when every guard may fail, the
// done event is dropped (SCXML §3.13) and the machine rests in the leaf
// (see State.Rests).

// finals reads "final" and "done" of every state, once the states are read.
func (b *builder) finals() {
	for _, s := range b.all {
		ss := b.specOf[s]
		if d := ss.Done; d != nil && len(d.Guards) > 0 && d.Says() {
			// As a row's (see transitions): it would be dropped.
			b.errorf(d.Pos, "a done transition with guards keeps to, effect, action, set, with, ignore and reject inside its branches")
			continue
		}
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
		d := b.specOf[s.Parent].Done
		if d == nil {
			continue // the composite state completes, and nothing follows: the leaf rests
		}
		// A final state that may rest keeps to SCXML's <final> too (§3.7:
		// no transitions; fsmgen also keeps its entry and exit off, as
		// for the transient one): its events go to its composite state.
		s.Transient, s.Completes = !mayRefuse(d), s.Parent
		hooked := ss.Entry != nil || ss.Exit != nil || len(ss.After) > 0
		switch {
		case hooked && s.Transient:
			b.errorf(ss.Name.Pos, "final state %s is left in the step that enters it, by the done transition of %s: it has no entry, exit or after; put the actions on done or on the transitions into it", s.Name, s.Parent.Name)
		case hooked:
			b.errorf(ss.Name.Pos, "final state %s completes %s, whose done transition is tested in the step that enters it: it has no entry, exit or after; put the actions on done or on the transitions into it", s.Name, s.Parent.Name)
		}
		for _, l := range [][]spec.String{ss.Ignore, ss.Reject, ss.Defer} {
			if len(l) > 0 && !s.Transient {
				b.errorf(l[0].Pos, "final state %s completes %s, whose done transition is tested in the step that enters it: it has no ignore, reject or defer of its own (SCXML 1.0 §3.7), and the events it is offered when no guard holds go to %s and the states around it; list them there", s.Name, s.Parent.Name, s.Parent.Name)
				break
			}
		}
	}
}

// mayRefuse reports whether every branch of done transition d may be
// refused: it has guards, and none is an else. The done event is then
// dropped (SCXML 1.0 §3.13: an event no transition enables is discarded;
// XState v5's onDone without a fallback alike) and the machine rests in
// the final state that raised it.
func mayRefuse(d *spec.Done) bool {
	return len(d.Guards) > 0 && !slices.ContainsFunc(d.Guards, func(br spec.Branch) bool { return br.Else.Value })
}

// Rests reports whether s is a final state whose composite state's done
// transition may be refused by every guard (see mayRefuse): the step that
// enters s tests the guards (s.Choice), and when none holds the machine
// rests in s, whose events go to the composite state and those around it,
// as from any leaf.
func (s *State) Rests() bool { return s != nil && s.Completes != nil && !s.Transient }

// RestsFinal reports whether parallel state s has a done transition that
// every guard may refuse (see mayRefuse): the step that puts the last
// region in a final state tests the guards, and when none holds the
// machine rests with every region final, each answering events as from
// any of its leaves (the parallel state's rules and those around it).
func (s *State) RestsFinal() bool {
	return s.Completion != nil && s.Completion.Rules[len(s.Completion.Rules)-1].Guard != nil
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
			if b.parallel(s) {
				b.groupDoneRows(s)
			}
			continue
		}
		d := b.specOf[s.Completes].Done
		if len(d.Guards) == 0 && !d.To.Set && !d.Ignore.Set {
			// Reported by finals. (An ignore is the stand-in of one that
			// leaves a parallel state: see parleavedone.go.)
			continue
		}
		t := &spec.Transition{Pos: d.Pos, Outcome: d.Outcome, Guards: d.Guards}
		rules := b.rowRules(t, s, nil)
		if rules == nil {
			continue
		}
		completes(rules, s.Completes)
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
	completes(rules, s)
	if rules != nil {
		if b.parDone == nil {
			b.parDone = map[*State]*pending{}
		}
		b.parDone[s] = &pending{rules: rules, pos: d.Pos}
	}
}

// completes marks rules as the done transition of composite state s
// (their variants into a history, made later, are too: see number).
func completes(rules []*Rule, s *State) {
	for _, r := range rules {
		r.Done = s
	}
}
