package emit

import (
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file orders the done transition of a parallel state inside a
// region among the other done events of the parallel state around (see
// internal/compiler/fsm/hostorder.go): SCXML 1.0 §3.13 raises them in
// the order the states are entered and takes them from the internal
// queue in that order, a microstep each. When nothing outside its host
// region may raise one beside it, its done transition simply follows the
// others (hostCompletion, hostDoneOn); otherwise it waits in macroOn's
// queue as one of them (a slot).

// hostDones returns the parallel states inside the regions of p (at any
// depth) that have a done transition, in document order.
func hostDones(p *fsm.State) []*fsm.State {
	var out []*fsm.State
	for _, reg := range p.Flat {
		if q := hostedDone(reg); q != nil && reg == q.Regions[0] {
			out = append(out, q)
		}
	}
	return out
}

// under reports whether region reg is host or a region of a parallel
// state inside host (at any depth).
func under(reg, host *fsm.Region) bool {
	for ; reg != nil; reg = reg.Host {
		if reg == host {
			return true
		}
	}
	return false
}

// ordered reports whether the done transition of a parallel state inside
// a region of p may wait beside a done event raised outside its host
// region (a composite state's inside another region, or another such
// parallel state's), or raise one in turn (its host region is a region of
// a parallel state inside a region, which it may end): their done
// transitions then go in the order SCXML raised them, in macroOn (see
// genMacro). Inside its host region the
// others never wait beside it: the region is in it or in another state,
// and its regions are all final or none of theirs waits. When p or
// states of its regions wait on eventless rules, their rules are
// selected before each done event of the queue (SCXML 1.0 §3.13), so
// macroOn takes the done transitions too.
func ordered(p *fsm.State) bool {
	if (p.Waits || p.WaitsIn()) && len(hostDones(p)) > 0 {
		return true
	}
	for _, q := range hostDones(p) {
		host := q.Regions[0].Host
		if host.Host != nil {
			// Inside a region of a parallel state inside a region: its
			// done transition may end that region, and raise the done
			// event of the parallel state around.
			return true
		}
		for _, reg := range doneRegions(p) {
			if !under(reg, host) {
				return true
			}
		}
		for _, o := range hostDones(p) {
			if !under(o.Regions[0], host) {
				return true
			}
		}
	}
	return false
}

// slot is one done event macroOn orders: the done transition of a
// composite state inside reg, or, when q is not nil, of parallel state q
// inside a region.
type slot struct {
	reg *fsm.Region
	q   *fsm.State
}

// name is what the docs call the slot: its region or parallel state.
func (s slot) name() string {
	if s.q != nil {
		return s.q.Name
	}
	return s.reg.Root.Name
}

// raisedTest is the test that the slot's done event was raised: its
// region is in a final state whose composite state has a done
// transition, or the host region is in q and every region of q final.
func (s slot) raisedTest() *jen.Statement {
	if s.q != nil {
		return hostRaised(s.q)
	}
	var eqs []*jen.Statement
	for _, l := range s.reg.Leaves {
		if !completes(l) {
			continue
		}
		eq := rgn(s.reg).Op("==").Id(l.KindName)
		if l.Rests() {
			// Raised by the step that entered it only.
			eq = jen.Parens(eq.Op("&&").Add(doneRaised(s.reg)))
		}
		eqs = append(eqs, eq)
	}
	return jen.Parens(anyOf(eqs))
}

// take is the call that takes the slot's done transition.
func (s slot) take() jen.Code {
	if s.q != nil {
		return jen.Id("m").Dot(hostDoneMethod(s.q)).Call()
	}
	return jen.Id("m").Dot(settleMethod(s.reg)).Call()
}

// macroSlots returns the done events macroOn orders for p, in document
// order: the regions of doneRegions, and, when p is ordered, the
// parallel states inside regions with a done transition, each at the
// place of its last region (where SCXML raises its done event: no other
// done event waits between its host region and it).
func macroSlots(p *fsm.State) []slot {
	var out []slot
	for _, reg := range doneRegions(p) {
		out = append(out, slot{reg: reg})
	}
	if !ordered(p) {
		return out
	}
	at := func(s slot) int {
		reg := s.reg
		if s.q != nil {
			reg = s.q.Regions[len(s.q.Regions)-1]
		}
		return slices.Index(p.Flat, reg)
	}
	for _, q := range hostDones(p) {
		out = append(out, slot{q: q})
	}
	slices.SortStableFunc(out, func(a, b slot) int { return at(a) - at(b) })
	return out
}
