package fsm

import (
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
)

// This file resolves the deferrals of the states inside regions (UML
// 2.5.1 §14.2.3.4.5, deferred events; §14.5.9, a State's
// deferrableTriggers). A region's deferral is a rule of the region, as
// its ignore and reject are: it preempts the rules of the parallel state
// and of the states around it (the innermost rule decides). Beside it,
// another region's transition, ignore or reject for the event takes the
// event, and nothing is deferred: an event that triggers a transition of
// the active configuration is not deferred (§14.2.3.9). So the
// configuration of a parallel state defers an event when no region's
// leaf takes it and some region's leaf defers it, or the parallel state
// does (by a list of its own or of a state around it, for what its
// regions leave to it); the leaves of the regions of a parallel state
// inside a region count as the others while their host is in it.

// regionDeferral lays out the deferrals of a region's build: each leaf's
// deferred events, as the machine's deferral does, with no queue of its
// own (the machine's holds them, see joinRegionDeferrals). It notes the
// deferrals no state of the region frees (stuck), which the machine
// checks against the other regions. The transient states and done
// transitions inside the regions settle them within the step (see
// regtrans.go), before recall asks the configuration what it defers.
func (b *builder) regionDeferral() {
	m := b.m
	d := &Deferral{}
	for _, s := range m.States {
		if s.Transient {
			continue
		}
		ds := Defers{State: s}
		for _, e := range m.Events {
			c := cellFor(s, e)
			if c == nil || len(c.Rules) != 1 || c.Rules[0].Kind != Defer {
				continue
			}
			ds.Events, ds.Rules = append(ds.Events, e), append(ds.Rules, c.Rules[0])
			if !slices.Contains(d.Events, e) {
				d.Events = append(d.Events, e)
			}
		}
		if len(ds.Events) > 0 {
			d.States = append(d.States, ds)
		}
	}
	if len(d.States) == 0 {
		return
	}
	slices.SortFunc(d.Events, func(a, c *Event) int { return a.Index - c.Index })
	succ := b.successors()
	for _, ds := range d.States {
		reach := reachable(ds.State, succ)
		for i, e := range ds.Events {
			if !slices.ContainsFunc(reach, func(t *State) bool { return !t.Transient && !d.Defers(t, e) }) {
				d.stuck = append(d.stuck, stuckDeferral{ds.State, e, ds.Rules[i]})
			}
		}
	}
	for _, s := range m.States {
		for _, c := range s.Handles {
			b.deferFallback(c)
		}
	}
	m.Deferral = d
}

// stuckDeferral is a deferral of a region's leaf that no state the region
// can reach from it frees: only another region, or leaving the parallel
// state, may take its event.
type stuckDeferral struct {
	state *State
	event *Event
	rule  *Rule
}

// regionDeferrals reports whether some state inside a region defers an
// event.
func regionDeferrals(regions []*specRegion) bool {
	return slices.ContainsFunc(regions, func(r *specRegion) bool { return r.build.Deferral != nil })
}

// joinRegionDeferrals adds the deferrals of the states inside regions to
// the machine's, once the regions are joined (the machine's build made
// m.Deferral, knowing that regions defer), and checks them as the
// machine's: some state takes a transition on each event a region's
// state defers, a region's state that defers an event can be freed of
// it, and no guards of a region decide whether its parallel state's
// configuration defers the event.
func joinRegionDeferrals(m *Machine, regions []*specRegion, diags *diag.List) {
	if m.Deferral == nil {
		return
	}
	d := m.Deferral
	b := &builder{m: m}
	succ := b.successors()
	reported := map[*Rule]bool{}
	for _, sr := range regions {
		sub := sr.build.Deferral
		if sub == nil {
			continue
		}
		for _, ds := range sub.States {
			for i, e := range ds.Events {
				ds.Events[i] = eventNamed(m, e)
			}
			d.States = append(d.States, ds)
		}
		for _, e := range sub.Events {
			e = eventNamed(m, e)
			if !slices.Contains(d.Events, e) {
				d.Events = append(d.Events, e)
				if !slices.ContainsFunc(m.AllRules(), func(r *Rule) bool { return r.Event == e && r.Kind == Transition }) {
					diags.Errorf(sub.States[0].Rules[0].Pos, "%s is deferred, and no state has a transition for it: add a transition on %s to the state that should take it, or ignore it instead of deferring it", e.Name, e.Name)
				}
			}
		}
		for _, st := range sub.stuck {
			e := eventNamed(m, st.event)
			p := st.state.Region.Parallel
			if reported[st.rule] || takenBeside(st.state.Region, e) || slices.ContainsFunc(reachable(p, succ), func(t *State) bool { return t != p && d.freedIn(t, e) }) {
				continue
			}
			reported[st.rule] = true
			diags.Errorf(st.rule.Pos, "%s defers %s, and every state it can reach defers %s too, no other region of %s takes it, and %s is never left for a state that does not defer it: the event would wait forever; add a way to a state that takes %s, or ignore it", st.state.Name, e.Name, e.Name, p.Name, p.Name, e.Name)
		}
	}
	slices.SortFunc(d.Events, func(a, c *Event) int { return a.Index - c.Index })
	for _, p := range m.States {
		guessedDeferrals(p, d, diags)
	}
}

// takenBeside reports whether a region of reg's parallel state other than
// reg has a rule for e in some leaf, not a deferral: it may take e.
func takenBeside(reg *Region, e *Event) bool {
	for _, o := range reg.Parallel.Flat {
		if o == reg {
			continue
		}
		for _, s := range o.Leaves {
			if c := s.Cell(e); c != nil && !c.Out() && !deferCell(c) {
				return true
			}
		}
	}
	return false
}

// deferCell reports whether a region's cell defers its event.
func deferCell(c *Cell) bool { return len(c.Rules) == 1 && c.Rules[0].Kind == Defer }

// RegionTakes reports whether leaf s of a region takes e by a rule of its
// region that is not a deferral (a transition, an ignore or a reject,
// whatever its guards answer): beside it, no region's deferral holds e.
func (s *State) RegionTakes(e *Event) bool {
	c := s.Cell(e)
	return s.Region != nil && c != nil && !c.Out() && !deferCell(c)
}

// guessedDeferrals refuses, in parallel state p, the guards of a region's
// rule for an event p's configuration may defer (a state of its regions
// defers it, or p does) that may all fail and leave the event to p:
// whether the configuration defers the event would then depend on the
// guards, which recall cannot ask.
func guessedDeferrals(p *State, d *Deferral, diags *diag.List) {
	for _, e := range d.Events {
		deferrer := ""
		for _, reg := range p.Flat {
			for _, s := range reg.Leaves {
				if deferrer == "" && d.Defers(s, e) {
					deferrer = "while " + s.Name + ", in a region of " + p.Name + ","
				}
			}
		}
		if deferrer == "" && len(p.Flat) > 0 && d.Defers(p, e) {
			deferrer = "which"
		}
		if deferrer == "" {
			continue
		}
		seen := map[*Cell]bool{}
		for _, reg := range p.Flat {
			for _, s := range reg.Leaves {
				c := s.Cell(e)
				if c == nil || c.Out() || inside(c) || seen[c] {
					continue
				}
				seen[c] = true
				diags.Errorf(c.Rules[0].Pos, "parallel states and deferred events together: the guards of %s end without an else branch and leave %s to %s, %s defers %s: whether %s is deferred would depend on the guards, which recall cannot ask; add \"- else: true\"", cellName(c), e.Name, p.Name, deferrer, e.Name, e.Name)
			}
		}
	}
}

// freedIn reports whether the machine, in leaf t of the machine, may take
// e: t does not defer it, or t is a parallel state that defers it only in
// the configurations whose leaves leave it to t (a leaf of its regions
// takes e).
func (d *Deferral) freedIn(t *State, e *Event) bool {
	if t.Transient {
		return false
	}
	return !d.Defers(t, e) || slices.ContainsFunc(t.Flat, func(reg *Region) bool {
		return slices.ContainsFunc(reg.Leaves, func(s *State) bool { return s.RegionTakes(e) })
	})
}

// ConfigDefers reports whether what the machine defers depends on its
// regions' leaves, not on its state's kind alone: a state inside a region
// defers an event, or a parallel state defers one that a state of its
// regions takes (see ConfigDeferred).
func (m *Machine) ConfigDefers() bool {
	return slices.ContainsFunc(m.States, func(p *State) bool { return len(m.ConfigDeferred(p)) > 0 })
}

// ConfigDeferred returns, in event order, the events whose deferral in
// parallel state p depends on its regions' leaves: those a leaf of its
// regions defers, and those p defers (by a list of its own or of a
// composite state around it) that a leaf of its regions takes, which p
// holds only while no such leaf is active. Whether the configuration
// defers one is the rule of fsmHolds (UML 2.5.1 §14.2.3.9, a transition
// takes precedence over a deferral): no leaf of its regions takes it by a
// rule that is not a deferral, and a leaf or p defers it.
func (m *Machine) ConfigDeferred(p *State) []*Event {
	d := m.Deferral
	if d == nil || len(p.Flat) == 0 {
		return nil
	}
	var out []*Event
	for _, e := range d.Events {
		own := d.Defers(p, e)
		for _, reg := range p.Flat {
			if slices.ContainsFunc(reg.Leaves, func(s *State) bool { return d.Defers(s, e) || own && s.RegionTakes(e) }) {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// defers reports whether the leaves of region reg decide whether its
// parallel state defers an event: one of them defers it, or takes an
// event the parallel state defers (by a list of its own or of a state
// around it), which it then holds only beside the other leaves.
func (reg *Region) defers() bool {
	p := reg.Parallel
	var left []*Cell
	for _, c := range append(slices.Clone(p.Refuses), p.Inherited...) {
		if deferCell(c) {
			left = append(left, c)
		}
	}
	return slices.ContainsFunc(reg.Leaves, func(s *State) bool {
		return slices.ContainsFunc(s.Refuses, deferCell) || slices.ContainsFunc(s.Inherited, deferCell) ||
			slices.ContainsFunc(left, func(c *Cell) bool { return s.RegionTakes(c.Event) })
	})
}
