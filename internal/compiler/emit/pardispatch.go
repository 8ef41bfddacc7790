package emit

import (
	"fmt"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file emits how a parallel state offers an event to its regions (see
// parallel.go).

// regionsMethod names the method that offers an event to the regions of
// parallel state s: regionsOn.
func regionsMethod(s *fsm.State) string { return "regions" + s.GoName }

// involved reports whether some leaf of region reg has a rule of the
// region for e.
func involved(reg *fsm.Region, e *fsm.Event) bool {
	for _, s := range reg.Leaves {
		if c := s.Cell(e); c != nil && !c.Out() {
			return true
		}
	}
	return false
}

// regionCells returns the cells of region reg for e that the region
// resolves itself, each with the leaves that take it, in leaf order.
func regionCells(reg *fsm.Region, e *fsm.Event) ([]*fsm.Cell, map[*fsm.Cell][]*fsm.State) {
	var cells []*fsm.Cell
	leaves := map[*fsm.Cell][]*fsm.State{}
	for _, s := range reg.Leaves {
		c := s.Cell(e)
		if c == nil || c.Out() {
			continue
		}
		if leaves[c] == nil {
			cells = append(cells, c)
		}
		leaves[c] = append(leaves[c], s)
	}
	return cells, leaves
}

// readsEvent reports whether a cell, or one it falls back to, reads its
// event.
func readsEvent(c *fsm.Cell) bool {
	for ; c != nil; c = c.Fallback {
		if c.ReadsEvent {
			return true
		}
	}
	return false
}

// genRegions emits, for each parallel state, the method that offers an
// event to its regions, region by region in document order:
//
//	func (m *Machine) regionsOn(ev Event) error {
//		switch ev := ev.(type) {
//		case *Play: // one region has rules for Play
//			switch m.rgn[0] {
//			case StateStopped, StatePaused:
//				<the rule>
//			}
//		case *Reset: // several: see regionsTogether
//		case *Power: // no region has rules for Power: On's own
//			<On's rule>
//		}
//		return m.otherwise(ev) // what On ignores or rejects, or leaves to a "*" row
//	}
func (g *goGen) genRegions() {
	if len(g.m.States) <= splitAbove {
		return // HandleEvent holds the regions' rules: see genHandleEvent
	}
	for _, p := range g.m.States {
		if p.Regions == nil {
			continue
		}
		var regions []string
		for _, reg := range p.Regions {
			regions = append(regions, reg.Root.Name)
		}
		g.f.Add(paragraphs(fmt.Sprintf("%s offers ev to the regions of the parallel state %s, %s, in document order; "+
			"the rules of the regions that have one for it are taken as one step (SCXML 1.0 §3.13). When none has, "+
			"%s's own rules decide.", regionsMethod(p), p.Name, list(regions), p.Name)))
		g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id(regionsMethod(p)).Params(jen.Id("ev").Id("Event")).Error().Block(
			append(g.regionsDispatch(p), jen.Return(jen.Id("m").Dot("otherwise").Call(jen.Id("ev"))))...)
	}
}

// regionsDispatch returns parallel state p's switch over the events, each
// offered to the regions with rules for it, then to p's own rules (see
// genRegions).
func (g *goGen) regionsDispatch(p *fsm.State) []jen.Code {
	var evCases []jen.Code
	bound := false
	own := map[*fsm.Event]*fsm.Cell{}
	for _, c := range stateCells(p) {
		// (Without the rules the regions' chains take: see leaveBody.)
		own[c.Event] = fsm.OwnChain(p, c.Event)
	}
	for _, e := range g.m.Events {
		var inv []*fsm.Region
		for _, reg := range p.Flat {
			if involved(reg, e) {
				inv = append(inv, reg)
			}
		}
		c := own[e]
		if len(inv) == 0 && c == nil {
			continue
		}
		var body []jen.Code
		reads := false
		for _, reg := range inv {
			cells, _ := regionCells(reg, e)
			for _, c := range cells {
				reads = reads || readsEvent(c)
			}
		}
		if reads {
			bound = true
			body = append(body, jen.If(jen.Id("ev").Op("==").Nil()).Block(jen.Return(core().Dot("NilEvent").Call(jen.Id("ev")))))
		}
		switch {
		case len(inv) == 1:
			body = append(body, g.regionSwitch(inv[0], e)...)
		case len(inv) > 1:
			body = append(body, g.regionsTogether(inv, e)...)
		}
		// No region has a rule: the parallel state's own (see
		// genHandleEvent).
		switch {
		case c == nil:
		case direct(c) && !g.inline(c):
			bound = true
			body = append(body, jen.Return(jen.Id("m").Dot(takeMethod(c)).Call(jen.Id("ev"))))
		default:
			bound = bound || g.usesEvent(c)
			body = append(body, g.cellBody(c)...)
		}
		evCases = append(evCases, jen.Case(jen.Op("*").Id(e.GoName)).Block(body...))
	}
	if len(evCases) == 0 {
		return nil
	}
	subject := jen.Id("ev").Assert(jen.Type())
	if bound {
		subject = jen.Id("ev").Op(":=").Id("ev").Assert(jen.Type())
	}
	return []jen.Code{jen.Switch(subject).Block(evCases...)}
}

// regionSwitch emits the rules of the one region that has rules for e:
//
//	switch m.rgn[0] {
//	case StateStopped, StatePaused:
//		<the cell's rules, see regionCell>
//	}
func (g *goGen) regionSwitch(reg *fsm.Region, e *fsm.Event) []jen.Code {
	cells, leaves := regionCells(reg, e)
	var cases []jen.Code
	for _, c := range cells {
		var ks []jen.Code
		for _, s := range leaves[c] {
			ks = append(ks, jen.Id(s.KindName))
		}
		cases = append(cases, jen.Case(ks...).Block(g.regionCell(reg, c, func(r *fsm.Rule) []jen.Code { return g.regionRule(reg, r) })...))
	}
	return []jen.Code{jen.Switch(rgn(reg)).Block(cases...)}
}

// regionCell emits the rules of a region's cell through body: one rule,
// or a switch over its guards, whose default, for a chain without else,
// is the cell it falls back to within the region (none: the event goes on
// to the parallel state). The fallback is the switch's default, not the
// code after it: body may pick a rule without returning (see
// regionsTogether). A branch that leaves the parallel state (Rule.Leaves)
// is body's too: the region takes nothing, and the parallel state's rule
// for it does where no region before it took a transition.
func (g *goGen) regionCell(reg *fsm.Region, c *fsm.Cell, body func(*fsm.Rule) []jen.Code) []jen.Code {
	if len(c.Rules) == 1 && c.Rules[0].Guard == nil {
		return append([]jen.Code{comment("", c.Rules[0].Label)}, body(c.Rules[0])...)
	}
	var cases []jen.Code
	var only jen.Code // the one guarded rule, when nothing else is
	for _, r := range c.Rules {
		b := append([]jen.Code{comment("", r.Label)}, body(r)...)
		if r.Guard == nil {
			cases = append(cases, jen.Default().Block(b...))
			continue
		}
		test := g.guardTest(r)
		cases = append(cases, jen.Case(test).Block(b...))
		only = jen.If(test).Block(b...)
	}
	if f := c.Fallback; f != nil && !f.Out() {
		fall := append([]jen.Code{jen.Comment("// No guard holds: the rule of " + f.Owner.Name + ".")}, g.regionCell(reg, f, body)...)
		cases = append(cases, jen.Default().Block(fall...))
	}
	if len(cases) == 1 && only != nil {
		// One guard, nothing else: an if reads better than a switch.
		return []jen.Code{only}
	}
	return []jen.Code{jen.Switch().Block(cases...)}
}

// guardTest is the test of a rule's guard: the Behavior's method, or for
// In(State) the test of the state's region.
func (g *goGen) guardTest(r *fsm.Rule) jen.Code {
	var test jen.Code
	if in := r.Guard.In; in != nil {
		test = inTest(r, in)
	} else {
		test = jen.Id("m").Dot("b").Dot(r.Guard.GoName).Call(g.values(r.GuardArgs)...)
	}
	if in := r.SourceIn; in != nil {
		// A branch of the guards of a rule that leaves a parallel state
		// from inside a region: where its region is in its source.
		return jen.Add(within(rgn(in.In.Region), in.In)).Op("&&").Add(test)
	}
	return test
}

// readsLeaf reports whether run, an exit or entry of a region's rule,
// runs only from some of the rule's states and hands out something
// (its actions, or the exits and entries of the regions of a parallel
// state inside a region): its code then tests the leaf the rule leaves.
func (g *goGen) readsLeaf(run *fsm.Run) bool {
	if run.When == nil {
		return false
	}
	if runDoes(run) {
		return true
	}
	always := *run
	always.When = nil
	return len(g.runActions(&always, nil)) > 0
}

// regionFrom is the leaf a region's rule leaves, which its exits and
// entries run from only some states test: its source, or, for a rule of a
// composite state, the region's leaf, read into a local when tested.
func (g *goGen) regionFrom(reg *fsm.Region, r *fsm.Rule) (jen.Code, []jen.Code) {
	if !r.From.Composite() {
		return jen.Id(r.From.KindName), nil
	}
	for _, run := range append(append([]*fsm.Run{}, r.Exits...), r.Entries...) {
		if g.readsLeaf(run) {
			return jen.Id("from"), []jen.Code{jen.Id("from").Op(":=").Add(rgn(reg))}
		}
	}
	return nil, nil
}

// regionRule emits one rule of a region taken alone:
//
//	m.rgn[0] = StatePlaying
//	m.core.Start(7, StateStopped) // the observer's step: From the region's leaf, To the parallel state
//	m.h.StartAudio()              // exits, the rule's actions, entries
//	return m.core.Finish()
func (g *goGen) regionRule(reg *fsm.Region, r *fsm.Rule) []jen.Code {
	if r.Leaves != nil {
		// A branch that leaves the parallel state, in the one region
		// with rules for the event: the parallel state's rule for it.
		return g.ruleBody(r.Leaves)
	}
	if r.Kind == fsm.Ignore && reg.Parallel.Awaits() {
		// The states that wait test their eventless rules after it.
		return []jen.Code{core().Dot("Start").Call(jen.Lit(r.Index), jen.Id(reg.Parallel.KindName)),
			jen.Return(waitCall(reg.Parallel, nil))}
	}
	if r.Kind != fsm.Transition {
		return []jen.Code{refusal(r)}
	}
	if len(r.Variants) > 0 {
		return g.regionHistory(reg, r)
	}
	from, out := g.regionFrom(reg, r)
	inline := inPlace(r)
	if !inline {
		out = append(out, g.regionCompute(r)...)
	}
	out = append(out, g.regionRemembers(reg, r)...)
	out = append(out, g.hostedLefts(r, map[string]bool{})...)
	if r.To != nil {
		out = append(out, rgn(reg).Op("=").Id(r.To.KindName))
		out = append(out, raiseDone(reg, r.To)...)
	}
	out = append(out, g.hostedSlots(r)...)
	out = append(out, core().Dot("Start").Call(jen.Lit(r.Index), jen.Id(reg.Parallel.KindName)))
	out = append(out, g.regionActs(r, from, "exits", inline)...)
	out = append(out, g.regionActs(r, from, "actions", inline)...)
	out = append(out, g.regionActs(r, from, "entries", inline)...)
	if reg.Parallel.Awaits() {
		// Its eventless rules and done transition follow (see
		// waitMethod).
		return append(out, jen.Return(waitCall(reg.Parallel, jen.Lit(endsRegion(r)))))
	}
	moved := reg
	if r.To != nil && (r.To.Settles() || r.EntersRestless()) {
		out = append(out, settleLoop([]*fsm.Region{reg}))
		moved = nil // the done transition may have moved it anywhere
		if hostsMayEnd(reg.Parallel) && !endsRegion(r) {
			// A parallel state's done inside it may have ended its host.
			out = append(out, g.completion(reg.Parallel, nil))
		}
	}
	switch {
	case endsHosted(r) && ordered(reg.Parallel):
		// Its done event waits with the others (see ordered).
		out = append(out, macroLoop(reg.Parallel))
		if hostsMayEnd(reg.Parallel) && !endsRegion(r) {
			out = append(out, g.completion(reg.Parallel, nil))
		}
	case endsHosted(r):
		q := hostedDone(reg)
		out = append(out, g.hostCompletion(q, reg)...)
		if hostEnds(q) {
			out = append(out, g.completion(reg.Parallel, nil))
		}
	}
	switch {
	case endsRegion(r) && moved == nil:
		out = append(out, g.completionAfter(reg))
	case endsRegion(r):
		out = append(out, g.completion(reg.Parallel, moved))
	}
	return append(out, jen.Return(core().Dot("Finish").Call()))
}

// endsRegion reports whether region rule r may end its region (enter a
// final leaf of it, at once or through the done transitions of the
// composite states inside it), whose parallel state has a done
// transition.
func endsRegion(r *fsm.Rule) bool {
	return r.Kind == fsm.Transition && slices.ContainsFunc(append([]*fsm.Rule{r}, r.Variants...), func(v *fsm.Rule) bool {
		// (a variant into a history may resume a final state)
		return v.To != nil && v.To.Ends() && len(v.To.Region.Completions()) > 0
	})
}

// endsOn reports whether a rule of region reg for e enters a final leaf
// that completes its parallel state.
func endsOn(reg *fsm.Region, e *fsm.Event) bool {
	cells, _ := regionCells(reg, e)
	for _, c := range cells {
		for ; c != nil && !c.Out(); c = c.Fallback {
			if slices.ContainsFunc(c.Rules, endsRegion) {
				return true
			}
		}
	}
	return false
}

// completionAfter is completion after a rule of region reg and the
// eventless rules and done transitions that followed it, which may have
// moved reg anywhere. They moved no other region: every other one was at
// rest, in no transient state and in no final state whose done
// transition is still to be taken. So the parallel states nested in reg's
// that do not hold reg ended no region in the step and are left out: one
// that rests with every region final does not take its done transition
// again (its done event was raised when the last of them ended: SCXML
// 1.0 §3.13, enterStates raises it on entering a final state).
func (g *goGen) completionAfter(reg *fsm.Region) jen.Code {
	return g.completionIn(reg.Parallel, nil, reg, nil, false)
}

// completion emits the test, after a step of the regions of parallel state
// p that may put the last of them in a final leaf, that takes p's done
// transition when every region is in one (SCXML 1.0 §3.4 and §3.13), in
// the same step; moved is the region the step moved, known to be final,
// or nil when several moved. The done transitions of the parallel states
// nested as p's regions come first, in document order (each is raised
// before p's, and leaves p; see fsm's parnestdone.go), those of the ones
// that do not hold moved left out:
//
//	// Every region final: Processing is done.
//	if m.rgn[0] == StateSettled {
//		return m.doneProcessing()
//	}
func (g *goGen) completion(p *fsm.State, moved *fsm.Region) jen.Code {
	return g.completionOf(p, moved, nil, false)
}

// completionOf is completion where took, when not nil, gives for each
// nested parallel state whose done transition may rest (RestsFinal), and
// for p itself too with own, the test that the step ended one of its
// regions, nil when it cannot have: such a one may rest with its regions
// final, and only the step that ends one raises its done event again
// (SCXML 1.0 §3.13, enterStates: entering a final state raises it).
func (g *goGen) completionOf(p *fsm.State, moved *fsm.Region, took func(q *fsm.State) jen.Code, own bool) jen.Code {
	return g.completionIn(p, moved, moved, took, own)
}

// completionIn is completionOf where the nested parallel states that do
// not hold region in (nil: any region) are left out.
func (g *goGen) completionIn(p *fsm.State, moved, in *fsm.Region, took func(q *fsm.State) jen.Code, own bool) jen.Code {
	var out []jen.Code
	for _, q := range p.DoneOrder() {
		if in != nil && q != p && !slices.Contains(q.Regions, in) {
			continue
		}
		test := allFinal(q, moved)
		if (q != p || own) && q.RestsFinal() && took != nil {
			t := took(q)
			if t == nil {
				continue
			}
			test = jen.Add(t).Op("&&").Add(test)
		}
		if len(out) > 0 {
			out = append(out, jen.Line())
		}
		out = append(out, jen.Comment("// Every region final: "+q.Name+" is done.").Line().
			If(test).Block(jen.Return(jen.Id("m").Dot(doneMethod(q)).Call())))
	}
	return jen.Add(out...)
}

// allFinal is the test that every region of parallel state p but moved
// (nil: every region) is in a final leaf.
func allFinal(p *fsm.State, moved *fsm.Region) *jen.Statement {
	var test *jen.Statement
	for _, reg := range p.Regions {
		if reg == moved {
			continue
		}
		var eqs []*jen.Statement
		for _, f := range reg.Finals {
			eqs = append(eqs, rgn(reg).Op("==").Id(f.KindName))
		}
		t := anyOf(eqs)
		if len(reg.Finals) > 1 {
			t = jen.Parens(t)
		}
		if test == nil {
			test = t
		} else {
			test = jen.Add(test).Op("&&").Add(t)
		}
	}
	return test
}

// doneMethod names the method that takes the done transition of parallel
// state s: doneProcessing.
func doneMethod(s *fsm.State) string { return "done" + s.GoName }

// genDone emits, for each parallel state with a done transition, the
// method that takes it (see completion).
func (g *goGen) genDone() {
	for _, s := range append(slices.Clone(g.m.States), g.m.Groups()...) {
		if s.Completion == nil {
			continue
		}
		doc := fmt.Sprintf("%s takes the done transition of the parallel state %s, in the step that "+
			"puts the last of its regions in a final state (SCXML 1.0 §3.4, done.state.%s).", doneMethod(s), s.Name, s.Name)
		if p := s.Regions[0].Parallel; slices.Contains(p.Nested(), s) {
			doc += fmt.Sprintf(" %s is a region of %s, which the done transition leaves.", s.Name, p.Name)
		}
		if s.RestsFinal() {
			doc += " When no guard holds, the done event is dropped (SCXML 1.0 §3.13) and the machine rests with every region final."
		}
		g.f.Add(paragraphs(doc))
		g.completing = s
		body := g.cellBody(s.Completion)
		switch next := s.Regions[0].Parallel.NextDone(s); {
		case s.RestsFinal() && next != nil:
			body = append(body, jen.Comment("// No guard holds: the done event is dropped, and "+next.Name+"'s, raised in the same step, is taken next."),
				jen.If(allFinal(next, nil)).Block(jen.Return(jen.Id("m").Dot(doneMethod(next)).Call())),
				jen.Return(core().Dot("Finish").Call()))
		case s.RestsFinal():
			body = append(body, jen.Comment("// No guard holds: the done event is dropped, and every region rests final."), jen.Return(core().Dot("Finish").Call()))
		}
		g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id(doneMethod(s)).Params().Error().Block(body...)
		g.completing = nil
	}
}

// regionActs emits one part of what a region's rule hands out: its
// exits, its own actions or its entries.
func (g *goGen) regionActs(r *fsm.Rule, from jen.Code, part string, together bool) []jen.Code {
	var out []jen.Code
	switch part {
	case "exits":
		for _, run := range r.Exits {
			out = append(out, g.runActions(run, from)...)
		}
	case "actions":
		if together {
			// The rule's content, in document order among the regions'
			// (SCXML 1.0 §3.13): it reads what the earlier set.
			out = append(out, g.regionCompute(r)...)
		}
		for _, e := range r.Actions {
			out = append(out, g.emitAction(e)...)
		}
	default:
		for _, run := range r.Entries {
			out = append(out, g.runActions(run, from)...)
		}
	}
	return out
}
