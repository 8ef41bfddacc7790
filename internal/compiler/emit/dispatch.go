package emit

import (
	"fmt"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// genHandleEvent emits the exhaustive nested switch, state then event,
// with the rules of each cell a state handles written out in its case
// (see cellBody). What a state ignores or rejects, and what it leaves to a
// "*" row, goes to otherwise:
//
//	func (m *Machine) HandleEvent(ev Event) error {
//		if m.core.Busy {
//			return m.core.Reentrant()
//		}
//		switch m.core.State {
//		case StateA:
//			switch ev := ev.(type) {
//			case *X:
//				...
//				return m.core.Finish()
//			}
//		...
//		}
//		return m.otherwise(ev)
//	}
func (g *goGen) genHandleEvent() {
	// A machine of many states gets one method per state, so that no
	// function grows with the whole table (the compiler's back end takes
	// more than linear time in a function's size); a small one keeps its
	// rules in HandleEvent, with no call between the dispatch and them.
	split := len(g.m.States) > splitAbove
	var states, methods []jen.Code
	for _, s := range g.m.States {
		if s.Regions != nil {
			// Its regions first, then its own rules: see genRegions.
			if split {
				states = append(states, jen.Case(jen.Id(s.KindName)).Block(jen.Return(jen.Id("m").Dot(regionsMethod(s)).Call(jen.Id("ev")))))
			} else {
				states = append(states, jen.Case(jen.Id(s.KindName)).Block(g.regionsDispatch(s)...))
			}
			continue
		}
		cells := stateCells(s)
		if len(cells) == 0 {
			continue
		}
		var evCases []jen.Code
		bound := false
		for _, c := range cells {
			if direct(c) && !g.inline(c) {
				bound = true
				evCases = append(evCases, jen.Case(jen.Op("*").Id(c.Event.GoName)).Block(jen.Return(jen.Id("m").Dot(takeMethod(c)).Call(jen.Id("ev")))))
				continue
			}
			bound = bound || g.usesEvent(c)
			evCases = append(evCases, jen.Case(jen.Op("*").Id(c.Event.GoName)).Block(g.cellBody(c)...))
		}
		subject := jen.Id("ev").Assert(jen.Type())
		if bound {
			subject = jen.Id("ev").Op(":=").Id("ev").Assert(jen.Type())
		}
		if !split {
			states = append(states, jen.Case(jen.Id(s.KindName)).Block(jen.Switch(subject).Block(evCases...)))
			continue
		}
		methods = append(methods,
			jen.Comment(fmt.Sprintf("// in%s is HandleEvent in the state %s.", s.GoName, s.Name)).Line().
				Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("in"+s.GoName).Params(jen.Id("ev").Id("Event")).Error().Block(
				jen.Switch(subject).Block(evCases...),
				jen.Return(jen.Id("m").Dot("otherwise").Call(jen.Id("ev")))))
		states = append(states, jen.Case(jen.Id(s.KindName)).Block(jen.Return(jen.Id("m").Dot("in"+s.GoName).Call(jen.Id("ev")))))
	}
	name, body := "HandleEvent", []jen.Code{jen.If(core().Dot("Busy")).Block(jen.Return(core().Dot("Reentrant").Call()))}
	if g.m.Deferral != nil {
		// HandleEvent recalls the deferred events after dispatch.
		g.genRecallingHandleEvent()
		name, body = "dispatch", nil
		g.f.Comment("// dispatch is HandleEvent but for the recall of deferred events: the rule for")
		g.f.Comment("// the current state and ev.")
	} else {
		g.f.Add(paragraphs(
			"HandleEvent feeds ev to the machine: the rule for the current state and ev " +
				"decides the next state, runs its effect and hands its actions to the Handler, in " +
				"order, before HandleEvent returns. A rejected event returns a *RejectedError and " +
				"changes nothing, as does a nil event a rule would read; an ignored one returns nil. " +
				"The machine keeps no reference to ev. HandleEvent must not be called from a Handler " +
				"or observer method."))
	}
	if len(g.m.Timers) > 0 {
		body = append(body, jen.If(jen.List(jen.Id("t"), jen.Id("ok")).Op(":=").Id("ev").Assert(jen.Op("*").Id("TimerFired")), jen.Id("ok")).Block(
			jen.Return(jen.Id("m").Dot("timerFired").Call(jen.Id("t")))))
	}
	if len(states) > 0 {
		body = append(body, jen.Switch(core().Dot("State")).Block(states...))
	}
	body = append(body, jen.Return(jen.Id("m").Dot("otherwise").Call(jen.Id("ev"))))
	g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id(name).Params(jen.Id("ev").Id("Event")).Error().Block(body...)
	for _, m := range methods {
		g.f.Add(m)
	}
}

// stateCells returns the cells state s handles in its case of
// HandleEvent: its own, and the composite rules it takes, in event order;
// a composite's rules are written once, in a method each state that takes
// them calls.
func stateCells(s *fsm.State) []*fsm.Cell {
	cells := slices.Clone(s.Handles)
	for _, c := range s.Inherited {
		if direct(c) {
			cells = append(cells, c)
		}
	}
	slices.SortStableFunc(cells, func(a, b *fsm.Cell) int { return a.Event.Index - b.Event.Index })
	return cells
}

// splitAbove is the number of states above which HandleEvent calls one
// method per state instead of holding every rule itself.
const splitAbove = 64

// genOtherwise emits otherwise, which finishes the events the current
// state does not handle with rules of its own: those it ignores or
// rejects, then those it leaves to a "*" row, each "*" row written once:
//
//	func (m *Machine) otherwise(ev Event) error {
//		switch m.core.State {
//		case StateA:
//			switch ev.(type) {
//			case *Y:
//				return m.core.Reject(3)
//			}
//		}
//		if m.core.State == 0 {
//			return m.core.Unhandled(ev)
//		}
//		switch ev := ev.(type) {
//		case *Z:
//			<the "*" row for Z>
//		}
//		return m.core.Unhandled(ev)
//	}
func (g *goGen) genOtherwise() {
	var states []jen.Code
	for _, s := range g.m.States {
		var evCases []jen.Code
		for _, c := range s.Refuses {
			evCases = append(evCases, jen.Case(jen.Op("*").Id(c.Event.GoName)).Block(g.refusalIn(c.Rules[0], s)))
		}
		if len(evCases) > 0 {
			states = append(states, jen.Case(jen.Id(s.KindName)).Block(jen.Switch(jen.Id("ev").Assert(jen.Type())).Block(evCases...)))
		}
	}
	var body []jen.Code
	if len(states) > 0 {
		body = append(body, jen.Switch(core().Dot("State")).Block(states...))
	}
	body = append(body, g.sharedDispatch()...)
	body = append(body, jen.Return(core().Dot("Unhandled").Call(jen.Id("ev"))))
	g.f.Comment("// otherwise finishes the events the current state does not handle with rules")
	g.f.Comment("// of its own: those it ignores or rejects, then those it leaves to a composite")
	g.f.Comment("// state it is in or to a \"*\" row.")
	g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("otherwise").Params(jen.Id("ev").Id("Event")).Error().Block(body...)
}

// refusal is the statement that finishes an ignore, reject or defer rule.
func refusal(r *fsm.Rule) jen.Code {
	finish := "Reject"
	switch r.Kind {
	case fsm.Ignore:
		finish = "Ignore"
	case fsm.Defer:
		return jen.Return(jen.Id("m").Dot("push").Call(jen.Lit(r.Index), jen.Id("ev")))
	}
	return jen.Return(core().Dot(finish).Call(jen.Lit(r.Index)))
}

// leaveMethod names the method that takes the eventless rules of a
// transient state, e.g. "leaveProcessingLLMResponse".
func leaveMethod(s *fsm.State) string { return "leave" + s.GoName }

// genChoices emits, for each transient state, the method that takes its
// eventless rules; for a final state that may rest (see fsm.State.Rests),
// the one that tests its composite state's done transition, ending the
// step in the final state when no guard holds:
//
//	func (m *Machine) leaveOver() error {
//		switch {
//		case m.b.Ok():
//			<rule>
//		}
//		// No guard holds: the done event is dropped, and the machine rests in Over.
//		return m.core.Finish()
//	}
func (g *goGen) genChoices() {
	for _, s := range g.m.States {
		if s.Choice == nil || s.Awaits() {
			continue // a parallel state's: see genWaitIn
		}
		doc := fmt.Sprintf("%s takes the eventless rules of the transient state %s.", leaveMethod(s), s.Name)
		body := g.cellBody(s.Choice)
		if s.Waits {
			doc = waitDoc(s)
			body = append(body, jen.Comment(fmt.Sprintf("// No guard holds: the machine stays in %s.", s.Name)), jen.Return(core().Dot("Finish").Call()))
		}
		if s.Rests() {
			doc = fmt.Sprintf("%s takes the done transition of %s, which entering its final state %s completes, or leaves the machine in %s when no guard holds.", leaveMethod(s), s.Completes.Name, s.Name, s.Name)
			body = append(body, jen.Comment(fmt.Sprintf("// No guard holds: the done event is dropped, and the machine rests in %s.", s.Name)), jen.Return(core().Dot("Finish").Call()))
		}
		g.f.Add(paragraphs(doc))
		g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id(leaveMethod(s)).Params().Error().Block(body...)
	}
}

// cellBody emits the rules of a cell: straight code for one unguarded
// rule, or a switch over the guards:
//
//	switch {
//	case m.b.Guard(m.d.retries, ev.Error):
//		<rule>
//	default:
//		<else rule>
//	}
func (g *goGen) cellBody(c *fsm.Cell) []jen.Code {
	var out []jen.Code
	if c.ReadsEvent && !c.Event.Builtin {
		// A nil event of a type with fields would panic where the rules
		// read it: refuse it first (timerFired has refused a nil
		// TimerFired).
		out = append(out, jen.If(jen.Id("ev").Op("==").Nil()).Block(jen.Return(core().Dot("NilEvent").Call(jen.Id("ev")))))
	}
	if len(c.Rules) == 1 && c.Rules[0].Guard == nil {
		return append(append(out, comment("", c.Rules[0].Label)), g.ruleBody(c.Rules[0])...)
	}
	var cases []jen.Code
	for _, r := range c.Rules {
		body := append([]jen.Code{comment("", r.Label)}, g.ruleBody(r)...)
		if r.Guard == nil {
			cases = append(cases, jen.Default().Block(body...))
			continue
		}
		if test := g.guardTest(r); len(c.Rules) == 1 {
			// One guard: an if reads better than a switch of one case.
			out = append(out, jen.If(test).Block(body...))
		} else {
			cases = append(cases, jen.Case(test).Block(body...))
		}
	}
	if len(cases) > 0 {
		out = append(out, jen.Switch().Block(cases...))
	}
	if f := c.Fallback; f != nil {
		out = append(out, g.fallbackBody(f)...)
	}
	return out
}

// usesEvent reports whether the code cellBody writes for c uses the
// event as its own type: a rule reads a field of it, or the chain falls
// back to a take method, which is handed the event.
func (g *goGen) usesEvent(c *fsm.Cell) bool {
	for ; c != nil; c = c.Fallback {
		if c.ReadsEvent {
			return true
		}
		if f := c.Fallback; f != nil && direct(f) && !g.inline(f) {
			return true
		}
	}
	return false
}

// fallbackBody emits what an open chain does when none of its guards
// holds: it takes the rules of the state around it with some for its
// event, through their take method, or written out:
//
//	// No guard holds: the rule of Connected.
//	return m.takeConnectedAbort(ev)
func (g *goGen) fallbackBody(f *fsm.Cell) []jen.Code {
	whose := "the \"*\" row"
	if f.Owner != nil {
		whose = "the rule of " + f.Owner.Name
	}
	out := []jen.Code{jen.Comment("// No guard holds: " + whose + ".")}
	if direct(f) && !g.inline(f) {
		return append(out, jen.Return(jen.Id("m").Dot(takeMethod(f)).Call(jen.Id("ev"))))
	}
	return append(out, g.cellBody(f)...)
}

// value renders a value a rule reads.
func (g *goGen) value(v fsm.Value) jen.Code {
	if v.Local != "" {
		return jen.Id(v.Local)
	}
	switch v.Source {
	case fsm.FromEvent:
		return jen.Id("ev").Dot(v.Field.GoName)
	case fsm.FromResult:
		return jen.Id(v.Result.Param)
	case fsm.FromTimer:
		return jen.Id("m").Dot("timers").Index(jen.Lit(v.Timer.Index)).Dot("ID")
	case fsm.FromConst:
		if v.Const != nil {
			return constCode(v.Const)
		}
		return durationCode(v.Timer.Delay)
	}
	return jen.Id("m").Dot("d").Dot(v.Data.GoName)
}

// constCode writes a constant of set: as Go: a literal, or a duration
// in time's units.
func constCode(c *fsm.Const) jen.Code {
	if c.Duration {
		return durationCode(c.Nanos)
	}
	return jen.Op(c.Go)
}

func (g *goGen) values(vs []fsm.Value) []jen.Code {
	out := make([]jen.Code, 0, len(vs))
	for _, v := range vs {
		out = append(out, g.value(v))
	}
	return out
}

// ruleBody emits one rule:
//
//	prevX := m.d.x                                  // values an action reads before the rule changes them
//	conversation, retries := m.b.Effect(m.d.conversation, ev.Message)
//	m.d.conversation = conversation                 // stores: the effect's results, fields from the event
//	m.d.retries = retries
//	m.d.response = chat.Response{}                  // clears: the source state's fields the target lacks
//	m.core.State = StateB
//	m.core.Start(7, StateA)                         // tell the observer
//	m.h.SendLLMRequest(request)                     // actions, in order
//	return m.core.Finish()
//
// A "*" rule that moves does not know which state it leaves: it keeps the
// target's storage and zeroes the rest (m.d = fsmData{...}).
func (g *goGen) ruleBody(r *fsm.Rule) []jen.Code {
	if r.Kind != fsm.Transition {
		return []jen.Code{g.refusalIn(r, nil)}
	}
	if len(r.Variants) > 0 {
		return g.historyBody(r)
	}
	return g.ruleSteps(r)
}

// historyBody emits a rule into a composite state's history: a switch over
// what the machine remembers, each case one variant of the rule, the
// default (nothing remembered, or the initial child) the rule itself:
//
//	switch m.hist[0] {
//	case StatePaused:
//		<the rule, into Paused>
//	default:
//		<the rule, into the initial child>
//	}
//
// (see pickVariant). A rule that leaves the composite state itself, or a parallel state
// around the region it is in, picks by the leaf it leaves, which it
// remembers first (UML and SCXML record the history on exit, before the
// target is entered).
func (g *goGen) historyBody(r *fsm.Rule) []jen.Code {
	mem := jen.Id("m").Dot("hist").Index(jen.Lit(r.History.Hist))
	var pre []jen.Code
	switch leaves, always := r.Key(); {
	case leaves && always:
		return pickVariant(nil, core().Dot("State"), false, r, g.ruleSteps, g.ruleSteps(r))
	case leaves:
		pre = []jen.Code{jen.Id("h").Op(":=").Add(mem),
			jen.If(within(core().Dot("State"), r.History)).Block(jen.Id("h").Op("=").Add(core().Dot("State")))}
	case leavesAround(r):
		// The history is inside a region of a parallel state the rule
		// leaves, which remembers the region's leaf first.
		reg := r.History.Region
		pre = []jen.Code{jen.Id("h").Op(":=").Add(mem),
			jen.If(within(rgn(reg), r.History)).Block(jen.Id("h").Op("=").Add(rgn(reg)))}
	default:
		return pickVariant(nil, mem, true, r, g.ruleSteps, g.ruleSteps(r))
	}
	return pickVariant(pre, jen.Id("h"), false, r, g.ruleSteps, g.ruleSteps(r))
}

// pickVariant emits the switch that picks the variant of rule r into a
// history by key, after pre: each variant's case runs each(v), the
// default def. When every variant resumes one leaf, a switch on key:
//
//	switch m.hist[0] {
//	case StatePaused:
//		<the rule, into Paused>
//	default:
//		<the rule, into the initial child>
//	}
//
// and otherwise one on conditions (a deep history resumes a composite
// state's leaves, a range of kinds: h >= StateSize && h <= StateColour),
// key read once into h first when read (the memory itself).
func pickVariant(pre []jen.Code, key *jen.Statement, read bool, r *fsm.Rule, each func(*fsm.Rule) []jen.Code, def []jen.Code) []jen.Code {
	tagged := !slices.ContainsFunc(r.Variants, func(v *fsm.Rule) bool { return v.Resume.Composite() && v.Resume.First != v.Resume.Last })
	var cases []jen.Code
	for _, v := range r.Variants {
		test := within(key.Clone(), v.Resume)
		if tagged {
			test = jen.Id(descendKind(v.Resume))
		} else if read {
			test = within(jen.Id("h"), v.Resume)
		}
		cases = append(cases, jen.Case(test).Block(append([]jen.Code{comment("", v.Label)}, each(v)...)...))
	}
	cases = append(cases, jen.Default().Block(def...))
	switch {
	case tagged:
		return append(pre, jen.Switch(key).Block(cases...))
	case read:
		pre = append(pre, jen.Id("h").Op(":=").Add(key))
	}
	return append(pre, jen.Switch().Block(cases...))
}

// descendKind names the kind of the one leaf s stands for: s, or the one
// leaf of composite state s (see within).
func descendKind(s *fsm.State) string {
	if s.Composite() {
		return s.First.KindName
	}
	return s.KindName
}

// leavesAround reports whether rule r, into the history of a state
// inside a region, leaves a state around that region (its parallel
// state, or one around it): leaving it remembers the region's leaf in
// the history before the rule enters it (SCXML 1.0 §3.13, exitStates
// records the histories of the states it exits).
func leavesAround(r *fsm.Rule) bool {
	if r.History.Region == nil {
		return false
	}
	top := r.History.Region.Top()
	return slices.ContainsFunc(r.Exits, func(run *fsm.Run) bool { return run.State == top || run.State.Contains(top) })
}

// ruleSteps emits one rule, or one variant of a rule into a history.
func (g *goGen) ruleSteps(r *fsm.Rule) []jen.Code {
	if r.Source != nil {
		prev := g.leaving
		g.leaving = r.Source
		defer func() { g.leaving = prev }()
	}
	var out []jen.Code
	from := jen.Id("from")
	if r.Shared() {
		if r.To == nil && len(r.Exits) == 0 && len(r.Entries) == 0 {
			from = core().Dot("State") // read once, and the rule stays
		} else {
			out = append(out, jen.Id("from").Op(":=").Add(core().Dot("State")))
		}
	} else {
		from = jen.Id(r.From.KindName)
	}
	for _, c := range r.Captures {
		out = append(out, jen.Id(c.Local).Op(":=").Id("m").Dot("d").Dot(c.Data.GoName))
	}
	for _, run := range r.Exits {
		out = append(out, g.runCompute(run, from)...)
	}
	if e := r.Effect; e != nil {
		call := jen.Id("m").Dot("b").Dot(e.GoName).Call(g.values(r.EffectArgs)...)
		var locals []jen.Code
		for _, set := range e.Sets {
			locals = append(locals, jen.Id(set.Param))
		}
		out = append(out, jen.List(locals...).Op(":=").Add(call))
	}
	if r.Shared() && r.To != nil && len(g.m.Data) > 0 {
		var keep []jen.Code
		for _, d := range r.Keeps {
			keep = append(keep, kv(d.GoName, jen.Id("m").Dot("d").Dot(d.GoName)))
		}
		out = append(out, jen.Id("m").Dot("d").Op("=").Id("fsmData").Values(keep...))
	}
	for _, st := range r.Stores {
		out = append(out, jen.Id("m").Dot("d").Dot(st.Data.GoName).Op("=").Add(g.value(st.Value)))
	}
	for _, d := range r.Clears {
		out = append(out, jen.Id("m").Dot("d").Dot(d.GoName).Op("=").Add(zeroValue(d)))
	}
	for _, rem := range r.Remembers {
		// The composite state is left: remember the leaf, and a deep
		// history the leaves of the regions of a parallel state.
		set := []jen.Code{jen.Id("m").Dot("hist").Index(jen.Lit(rem.State.Hist)).Op("=").Add(from.Clone())}
		set = append(set, g.rememberLeaves(r, rem, from)...)
		if rem.When {
			set = []jen.Code{jen.If(within(from.Clone(), rem.State)).Block(set...)}
		}
		out = append(out, set...)
	}
	out = append(out, g.beside.steps(r, true)...)
	if r.To != nil && r.To != r.From {
		out = append(out, core().Dot("State").Op("=").Id(r.To.KindName))
	}
	for _, run := range r.Entries {
		out = append(out, g.runCompute(run, from)...)
	}
	out = append(out, core().Dot("Start").Call(jen.Lit(r.Index), from))
	out = append(out, g.beside.steps(r, false)...)
	for _, run := range r.Exits {
		out = append(out, g.runActions(run, from)...)
	}
	out = append(out, g.beside.actions(r, true)...)
	for _, e := range r.Actions {
		out = append(out, g.emitAction(e)...)
	}
	out = append(out, g.beside.actions(r, false)...)
	for _, run := range r.Entries {
		out = append(out, g.runActions(run, from)...)
	}
	out = append(out, g.entrySettle(r)...)
	if p := waitEntry(r); p != nil {
		// The regions' states that wait test their eventless rules.
		return append(out, jen.Return(waitCall(p, jen.True())))
	}
	if r.To != nil && r.To.Choice != nil {
		// The eventless rule that leaves the transient state goes on with
		// the step: its guards are tested now, after this rule's effects
		// (UML's choice), and it hands out the rest of the actions.
		return append(out, jen.Return(jen.Id("m").Dot(leaveMethod(r.To)).Call()))
	}
	if r.To == nil {
		if end := g.keeps(r, nil); end != nil {
			return append(out, end)
		}
	}
	return append(out, jen.Return(core().Dot("Finish").Call()))
}
