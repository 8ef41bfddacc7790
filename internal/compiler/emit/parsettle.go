package emit

import (
	"fmt"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file emits the done transitions of the composite states inside
// regions (see internal/compiler/fsm/parallel.go, State.Settles): a final
// state of such a composite state is a leaf of its region the region
// never rests in, left by the done transition in the step that enters
// it, after the rules that entered it (regionRule, regionsTogether); or,
// when the done transition's guards end without else (State.Rests), one
// it rests in when none holds, the guards tested once, in the step that
// entered it (doneRaised).

// settlesOn reports whether a rule of region reg for e may enter a final
// state whose composite state has a done transition.
func settlesOn(reg *fsm.Region, e *fsm.Event) bool {
	cells, _ := regionCells(reg, e)
	for _, c := range cells {
		for ; c != nil && !c.Out(); c = c.Fallback {
			if slices.ContainsFunc(c.Rules, func(r *fsm.Rule) bool { return settlesTo(r) || (r.To != nil && r.EntersRestless()) }) {
				return true
			}
		}
	}
	return false
}

// settlesTo reports whether rule r, or one of its variants into a
// history (a history beside a done transition resumes the final state it
// remembers), may enter a final state whose composite state has a done
// transition.
func settlesTo(r *fsm.Rule) bool {
	return slices.ContainsFunc(append([]*fsm.Rule{r}, r.Variants...), func(v *fsm.Rule) bool { return v.To != nil && v.To.Settles() })
}

// settleMethod names the method that takes the done transitions of the
// composite states inside region reg: settleDrive.
func settleMethod(reg *fsm.Region) string { return "settle" + reg.Field }

// settles reports whether some leaf of region reg settles: it is a final
// state whose composite state has a done transition.
func settles(reg *fsm.Region) bool { return slices.ContainsFunc(reg.Leaves, completes) }

// settleLoop emits the done transitions that follow a step of regions
// regs, in document order, until none is in a final state whose
// composite state has a done transition: each round takes one done
// transition in each region that needs one, in the order SCXML raises
// their done events (§3.13: entries in document order, each done
// transition a microstep that may raise the next).
//
//	for m.settleDrive() {
//	}
//
// or, for several regions:
//
//	for {
//		settled := !m.settleDrive()
//		settled = !m.settleSound() && settled
//		if settled {
//			break
//		}
//	}
func settleLoop(regs []*fsm.Region) jen.Code {
	inner := settleInner(regs)
	qs := restlessHosts(regs[0].Parallel)
	if len(qs) == 0 || ordered(regs[0].Parallel) {
		// (macroOn takes their done transitions in its queue.)
		return inner
	}
	return jen.Comment("// Then the done transition of a parallel state inside a region whose regions").Line().
		Comment("// all ended, and again (SCXML 1.0 §3.13: after the eventless rules and the").Line().
		Comment("// done events raised before it).").Line().
		For().Block(inner, jen.If(jen.Op("!").Id("m").Dot(hostDonesMethod(regs[0].Parallel)).Call()).Block(jen.Break()))
}

// settleInner is settleLoop without the done transitions of the
// parallel states inside regions.
func settleInner(regs []*fsm.Region) jen.Code {
	if p := regs[0].Parallel; mixed(p) {
		return macroLoop(p)
	} else if hasEventless(p) {
		return eventlessLoop(p) // its regions hold no done transitions
	}
	if len(regs) == 1 && !settleLeaves(regs[0]) {
		return jen.Comment("// A final state whose composite state is done: its done transition.").Line().
			For(jen.Id("m").Dot(settleMethod(regs[0])).Call()).Block()
	}
	if len(regs) == 1 {
		// Its done transition may leave the parallel state (see genSettle).
		return jen.Comment("// A final state whose composite state is done: its done transition.").Line().
			Add(leavingLoop(settleMethod(regs[0]), regs[0].Parallel))
	}
	var body []jen.Code
	declared := false // took and left
	for i, reg := range regs {
		call := jen.Op("!").Id("m").Dot(settleMethod(reg)).Call()
		if settleLeaves(reg) {
			// A done transition that leaves the parallel state ends the
			// step there (see genSettle).
			op := "="
			if !declared {
				op, declared = ":=", true
			}
			body = append(body, jen.List(jen.Id("took"), jen.Id("left")).Op(op).Id("m").Dot(settleMethod(reg)).Call(),
				jen.If(jen.Id("left").Op(">=").Lit(0)).Block(jen.Return(leaveCall(reg.Parallel))))
			call = jen.Op("!").Id("took")
		}
		if i == 0 {
			body = append(body, jen.Id("settled").Op(":=").Add(call))
		} else {
			body = append(body, jen.Id("settled").Op("=").Add(call).Op("&&").Id("settled"))
		}
	}
	body = append(body, jen.If(jen.Id("settled")).Block(jen.Break()))
	return jen.Comment("// Final states whose composite states are done: their done transitions.").Line().
		For().Block(body...)
}

// genSettle emits, for each region with a final state whose composite
// state has a done transition, the method that takes that transition
// (see settleLoop).
func (g *goGen) genSettle() {
	for _, reg := range g.m.Regions {
		if !settles(reg) {
			continue
		}
		var cases []jen.Code
		leaving := settleLeaves(reg)
		for _, s := range reg.Leaves {
			if !completes(s) {
				continue
			}
			one := func(r *fsm.Rule) []jen.Code {
				if r.Leaves != nil {
					// It leaves the parallel state: leaveOn takes it.
					return []jen.Code{jen.Return(jen.False(), jen.Lit(r.Leaves.Index))}
				}
				out := g.hostedLefts(r, map[string]bool{})
				// A history the done transition leaves remembers the
				// final state (SCXML 1.0 §3.10).
				out = append(out, g.regionRemembers(reg, r)...)
				out = append(out, rgn(reg).Op("=").Id(r.To.KindName))
				out = append(out, raiseDone(reg, r.To)...)
				out = append(out, g.hostedSlots(r)...)
				out = append(out, core().Dot("Start").Call(jen.Lit(r.Index), jen.Id(reg.Parallel.KindName)))
				from := jen.Id(s.KindName)
				out = append(out, g.regionActs(r, from, "exits", true)...)
				out = append(out, g.regionActs(r, from, "actions", true)...)
				out = append(out, g.regionActs(r, from, "entries", true)...)
				return append(out, jen.Return(took(leaving, true)...))
			}
			// Into a history: the variant of what it remembers.
			take := g.regionCell(reg, s.Choice, throughVariants(reg, one))
			if s.Rests() {
				// Its done event was raised in this step, or it was
				// tested already: the region rests there.
				take = append([]jen.Code{
					jen.If(jen.Op("!").Add(doneRaised(reg))).Block(jen.Return(took(leaving, false)...)),
					doneRaised(reg).Op("=").False(),
				}, take...)
			}
			cases = append(cases, jen.Case(jen.Id(s.KindName)).Block(take...))
		}
		doc := fmt.Sprintf("%s takes the done transition of the composite state inside region %s whose final "+
			"state the region is in, and reports whether it took one: the region never rests in such a state, but leaves "+
			"it in the step that enters it (SCXML 1.0 §3.7.1, done.state.ID).", settleMethod(reg), reg.Root.Name)
		if restsIn(reg) {
			doc = fmt.Sprintf("%s takes the done transition of the composite state inside region %s whose final "+
				"state the region is in, and reports whether it took one: the step that enters such a state tests it "+
				"(SCXML 1.0 §3.7.1, done.state.ID), once; when no guard holds, the done event is dropped (§3.13) and "+
				"the region rests there.", settleMethod(reg), reg.Root.Name)
		}
		results := jen.Bool()
		if leaving {
			doc += fmt.Sprintf(" A done transition that leaves %s is taken by %s: %s returns its index, moving nothing, "+
				"and -1 otherwise.", reg.Parallel.Name, quietMethod(reg.Parallel), settleMethod(reg))
			results = jen.Parens(jen.List(jen.Bool(), jen.Int()))
		}
		g.f.Add(paragraphs(doc))
		g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id(settleMethod(reg)).Params().Add(results).Block(
			jen.Switch(rgn(reg)).Block(cases...), jen.Return(took(leaving, false)...))
	}
}

// settleLeaves reports whether a done transition of a composite state
// inside region reg leaves its parallel state by some branch (see
// internal/compiler/fsm/parleavedone.go): the region's settle method
// then returns that rule's index too, for leaveOn.
func settleLeaves(reg *fsm.Region) bool {
	return slices.ContainsFunc(reg.Leaves, func(s *fsm.State) bool {
		return completes(s) && slices.ContainsFunc(s.Choice.Rules, func(r *fsm.Rule) bool { return r.Leaves != nil })
	})
}

// took is what a settle method returns: whether it took a done
// transition, and for a region one of whose done transitions leaves its
// parallel state (settleLeaves), -1 for none that leaves.
func took(leaving, yes bool) []jen.Code {
	if leaving {
		return []jen.Code{jen.Lit(yes), jen.Lit(-1)}
	}
	return []jen.Code{jen.Lit(yes)}
}

// restsIn reports whether region reg may rest in a final state whose
// composite state has a done transition (see fsm.State.Rests).
func restsIn(reg *fsm.Region) bool { return slices.ContainsFunc(reg.Leaves, (*fsm.State).Rests) }

// hostRests reports whether region reg holds a parallel state whose done
// transition every guard may refuse, which may rest with every region
// final (see fsm.State.RestsFinal): only the step that makes them so
// raises its done event (doneRaised, as for restsIn).
func hostRests(reg *fsm.Region) bool { return slices.ContainsFunc(reg.Leaves, (*fsm.State).RestsFinal) }

// doneRaised is the Machine's record that the step raised the done event
// of the leaf region reg is in, which may rest there (see restsIn and
// hostRests): the settle method, or the done method of the parallel state
// inside reg, tests the done transition's guards once, when it is set.
func doneRaised(reg *fsm.Region) *jen.Statement {
	return jen.Id("m").Dot("doneRaised").Index(jen.Lit(reg.Index))
}

// raiseDone emits, after a rule enters leaf to of region reg, the record
// that a done event was raised, when to is a final state the region may
// rest in, or a final state of a region of a parallel state inside a
// region that may rest with every region final, and the others are final
// (recorded for its host region).
func raiseDone(reg *fsm.Region, to *fsm.State) []jen.Code {
	if q := hostedDone(reg); q != nil && q.RestsFinal() && slices.Contains(reg.Finals, to) {
		return []jen.Code{jen.If(allFinal(q, reg)).Block(doneRaised(q.Region).Op("=").True())}
	}
	if !to.Rests() {
		return nil
	}
	return []jen.Code{doneRaised(reg).Op("=").True()}
}

// resumeDone emits, after region reg resumes the leaf a deep history
// remembers, the record that its done event was raised when that leaf is
// a final state the region may rest in: entering it anew raises it again
// (SCXML 1.0 §3.10 and §3.13).
//
//	if m.rgn[0] == StatePulled {
//		m.doneRaised[0] = true
//	}
func resumeDone(reg *fsm.Region) []jen.Code {
	var eqs []*jen.Statement
	for _, l := range reg.Leaves {
		if l.Rests() {
			eqs = append(eqs, rgn(reg).Op("==").Id(l.KindName))
		}
	}
	test := anyOf(eqs)
	if test == nil {
		return nil
	}
	return []jen.Code{jen.If(test).Block(doneRaised(reg).Op("=").True())}
}
