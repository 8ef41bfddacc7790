package emit

import (
	"fmt"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// keeps returns the statement that ends rule r, which keeps the machine
// in the state it is in (a rule without a target, or an ignore), when
// that state may wait (fsm.State.Waits): the state's eventless rules are
// tested now, as after every step. in is the leaf the rule is taken in,
// or nil when only the running machine knows (a rule of a composite
// state, a "*" row, a timer's). It returns nil when no state the rule is
// taken in waits.
func (g *goGen) keeps(r *fsm.Rule, in *fsm.State) jen.Code {
	if in == nil && r.From != nil && !r.From.Composite() {
		in = r.From
	}
	switch {
	case in != nil && in.Awaits():
		return jen.Return(waitCall(in, nil))
	case in != nil && in.Waits:
		return jen.Return(jen.Id("m").Dot(leaveMethod(in)).Call())
	case in != nil:
		return nil
	}
	if slices.ContainsFunc(g.m.States, func(s *fsm.State) bool { return waitsAt(s) && (r.From == nil || r.From.Contains(s)) }) {
		g.restUsed = true
		return jen.Return(jen.Id("m").Dot("rest").Call())
	}
	return nil
}

// refusalIn is refusal for a rule taken in state in (see keeps): an
// ignore in a state that waits tests the state's eventless rules after it.
func (g *goGen) refusalIn(r *fsm.Rule, in *fsm.State) jen.Code {
	if r.Kind == fsm.Ignore {
		if end := g.keeps(r, in); end != nil {
			from := core().Dot("State")
			if in != nil {
				from = jen.Id(in.KindName)
			}
			return jen.Add(core().Dot("Start").Call(jen.Lit(r.Index), from), jen.Line(), end)
		}
	}
	return refusal(r)
}

// genRest emits rest, which ends a step of a rule shared by several states
// that keeps the machine where it is, when some of them wait: it tests the
// eventless rules of the one the machine is in.
//
//	func (m *Machine) rest() error {
//		switch m.core.State {
//		case StateHeating:
//			return m.leaveHeating()
//		}
//		return m.core.Finish()
//	}
func (g *goGen) genRest() {
	if !g.restUsed {
		return
	}
	var cases []jen.Code
	for _, s := range g.m.States {
		switch {
		case s.Awaits():
			cases = append(cases, jen.Case(jen.Id(s.KindName)).Block(jen.Return(waitCall(s, nil))))
		case s.Waits:
			cases = append(cases, jen.Case(jen.Id(s.KindName)).Block(jen.Return(jen.Id("m").Dot(leaveMethod(s)).Call())))
		}
	}
	doc := "rest ends the step of a rule that keeps the machine in its state: in a state that waits, it tests the state's eventless rules."
	if slices.ContainsFunc(g.m.States, (*fsm.State).Awaits) {
		doc = "rest ends the step of a rule that keeps the machine in its state: in a state that waits, it tests the state's eventless rules; in a parallel state that waits or whose regions have states that wait, theirs."
	}
	g.f.Add(paragraphs(doc))
	g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("rest").Params().Error().Block(
		jen.Switch(core().Dot("State")).Block(cases...),
		jen.Return(core().Dot("Finish").Call()),
	)
}

// waitDoc is the doc comment of the method that takes the eventless rules
// of state s, which waits.
func waitDoc(s *fsm.State) string {
	return fmt.Sprintf("%s tests the eventless rules of %s, which waits: it takes the first whose guard holds, or leaves the machine in %s when none does.", leaveMethod(s), s.Name, s.Name)
}

// waitsAt reports whether the machine resting in leaf s tests eventless
// rules after a step that keeps it there: s waits, or s is a parallel
// state whose regions have states that wait (fsm.State.WaitsIn).
func waitsAt(s *fsm.State) bool { return s.Waits || s.Awaits() }

// waitMethod names the method that ends a step that keeps the machine in
// parallel state p, which waits or whose regions have states that wait
// (fsm.State.Awaits): waitOn.
func waitMethod(p *fsm.State) string { return "wait" + p.GoName }

// waitCall is the call of p's waitMethod at the end of a step: m.waitOn(),
// or, when p's done transition may rest with every region final
// (fsm.State.RestsFinal), m.waitOn(ended), where ended is the test that
// the step entered p or a final leaf of its regions (nil: it did not), as
// only such a step raises p's done event again (SCXML 1.0 §3.13,
// enterStates).
func waitCall(p *fsm.State, ended jen.Code) *jen.Statement {
	if !p.RestsFinal() {
		return jen.Id("m").Dot(waitMethod(p)).Call()
	}
	if ended == nil {
		ended = jen.False()
	}
	return jen.Id("m").Dot(waitMethod(p)).Call(ended)
}

// genWaitIn emits, for each parallel state that waits or whose regions
// have states that wait, the method that ends every step that keeps the
// machine in it (see waitMethod): the eventless rules of its regions, a
// microstep at a time until none is taken (SCXML 1.0 §3.13: after every
// microstep, the eventless transitions of the configuration are
// selected), then its own, then its done transition when the regions are
// every one final.
//
//	func (m *Machine) waitOn() error {
//		for m.eventlessOn() {
//		}
//		if m.b.Ready() {
//			<rule>
//		}
//		return m.core.Finish()
//	}
func (g *goGen) genWaitIn() {
	for _, p := range g.m.States {
		if !p.Awaits() {
			continue
		}
		doc := fmt.Sprintf("%s ends a step that keeps the machine in %s, whose regions have states that wait "+
			"on eventless rules: it takes the eventless rules of the regions, a microstep at a time, until no guard "+
			"holds (SCXML 1.0 §3.13), after every step, as the guards may hold now.", waitMethod(p), p.Name)
		var params, body []jen.Code
		if hasEventless(p) || mixed(p) {
			body = append(body, settleInner(p.Regions))
		}
		if p.Waits {
			doc = fmt.Sprintf("%s ends a step that keeps the machine in %s, which waits on eventless rules: it tests them "+
				"after every step, as their guards may hold now, and takes the first whose guard holds.", waitMethod(p), p.Name)
			if p.WaitsIn() {
				doc = fmt.Sprintf("%s ends a step that keeps the machine in %s, which waits on eventless rules, as states of "+
					"its regions do: it takes the regions' eventless rules, a microstep at a time, until no guard holds, then "+
					"tests those of %s and takes the first whose guard holds (SCXML 1.0 §3.13: a region's eventless rule "+
					"comes before its parallel state's), after every step, as the guards may hold now.", waitMethod(p), p.Name, p.Name)
			}
			if !ownFirst(p) {
				body = append(body, g.cellBody(p.Choice)...)
			} else {
				doc = fmt.Sprintf("%s ends a step that keeps the machine in %s, which waits on eventless rules: %s "+
					"tests them, with the regions' eventless rules and done transitions, in SCXML's order, after every step, "+
					"as their guards may hold now, and %s takes the first whose guard holds.", waitMethod(p), p.Name, macroMethod(p), quietMethod(p))
			}
			if p.Completion != nil {
				body = append(body, jen.Comment(fmt.Sprintf("// No guard holds: the machine stays in %s, unless it is done.", p.Name)))
			} else {
				body = append(body, jen.Comment(fmt.Sprintf("// No guard holds: the machine stays in %s.", p.Name)))
			}
		}
		switch {
		case p.RestsFinal():
			// A region in a final state stays there while p is active: a
			// step that moved one, or entered p, may have ended the last.
			params = []jen.Code{jen.Id("ended").Bool()}
			doc += fmt.Sprintf(" Ended tells whether the step entered %s or a final state of its regions before: "+
				"the done transition of %s, whose guards may all fail and leave every region final, is taken "+
				"only in a step that ended a region, there or in the eventless rules (SCXML 1.0 §3.13 raises the "+
				"done event as a final state is entered).", p.Name, p.Name)
			body = append([]jen.Code{jen.Id("before").Op(":=").Id("m").Dot("rgn")}, body...)
			body = append(body, g.completionOf(p, nil, func(*fsm.State) jen.Code {
				return jen.Parens(jen.Id("ended").Op("||").Id("m").Dot("rgn").Op("!=").Id("before"))
			}, true))
		case p.Completion != nil:
			body = append(body, g.completion(p, nil))
		}
		body = append(body, jen.Return(core().Dot("Finish").Call()))
		g.f.Add(paragraphs(doc))
		g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id(waitMethod(p)).Params(params...).Error().Block(body...)
	}
}

// waitEntry returns the parallel state whose regions have states that
// wait that rule r enters, nil when none: the step ends with its
// waitMethod, which tests their eventless rules.
func waitEntry(r *fsm.Rule) *fsm.State {
	for _, run := range r.Entries {
		if run.Entry && run.State.Awaits() {
			return run.State
		}
	}
	return nil
}
