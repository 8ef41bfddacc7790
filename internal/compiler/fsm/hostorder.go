package fsm

import (
	"cmp"
	"slices"
)

// This file orders the done events of a parallel state's regions as
// SCXML raises them (SCXML 1.0 §3.13, enterStates: the states a
// microstep enters, in document order, each final one raising
// done.state of its parent, and of its grandparent when that is a
// <parallel> whose children are all final; mainEventLoop then takes them
// from the internal queue in that order, a microstep each). The done
// event of a composite state inside a region waits as that region (see
// settle); the done event of a parallel state inside a region waits as
// its host region, whose leaf it is while it is active (see hostDone).

// raised returns queue, the regions whose done events wait, followed by
// those the microstep that moved regions moved (leaving p's regions in
// after) raised, in the order SCXML raises them: a region that entered a
// final state whose composite state has a done transition at its place
// in document order, and a parallel state inside a region whose regions
// the microstep made all final (or entered so) at the place of the last
// of them it moved, as its host region.
func (p *State) raised(queue, moved []*Region, after []*State) []*Region {
	type event struct {
		at  int
		reg *Region
	}
	var evs []event
	for _, reg := range moved {
		if s := after[reg.Index]; s != nil && s.Settles() && !s.Eventless() {
			evs = append(evs, event{slices.Index(p.Flat, reg), reg})
		}
	}
	for _, reg := range p.Flat {
		q := reg.Within
		if q == nil || reg != q.Regions[0] || q.Completion == nil || after[reg.Host.Index] != q || !q.completes(after) || slices.Contains(queue, reg.Host) {
			continue
		}
		at := -1
		for _, mv := range moved {
			if mv == reg.Host || slices.Contains(q.Regions, mv) {
				at = max(at, slices.Index(p.Flat, mv))
			}
		}
		if at >= 0 {
			evs = append(evs, event{at, reg.Host})
		}
	}
	slices.SortStableFunc(evs, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	out := slices.Clone(queue)
	for _, ev := range evs {
		out = append(out, ev.reg)
	}
	return out
}

// waitingHost returns the parallel state inside region reg whose done
// event waits as reg (see raised): reg is in it, and every one of its
// regions in a final leaf; nil otherwise.
func waitingHost(reg *Region, after []*State) *State {
	if q := after[reg.Index]; q != nil && q.Regions != nil && q.Completion != nil && q.completes(after) {
		return q
	}
	return nil
}
