package fsm

import (
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
)

// This file checks the states that wait inside the regions of a parallel
// state (State.Waits on a region's leaf): their eventless rules are
// tested after every step that leaves the machine in the parallel state,
// with the eventless rules of the transient states of every region, as
// one microstep (SCXML 1.0 §3.13; see eventless and emit's waitMethod).
// It refuses, naming them, the shapes fsmgen does not write them in yet.

// waitRefusals reports the states that wait inside regions where fsmgen
// does not write them, and whether it reported any: in a region of a
// parallel state inside another's region, or beside one; and the
// parallel states that wait whose regions hold a parallel state. (Beside
// deferrals they are written: a deferral tests nothing, and recall
// follows once the step's eventless rules have settled. Under a history
// inside the region, too: a region's rule into the history tests the
// eventless rules of the state it resumes, and eventlessIntoHistory
// refuses an eventless rule into it.)
func waitRefusals(m *Machine, diags *diag.List) bool {
	refused := false
	for _, p := range m.States {
		if p.Regions == nil || !p.Waits {
			continue
		}
		// (One inside a region is refused by the build: see waits.)
		if len(p.Flat) != len(p.Regions) || slices.ContainsFunc(p.Regions, func(r *Region) bool {
			return slices.ContainsFunc(r.Leaves, func(l *State) bool { return l.Regions != nil })
		}) {
			refused = true
			diags.Errorf(p.Choice.Rules[0].Pos, "parallel state %s waits on eventless transitions, and a region of %s holds a parallel state: fsmgen does not write a parallel state that waits there yet; name the event that moves %s, or write the row from the states of its regions", p.Name, p.Name, p.Name)
		}
	}
	for _, p := range m.States {
		if p.Regions == nil || p.Region != nil || !p.WaitsIn() {
			continue
		}
		for _, reg := range p.Flat {
			for _, s := range reg.Leaves {
				if s.Waits {
					if why := waitShape(p, reg); why != "" {
						refused = true
						diags.Errorf(s.Pos, "state %s waits on eventless transitions inside region %s of parallel state %s, and %s: fsmgen does not write a state that waits there yet; name the event that moves %s", s.Name, reg.Root.Name, p.Name, why, s.Name)
					}
				}
			}
		}
	}
	return refused
}

// waitShape returns why fsmgen does not write the states that wait in
// region reg of parallel state p; "" when it does.
func waitShape(p *State, reg *Region) string {
	switch {
	case reg.Host != nil || reg.Group != nil:
		return "that region belongs to a parallel state inside a region of " + p.Name
	case len(p.Flat) != len(p.Regions) || slices.ContainsFunc(p.Regions, func(r *Region) bool {
		return slices.ContainsFunc(r.Leaves, func(l *State) bool { return l.Regions != nil })
	}):
		return "a region of " + p.Name + " holds a parallel state"
	}
	return ""
}
