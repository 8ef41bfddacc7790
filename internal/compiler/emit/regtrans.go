package emit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file emits what follows a step of the regions of a parallel state
// whose regions hold both transient states and final states whose
// composite states have done transitions, and the step that enters a
// parallel state whose regions start in a transient state (see
// internal/compiler/fsm/regtrans.go). SCXML 1.0 §3.13 (mainEventLoop,
// macrostep) takes, after each microstep, the eventless transitions to
// quiescence before the next event of the internal queue, where the
// done.state events wait in the order they were raised; XState v5 does
// the same with always and onDone.

// mixed reports whether the regions of parallel state p hold transient
// states and final states whose composite states have done transitions,
// or done events that wait beside a parallel state's inside a region
// (see ordered), or p waits beside such final states, its own eventless
// rules tested before each done event (see ownFirst): macroOn then
// settles them.
func mixed(p *fsm.State) bool {
	return (hasEventless(p) || p.Waits) && len(doneRegions(p)) > 0 || ordered(p)
}

// ownFirst reports whether parallel state p waits beside final states of
// its regions whose composite states have done transitions, or beside
// parallel states inside its regions with done transitions: SCXML 1.0
// §3.13 selects the eventless transitions, p's own among them, before it
// takes each done event of the internal queue, so macroOn tests p's rules
// before each done transition, and returns the one it picks for leaveOn.
func ownFirst(p *fsm.State) bool {
	return p.Waits && (len(doneRegions(p)) > 0 || len(hostDones(p)) > 0)
}

// ownRules returns the eventless rules of parallel state p that macroOn
// tests (see ownFirst), nil when it tests none.
func ownRules(p *fsm.State) []*fsm.Rule {
	if !ownFirst(p) {
		return nil
	}
	return p.Choice.Rules
}

// completes reports whether leaf s of a region is a final state whose
// composite state's done transition leaves it in the step that enters it.
func completes(s *fsm.State) bool { return s.Settles() && !s.Eventless() }

// doneRegions returns the regions of p with a final state whose composite
// state has a done transition, in document order, the regions of the
// parallel states inside its regions included (p.Flat).
func doneRegions(p *fsm.State) []*fsm.Region {
	var out []*fsm.Region
	for _, reg := range p.Flat {
		if slices.ContainsFunc(reg.Leaves, completes) {
			out = append(out, reg)
		}
	}
	return out
}

// macroMethod names the method that settles the regions of p after a
// step: macroOn.
func macroMethod(p *fsm.State) string { return "macro" + p.GoName }

// raiseMethod names the method that records the done events the regions
// of p raised: raisedOn.
func raiseMethod(p *fsm.State) string { return "raised" + p.GoName }

// macroLoop emits the call that settles the regions of p after a step;
// when a rule it may take leaves p (see quietLeaves), the step ends there:
//
//	if left := m.macroOn(); left >= 0 {
//		return m.leaveOn(left)
//	}
func macroLoop(p *fsm.State) jen.Code {
	what := "// Transient states and done transitions, in SCXML's order."
	if p.WaitsIn() {
		what = "// Eventless rules and done transitions, in SCXML's order."
	}
	if !hasEventless(p) {
		what = "// Done transitions, in the order their done events were raised."
	}
	if !hasEventless(p) && ownFirst(p) {
		what = "// Done transitions, in the order their done events were raised, " + p.Name + "'s eventless rules before each and after the last."
	}
	if len(quietLeaves(p)) > 0 {
		return jen.Comment(what).Line().If(jen.Id("left").Op(":=").Id("m").Dot(macroMethod(p)).Call(), jen.Id("left").Op(">=").Lit(0)).Block(
			jen.Return(leaveCall(p)))
	}
	return jen.Comment(what).Line().Id("m").Dot(macroMethod(p)).Call()
}

// genMacro emits, for each parallel state whose regions hold transient
// states beside done transitions, the method that settles its regions
// after a step, and the method that records the done events raised:
//
//	func (m *Machine) macroOn() {
//		var raised [2]int // when the done event of Drive, Sound was raised; 0: none waits
//		clock := m.raisedOn(&raised, 0)
//		for {
//			if m.eventlessOn() {
//				clock = m.raisedOn(&raised, clock)
//				continue
//			}
//			k := -1 // the oldest done event
//			...
//		}
//	}
func (g *goGen) genMacro() {
	for _, p := range g.m.States {
		if p.Regions == nil || !mixed(p) {
			continue
		}
		slots := macroSlots(p)
		var names, hosts []string
		for _, sl := range slots {
			if sl.q != nil {
				hosts = append(hosts, sl.q.Name)
			} else {
				names = append(names, sl.name())
			}
		}
		arr := jen.Index(jen.Lit(len(slots))).Int()
		var raise []jen.Code
		for i, sl := range slots {
			raise = append(raise, jen.If(jen.Id("raised").Index(jen.Lit(i)).Op("==").Lit(0).Op("&&").Add(sl.raisedTest())).Block(
				jen.Id("clock").Op("++"),
				jen.Id("raised").Index(jen.Lit(i)).Op("=").Id("clock")))
		}
		raise = append(raise, jen.Return(jen.Id("clock")))
		var whose []string
		if len(names) > 0 {
			whose = append(whose, fmt.Sprintf("the regions of %s, %s, in a final state whose composite state has a done transition", p.Name, list(names)))
		}
		switch len(hosts) {
		case 0:
		case 1:
			whose = append(whose, fmt.Sprintf("%s, a parallel state inside a region of %s, once its regions are all final", hosts[0], p.Name))
		default:
			whose = append(whose, fmt.Sprintf("%s, parallel states inside regions of %s, once their regions are all final", list(hosts), p.Name))
		}
		g.f.Add(paragraphs(fmt.Sprintf("%s records in raised the done events raised that wait for no tick yet, those of %s, in "+
			"document order (SCXML 1.0 §3.13, enterStates raises them so), each at the next tick of clock; it returns the clock.",
			raiseMethod(p), strings.Join(whose, ", and of "))))
		g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id(raiseMethod(p)).Params(jen.Id("raised").Op("*").Add(arr), jen.Id("clock").Int()).Int().Block(raise...)

		// leaving: a rule the loop takes may leave p (see quietLeaves),
		// whose index it returns, moving nothing; -1 once settled.
		leaving := len(quietLeaves(p)) > 0
		var cases []jen.Code
		for i, sl := range slots {
			take := sl.take()
			if sl.q == nil && settleLeaves(sl.reg) {
				take = jen.If(jen.List(jen.Id("_"), jen.Id("left")).Op(":=").Add(sl.take()), jen.Id("left").Op(">=").Lit(0)).Block(
					jen.Return(jen.Id("left")))
			}
			cases = append(cases, jen.Case(jen.Lit(i)).Block(take))
		}
		when, oldest := "when the done event of each region was raised; 0: none waits", "the region whose done event is the oldest"
		if len(hosts) > 0 {
			when, oldest = "when each done event was raised; 0: none waits", "the slot of the oldest done event"
		}
		var loop []jen.Code
		switch {
		case hasEventless(p) && len(eventlessLeaves(p)) > 0:
			loop = append(loop,
				jen.List(jen.Id("took"), jen.Id("left")).Op(":=").Id("m").Dot(eventlessMethod(p)).Call(),
				jen.If(jen.Id("left").Op(">=").Lit(0)).Block(jen.Return(jen.Id("left"))),
				jen.If(jen.Id("took")).Block(
					jen.Id("clock").Op("=").Id("m").Dot(raiseMethod(p)).Call(jen.Op("&").Id("raised"), jen.Id("clock")),
					jen.Continue()))
		case hasEventless(p):
			loop = append(loop, jen.If(jen.Id("m").Dot(eventlessMethod(p)).Call()).Block(
				jen.Id("clock").Op("=").Id("m").Dot(raiseMethod(p)).Call(jen.Op("&").Id("raised"), jen.Id("clock")),
				jen.Continue()))
		}
		settled := jen.Return()
		if leaving {
			settled = jen.Return(jen.Lit(-1))
		}
		if ownFirst(p) {
			// p's rules are tested once its regions' are settled, before
			// the oldest done event and once none waits: waitOn takes
			// none of its own.
			loop = append(loop, jen.Comment(fmt.Sprintf("// The eventless rules of %s, before the next done event, if any (SCXML 1.0 §3.13).", p.Name)))
			pick := func(r *fsm.Rule) []jen.Code { return []jen.Code{comment("", r.Label), jen.Return(jen.Lit(r.Index))} }
			if rules := p.Choice.Rules; len(rules) == 1 {
				// One guard: an if reads better than a switch of one case.
				loop = append(loop, jen.If(g.guardTest(rules[0])).Block(pick(rules[0])...))
			} else {
				var own []jen.Code
				for _, r := range rules {
					own = append(own, jen.Case(g.guardTest(r)).Block(pick(r)...))
				}
				loop = append(loop, jen.Switch().Block(own...))
			}
		}
		loop = append(loop,
			jen.Id("k").Op(":=").Lit(-1).Comment(oldest),
			jen.For(jen.List(jen.Id("i"), jen.Id("at")).Op(":=").Range().Id("raised")).Block(
				jen.If(jen.Id("at").Op(">").Lit(0).Op("&&").Parens(jen.Id("k").Op("<").Lit(0).Op("||").Id("at").Op("<").Id("raised").Index(jen.Id("k")))).Block(
					jen.Id("k").Op("=").Id("i"))),
			jen.If(jen.Id("k").Op("<").Lit(0)).Block(settled))
		loop = append(loop,
			jen.Id("raised").Index(jen.Id("k")).Op("=").Lit(0),
			jen.Switch(jen.Id("k")).Block(cases...),
			jen.Id("clock").Op("=").Id("m").Dot(raiseMethod(p)).Call(jen.Op("&").Id("raised"), jen.Id("clock")),
		)
		body := []jen.Code{
			jen.Var().Id("raised").Add(arr).Comment(when),
			jen.Id("clock").Op(":=").Id("m").Dot(raiseMethod(p)).Call(jen.Op("&").Id("raised"), jen.Lit(0)),
			jen.For().Block(loop...),
		}
		doc := "the eventless rules of the regions in transient states first, a microstep at a time, until none is; then the done " +
			"transition of the composite state whose done event was raised first, and again, until no region is in a transient " +
			"state and no done event waits. XState v5 orders always and onDone so."
		switch {
		case p.WaitsIn():
			doc = "the eventless rules of the regions in transient states and in states that wait first, a microstep at a time, " +
				"until none is taken; then the done transition of the composite state whose done event was raised first, and again, " +
				"until no eventless rule is taken and no done event waits. XState v5 orders always and onDone so."
		case !hasEventless(p):
			doc = "the done transition whose done event was raised first, a microstep of its own, and again, until none waits. " +
				"XState v5 orders onDone so."
		case ordered(p):
			doc = "the eventless rules of the regions in transient states first, a microstep at a time, until none is; then the done " +
				"transition whose done event was raised first (a composite state's, or a parallel state's inside a region), and " +
				"again, until none waits. XState v5 orders always and onDone so."
		}
		if ownFirst(p) {
			doc += fmt.Sprintf(" Before each done transition, and once none waits, it tests the eventless rules of %s, which waits "+
				"(SCXML 1.0 §3.13 selects the eventless transitions before it takes an event of the internal queue).", p.Name)
		}
		results := jen.Null()
		if leaving {
			var kinds []string
			if ownFirst(p) {
				kinds = append(kinds, "an eventless rule of "+p.Name)
			}
			if len(eventlessLeaves(p)) > 0 {
				kinds = append(kinds, "an eventless rule of a state of its regions")
			}
			if len(quietLeaves(p)) > len(eventlessLeaves(p))+len(ownRules(p)) {
				kinds = append(kinds, "a done transition")
			}
			what := strings.Join(kinds, ", or ")
			doc += fmt.Sprintf(" A rule that leaves %s (%s) is taken by %s: %s returns its index, and -1 once the regions are "+
				"settled.", p.Name, what, quietMethod(p), macroMethod(p))
			results = jen.Int()
		}
		g.f.Add(paragraphs(fmt.Sprintf("%s settles the regions of %s after a step, in the order of SCXML 1.0 §3.13 (macrostep): %s", macroMethod(p), p.Name, doc)))
		g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id(macroMethod(p)).Params().Add(results).Block(body...)
	}
}

// restlessEntry returns the parallel state rule r enters anew when one of
// its regions starts in a state it never rests in (a transient state):
// through its initial state, or through the state inside it that r
// targets (Run.Into); nil otherwise.
func restlessEntry(r *fsm.Rule) *fsm.State {
	for _, run := range r.Entries {
		if run.Entry && run.State.Regions != nil && slices.ContainsFunc(run.State.Regions, r.LeftOnEntry) {
			return run.State
		}
	}
	return nil
}

// entrySettle emits what follows the entries of rule r when it enters a
// parallel state whose regions may start in a transient state, or
// resumes, through a deep history, a final state a region may rest in
// (fsm.Machine.ResumesRest): their eventless rules and done transitions,
// as after a step of the regions, then, when that may put every region
// in a final state (each starts in one, or in a state that may lead to
// one in the same step, or a deep history may resume it so), the
// parallel state's done transition.
//
//	// Transient states: their eventless rules, a microstep at a time.
//	for m.eventlessRun() {
//	}
//	if m.rgn[0] == StateDone && m.rgn[1] == StateFull {
//		return m.doneRun()
//	}
func (g *goGen) entrySettle(r *fsm.Rule) []jen.Code {
	if waitEntry(r) != nil {
		return nil // see waitMethod
	}
	p, done, rests := restlessEntry(r), g.m.ResumesDone(r), g.m.ResumesRest(r)
	if p == nil && rests == nil {
		if done != nil {
			// A deep history resumed the regions, maybe every one final
			// (see fsm.RemembersFinal): the done transition follows.
			return []jen.Code{g.completion(done, nil)}
		}
		return nil
	}
	var regs []*fsm.Region
	settles := p != nil
	if !settles {
		p = rests[0].Parallel
	}
	for _, reg := range p.Regions {
		// Or a parallel state inside it whose regions do, whose
		// transient states the loop takes with the others; or one
		// resumed in a final state it may rest in, whose done event the
		// resuming raised again.
		if settles && r.LeftOnEntry(reg) || slices.Contains(rests, reg) {
			regs = append(regs, reg)
		}
	}
	if settles && !hasEventless(p) && !mixed(p) {
		// Done transitions only: those of the regions whose entered leaf
		// completes a composite state, the regions of a parallel state
		// inside a region among them (the region around it has no settle
		// method of its own when none of its leaves completes one).
		var done []*fsm.Region
		for _, reg := range p.Flat {
			if completes(r.EnteredLeaf(reg)) || slices.Contains(rests, reg) {
				done = append(done, reg)
			}
		}
		if len(done) > 0 {
			regs = done
		}
	}
	// Every region of p, or of a parallel state nested in it with a done
	// transition, may end in the step that enters it.
	ends := settles && slices.ContainsFunc(p.DoneOrder(), func(q *fsm.State) bool {
		return !slices.ContainsFunc(q.Regions, func(reg *fsm.Region) bool { return !r.EnteredLeaf(reg).Ends() })
	})
	out := []jen.Code{settleLoop(regs)}
	if ends || (done == p || hostsMayEnd(p) || rests != nil) && p.Completion != nil {
		out = append(out, g.completion(p, nil))
	}
	return out
}
