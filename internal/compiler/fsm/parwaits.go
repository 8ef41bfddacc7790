package fsm

import (
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
)

// This file checks the states that wait inside the regions of a parallel
// state (State.Waits on a region's leaf), and the parallel state's own
// eventless rules: they are tested after every step that leaves the
// machine in the parallel state, with the eventless rules of the
// transient states of every region, as one microstep (SCXML 1.0 §3.13;
// see eventless and emit's waitMethod). It refuses, naming them, the
// shapes fsmgen does not write them in yet.

// waitRefusals reports the states that wait inside regions where fsmgen
// does not write them, and whether it reported any: beside a parallel
// state nested as a region that has a done transition (its done event
// would wait among the eventless rules, which fsmgen does not order); and
// a parallel state's own eventless rule that may leave while a done event
// inside its regions waits, under a history that would remember the
// region in that final state. (Beside parallel states inside the regions
// or nested in them, and in their regions, they are written: the done
// event of a parallel state inside a region waits in the internal queue
// while the eventless rules are tested, see emit's ordered. Beside
// deferrals they are written: a deferral tests nothing, and recall
// follows once the step's eventless rules have settled. Under a history
// inside the region, too: a region's rule into the history tests the
// eventless rules of the state it resumes, and eventlessIntoHistory
// refuses an eventless rule into it.)
func waitRefusals(m *Machine, diags *diag.List) bool {
	refused := false
	for _, p := range m.States {
		if p.Regions == nil || p.Region != nil || !p.Waits {
			continue
		}
		if q := nestedDone(p); q != nil {
			refused = true
			diags.Errorf(p.Choice.Rules[0].Pos, "parallel state %s waits on eventless transitions, and parallel state %s, nested in %s as a region, has a done transition: fsmgen does not order its done event among eventless rules yet; name the event that moves %s, or write %s's done transition from the states of its regions on an event", p.Name, q.Name, p.Name, p.Name, q.Name)
			continue
		}
		// Its rules are tested before each done event of its regions
		// (emit's ownFirst), so a rule may leave a region in a final
		// state whose done transition was still to come: as a region's
		// eventless rule that leaves, where no history may remember it.
		if !slices.ContainsFunc(p.Flat, func(reg *Region) bool { return slices.ContainsFunc(reg.Leaves, (*State).awaitsDone) }) {
			continue
		}
		for _, r := range p.Choice.Rules {
			if why := heldShape(p); why != "" {
				refused = true
				diags.Errorf(r.Pos, "rule %s leaves parallel state %s, whose eventless rules are tested while the done event of a state inside its regions waits, and %s: fsmgen does not write such a rule there yet; name the event that moves %s", r.Label, p.Name, why, p.Name)
			}
		}
	}
	for _, p := range m.States {
		if p.Regions == nil || p.Region != nil || !p.WaitsIn() {
			continue
		}
		q := nestedDone(p)
		if q == nil {
			continue
		}
		for _, reg := range p.Flat {
			for _, s := range reg.Leaves {
				if s.Waits {
					refused = true
					diags.Errorf(s.Pos, "state %s waits on eventless transitions inside region %s of parallel state %s, and parallel state %s, nested in %s as a region, has a done transition, whose done event would wait while the eventless rules are tested: fsmgen does not write a state that waits there yet; name the event that moves %s", s.Name, reg.Root.Name, p.Name, q.Name, p.Name, s.Name)
				}
			}
		}
	}
	return refused
}

// nestedDone returns a parallel state nested in p as a region that has a
// done transition, nil when none: SCXML 1.0 §3.13 takes its done event
// once no eventless rule is enabled, which fsmgen writes for the done
// events of composite states and of parallel states inside regions
// (emit's macroOn) but not yet for these.
func nestedDone(p *State) *State {
	for _, q := range p.Nested() {
		if q.Completion != nil {
			return q
		}
	}
	return nil
}

// awaitsDone reports whether leaf s of a region is a final state whose
// composite state's, or parallel state's, done transition leaves it in
// the step that enters it: its done event waits in the internal queue
// while the eventless rules are tested.
func (s *State) awaitsDone() bool {
	if s.Completes != nil {
		return true
	}
	q := s.Region.Within
	return s.Final && q != nil && q.Completion != nil
}
