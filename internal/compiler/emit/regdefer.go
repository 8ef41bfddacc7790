package emit

import (
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file emits what a machine whose states inside regions defer events
// needs besides a flat machine's deferral (see deferred.go): whether it
// defers an event depends on its regions' leaves, so recall and Load ask
// the configuration, not the state's kind.

// genRegionRecall emits recall for a machine whose states inside regions
// defer events: fsmrt.Recall, asking the configuration:
//
//	func (m *Machine) recall() error {
//		var errs []error
//		for i := 0; i < len(m.deferred); {
//			ev := m.deferred[i]
//			if fsmHolds(m.State(), ev.Kind()) {
//				i++
//				continue
//			}
//			m.deferred = slices.Delete(m.deferred, i, i+1)
//			from, rgn := m.core.State, m.rgn
//			if err := m.dispatch(ev); err != nil {
//				errs = append(errs, m.core.Recalled(ev.Kind(), err))
//			}
//			if m.core.State != from || m.rgn != rgn {
//				i = 0
//			}
//		}
//		return errors.Join(errs...)
//	}
func (g *goGen) genRegionRecall() {
	g.f.Add(paragraphs("recall handles, oldest first, the deferred events the machine's configuration " +
		"(its state and its regions' leaves, see fsmHolds) does not defer, each as if it had just arrived, and " +
		"removes them; after a step that changes the configuration it looks again from the oldest, since the " +
		"new one may defer less. An event that then fails is dropped and reported as a *RecalledError; recall " +
		"returns them all, joined (as fsmrt.Recall does for a state's kind)."))
	ev, kind := jen.Id("ev"), jen.Id("ev").Dot("Kind").Call()
	g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("recall").Params().Error().Block(
		jen.Var().Id("errs").Index().Error(),
		jen.For(jen.Id("i").Op(":=").Lit(0), jen.Id("i").Op("<").Len(jen.Id("m").Dot("deferred")), jen.Empty()).Block(
			ev.Clone().Op(":=").Id("m").Dot("deferred").Index(jen.Id("i")),
			jen.If(jen.Id("fsmHolds").Call(jen.Id("m").Dot("State").Call(), kind.Clone())).Block(
				jen.Id("i").Op("++"),
				jen.Continue()),
			jen.Id("m").Dot("deferred").Op("=").Qual(pkgSlices, "Delete").Call(jen.Id("m").Dot("deferred"), jen.Id("i"), jen.Id("i").Op("+").Lit(1)),
			jen.List(jen.Id("from"), jen.Id("rgn")).Op(":=").List(core().Dot("State"), jen.Id("m").Dot("rgn")),
			jen.If(jen.Err().Op(":=").Id("m").Dot("dispatch").Call(ev.Clone()), jen.Err().Op("!=").Nil()).Block(
				jen.Id("errs").Op("=").Append(jen.Id("errs"), core().Dot("Recalled").Call(kind.Clone(), jen.Err()))),
			jen.If(core().Dot("State").Op("!=").Id("from").Op("||").Id("m").Dot("rgn").Op("!=").Id("rgn")).Block(
				jen.Id("i").Op("=").Lit(0))),
		jen.Return(jen.Qual(pkgErrors, "Join").Call(jen.Id("errs").Op("..."))))
}

// genHolds emits fsmHolds, which says what a configuration defers, and
// fsmHeld and fsmTakes, which it asks of a parallel state whose regions'
// leaves decide what it defers (fsm.Machine.ConfigDeferred):
//
//	func fsmHolds(s State, e EventKind) bool {
//		switch s := s.(type) {
//		case On:
//			return fsmHeld(e, fsmDefers(StateOn, e), s.Sound, s.Band)
//		}
//		return fsmDefers(s.Kind(), e)
//	}
func (g *goGen) genHolds() {
	var cases []jen.Code
	for _, p := range g.m.States {
		if len(g.m.ConfigDeferred(p)) == 0 {
			continue
		}
		own := jen.False()
		if slices.ContainsFunc(g.m.Deferral.States, func(ds fsm.Defers) bool { return ds.State == p }) {
			// What its regions leave to it, the parallel state may defer.
			own = jen.Id("fsmDefers").Call(jen.Id(p.KindName), jen.Id("e"))
		}
		args := []jen.Code{jen.Id("e"), own}
		for _, reg := range p.Flat {
			args = append(args, jen.Id("s").Dot(reg.Field))
		}
		cases = append(cases, jen.Case(jen.Id(p.GoName)).Block(jen.Return(jen.Id("fsmHeld").Call(args...))))
	}
	g.f.Add(paragraphs("fsmHolds reports whether a machine in state s, its regions' leaves included, defers the " +
		"events of kind e: in a parallel state, when no leaf of its regions takes them by a rule that is not a " +
		"deferral (a transition takes precedence over a deferral, UML 2.5.1 §14.2.3.9), and a leaf defers them " +
		"or the parallel state does, for what its regions leave to it; elsewhere, when the state defers them. " +
		"Recall and Load ask it, and dispatch defers by the same rule."))
	g.f.Func().Id("fsmHolds").Params(jen.Id("s").Id("State"), jen.Id("e").Id("EventKind")).Bool().Block(
		jen.Switch(jen.Id("s").Op(":=").Id("s").Assert(jen.Type())).Block(cases...),
		jen.Return(jen.Id("fsmDefers").Call(jen.Id("s").Dot("Kind").Call(), jen.Id("e"))))

	takes := g.genRegionTakes()
	loop := []jen.Code{jen.Id("held").Op("=").Id("held").Op("||").Id("fsmDefers").Call(jen.Id("k"), jen.Id("e"))}
	doc := "fsmHeld reports whether a parallel state whose regions are in leaves rgn, one for each region, " +
		"defers the events of kind e, own telling whether it defers them itself: one of the leaves does, or own."
	if takes {
		loop = append([]jen.Code{jen.If(jen.Id("fsmTakes").Call(jen.Id("k"), jen.Id("e"))).Block(jen.Return(jen.False()))}, loop...)
		doc = "fsmHeld reports whether a parallel state whose regions are in leaves rgn, one for each region, " +
			"defers the events of kind e, own telling whether it defers them itself: none of the leaves takes them " +
			"by a rule that is not a deferral, and one of them defers them, or own."
	}
	g.f.Add(paragraphs(doc))
	g.f.Func().Id("fsmHeld").Params(jen.Id("e").Id("EventKind"), jen.Id("own").Bool(), jen.Id("rgn").Op("...").Id("StateKind")).Bool().Block(
		jen.Id("held").Op(":=").Id("own"),
		jen.For(jen.List(jen.Id("_"), jen.Id("k")).Op(":=").Range().Id("rgn")).Block(loop...),
		jen.Return(jen.Id("held")))
}

// genRegionTakes emits fsmTakes, which says which leaves of regions take an
// event that a leaf of another region of their parallel state, or the
// parallel state, may defer, by a transition, an ignore or a reject; it
// reports whether there is one (none: nothing is emitted):
//
//	func fsmTakes(k StateKind, e EventKind) bool {
//		switch k {
//		case StateFm:
//			return e == EventTraffic
//		}
//		return false
//	}
func (g *goGen) genRegionTakes() bool {
	var sw kindSwitch
	for _, p := range g.m.States {
		deferred := g.m.ConfigDeferred(p)
		for _, reg := range p.Flat {
			for _, s := range reg.Leaves {
				var events []*fsm.Event
				for _, e := range deferred {
					if s.RegionTakes(e) {
						events = append(events, e)
					}
				}
				if len(events) == 0 {
					continue
				}
				sw.add(events, s.KindName)
			}
		}
	}
	if len(sw.groups) == 0 {
		return false
	}
	cases := sw.cases()
	g.f.Add(paragraphs("fsmTakes reports whether leaf k of a region takes the events of kind e, which a state " +
		"of another region of its parallel state or the parallel state defers, by a rule of its region that is " +
		"not a deferral: beside it, the deferral does not hold them."))
	g.f.Func().Id("fsmTakes").Params(jen.Id("k").Id("StateKind"), jen.Id("e").Id("EventKind")).Bool().Block(
		jen.Switch(jen.Id("k")).Block(cases...),
		jen.Return(jen.False()))
	return true
}

// takesNone reports whether every rule region reg has for e defers it or
// leaves the parallel state (Rule.Leaves): the region takes no rule of
// its own for e.
func takesNone(reg *fsm.Region, e *fsm.Event) bool {
	cells, _ := regionCells(reg, e)
	for _, c := range cells {
		for ; c != nil && !c.Out(); c = c.Fallback {
			if slices.ContainsFunc(c.Rules, func(r *fsm.Rule) bool { return r.Kind != fsm.Defer && r.Leaves == nil }) {
				return false
			}
		}
	}
	return true
}

// defersOn reports whether a leaf of one of the regions inv defers e.
func defersOn(inv []*fsm.Region, e *fsm.Event) bool {
	for _, reg := range inv {
		cells, _ := regionCells(reg, e)
		for _, c := range cells {
			for ; c != nil && !c.Out(); c = c.Fallback {
				if slices.ContainsFunc(c.Rules, func(r *fsm.Rule) bool { return r.Kind == fsm.Defer }) {
					return true
				}
			}
		}
	}
	return false
}
