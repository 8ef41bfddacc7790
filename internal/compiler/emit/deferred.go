package emit

import (
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// genRecallingHandleEvent emits the HandleEvent of a machine with deferred
// events: dispatch takes the rule for ev, and when the step changed the
// state and events are held, recall handles those the new state does not
// defer:
//
//	func (m *Machine) HandleEvent(ev Event) error {
//		if m.core.Busy {
//			return m.core.Reentrant()
//		}
//		from := m.core.State
//		if err := m.dispatch(ev); err != nil || m.core.State == from || len(m.deferred) == 0 {
//			return err
//		}
//		return m.recall()
//	}
func (g *goGen) genRecallingHandleEvent() {
	regions := ""
	if g.m.ConfigDefers() {
		regions = " In a parallel state, what the machine defers depends on its regions' states: an event " +
			"one of them, or the parallel state, defers is kept when no state of the regions takes it by " +
			"another rule, and a step that changes the state of a region recalls as one that changes the " +
			"state does."
	}
	g.f.Add(paragraphs(
		"HandleEvent feeds ev to the machine: the rule for the current state and ev "+
			"decides the next state, runs its effect and hands its actions to the Handler, in "+
			"order, before HandleEvent returns. A rejected event returns a *RejectedError and "+
			"changes nothing, as does a nil event a rule would read; an ignored one returns nil. "+
			"The machine keeps no reference to ev. HandleEvent must not be called from a Handler "+
			"or observer method.",
		"An event the current state defers is kept, a copy, until the machine is in a state "+
			"that does not defer it; one more than the spec's defer_limit is refused (an error "+
			"wrapping fsmrt.ErrDeferLimit) and changes nothing. Once a step has changed the state, "+
			"HandleEvent handles, before it returns, each deferred event the new state does not "+
			"defer, oldest first, as if it had just arrived: their actions follow ev's. A deferred "+
			"event that then fails is dropped and reported as a *RecalledError (wrapping "+
			"fsmrt.ErrRecalled), after ev was taken."+regions))
	from := []jen.Code{jen.Id("from").Op(":=").Add(core().Dot("State"))}
	same := core().Dot("State").Op("==").Id("from")
	if g.m.ConfigDefers() {
		// The configuration: the state and its regions' leaves.
		from = []jen.Code{jen.List(jen.Id("from"), jen.Id("rgn")).Op(":=").List(core().Dot("State"), jen.Id("m").Dot("rgn"))}
		same = jen.Parens(core().Dot("State").Op("==").Id("from").Op("&&").Id("m").Dot("rgn").Op("==").Id("rgn"))
	}
	g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("HandleEvent").Params(jen.Id("ev").Id("Event")).Error().Block(
		jen.If(core().Dot("Busy")).Block(jen.Return(core().Dot("Reentrant").Call())),
		jen.Add(from...),
		jen.If(jen.Err().Op(":=").Id("m").Dot("dispatch").Call(jen.Id("ev")), jen.Err().Op("!=").Nil().Op("||").Add(same).Op("||").Len(jen.Id("m").Dot("deferred")).Op("==").Lit(0)).Block(jen.Return(jen.Err())),
		jen.Return(jen.Id("m").Dot("recall").Call()))
}

// genDeferral emits what a machine with deferred events needs besides
// HandleEvent: push, which keeps a deferred event; recall; fsmDefers,
// which says what each state defers; loadDeferred, for Load; and
// Deferred, which lists the events the machine holds.
func (g *goGen) genDeferral() {
	d := g.m.Deferral
	if d == nil {
		return
	}
	f := g.f
	f.Comment("// push defers ev by rule i: the machine keeps a copy of it, made through its")
	f.Comment("// JSON form, until it is in a state that does not defer it.")
	f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("push").Params(jen.Id("i").Int(), jen.Id("ev").Id("Event")).Error().Block(
		jen.If(jen.Len(jen.Id("m").Dot("deferred")).Op(">=").Id("fsmDesc").Dot("DeferLimit")).Block(jen.Return(core().Dot("Full").Call(jen.Id("i")))),
		jen.List(jen.Id("c"), jen.Err()).Op(":=").Add(rt("CopyEvent")).Call(jen.Op("&").Id("fsmDesc"), jen.Id("ev"), jen.Id("UnmarshalEvent")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Id("m").Dot("deferred").Op("=").Append(jen.Id("m").Dot("deferred"), jen.Id("c")),
		jen.Return(core().Dot("Defer").Call(jen.Id("i"))))

	if g.m.ConfigDefers() {
		g.genRegionRecall()
	} else {
		f.Comment("// recall handles the deferred events the current state does not defer: see")
		f.Comment("// fsmrt.Recall.")
		f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("recall").Params().Error().Block(
			jen.Return(rt("Recall").Call(jen.Op("&").Id("m").Dot("core"), jen.Op("&").Id("m").Dot("deferred"), jen.Id("fsmDefers"), jen.Id("m").Dot("dispatch"))))
	}

	g.genDefers(d)
	state, defers := jen.Id("k").Id("StateKind"), jen.Id("fsmDefers").Call(jen.Id("k"), jen.Id("ev").Dot("Kind").Call())
	if g.m.ConfigDefers() {
		g.genHolds()
		state, defers = jen.Id("s").Id("State"), jen.Id("fsmHolds").Call(jen.Id("s"), jen.Id("ev").Dot("Kind").Call())
	}

	if g.m.ConfigDefers() {
		f.Comment("// loadDeferred reads the deferred events of saved data, strictly, for a machine")
		f.Comment("// in state s, its regions' leaves included: each must be one s defers in this")
		f.Comment("// revision.")
	} else {
		f.Comment("// loadDeferred reads the deferred events of saved data, strictly, for a machine")
		f.Comment("// in state k: each must be one k defers in this revision.")
	}
	kind := jen.Id("k")
	if g.m.ConfigDefers() {
		kind = jen.Id("s").Dot("Kind").Call()
	}
	f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("loadDeferred").Params(jen.Id("data").Index().Byte(), state).Error().Block(
		jen.List(jen.Id("q"), jen.Err()).Op(":=").Add(rt("LoadDeferred")).Call(jen.Op("&").Id("fsmDesc"), jen.Id("data"), jen.Id("UnmarshalEvent")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.For(jen.List(jen.Id("_"), jen.Id("ev")).Op(":=").Range().Id("q")).Block(
			jen.If(jen.Op("!").Add(defers)).Block(
				jen.Return(jen.Id("fsmDesc").Dot("NotDeferred").Call(kind, jen.Id("ev").Dot("Kind").Call())))),
		jen.Id("m").Dot("deferred").Op("=").Id("q"),
		jen.Return(jen.Nil()))

	f.Add(paragraphs("Deferred returns the kinds of the events the machine has deferred and holds, " +
		"oldest first: those it handles once it is in a state that does not defer them (Save saves them " +
		"with their data)."))
	f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("Deferred").Params().Index().Id("EventKind").Block(
		jen.Id("out").Op(":=").Make(jen.Index().Id("EventKind"), jen.Lit(0), jen.Len(jen.Id("m").Dot("deferred"))),
		jen.For(jen.List(jen.Id("_"), jen.Id("ev")).Op(":=").Range().Id("m").Dot("deferred")).Block(
			jen.Id("out").Op("=").Append(jen.Id("out"), jen.Id("ev").Dot("Kind").Call())),
		jen.Return(jen.Id("out")))
}

// genDefers emits fsmDefers, the deferral table as a switch; states that
// defer the same events share a case:
//
//	func fsmDefers(k StateKind, e EventKind) bool {
//		switch k {
//		case StateIdle, StateConnecting:
//			return e == EventSend
//		}
//		return false
//	}
func (g *goGen) genDefers(d *fsm.Deferral) {
	var sw kindSwitch
	for _, ds := range d.States {
		sw.add(ds.Events, ds.State.KindName)
	}
	cases := sw.cases()
	g.f.Comment("// fsmDefers reports whether state k defers the events of kind e.")
	g.f.Func().Id("fsmDefers").Params(jen.Id("k").Id("StateKind"), jen.Id("e").Id("EventKind")).Bool().Block(
		jen.Switch(jen.Id("k")).Block(cases...),
		jen.Return(jen.False()))
}

// kindSwitch builds the cases of a switch on a state's kind that answers
// whether an event's kind is one of a set: states with the same set share
// a case (fsmDefers, fsmTakes).
type kindSwitch struct{ groups []kindGroup }

// kindGroup is the states of one case and their events.
type kindGroup struct {
	events []*fsm.Event
	kinds  []jen.Code
}

// add puts state kind in the case of events, opening it if it is new.
func (sw *kindSwitch) add(events []*fsm.Event, kind string) {
	i := slices.IndexFunc(sw.groups, func(gr kindGroup) bool { return slices.Equal(gr.events, events) })
	if i < 0 {
		sw.groups = append(sw.groups, kindGroup{events: events})
		i = len(sw.groups) - 1
	}
	sw.groups[i].kinds = append(sw.groups[i].kinds, jen.Id(kind))
}

// cases returns the switch's cases: each returns whether e is one of its
// events.
func (sw *kindSwitch) cases() []jen.Code {
	var cases []jen.Code
	for _, gr := range sw.groups {
		var eqs []*jen.Statement
		for _, e := range gr.events {
			eqs = append(eqs, jen.Id("e").Op("==").Id(e.KindName))
		}
		cases = append(cases, jen.Case(gr.kinds...).Block(jen.Return(anyOf(eqs))))
	}
	return cases
}

// saveDeferred is the body of Save for a machine with deferred events:
// what save saves, and the events the machine holds.
func saveDeferred(save jen.Code) []jen.Code {
	return []jen.Code{
		jen.List(jen.Id("data"), jen.Err()).Op(":=").Add(save),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		jen.Return(rt("SaveDeferred").Call(jen.Op("&").Id("fsmDesc"), jen.Id("data"), jen.Id("m").Dot("deferred"))),
	}
}
