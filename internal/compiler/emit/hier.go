package emit

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file emits what the hierarchy adds to a rule: the entries and
// exits it runs, the timers, and the dispatch of the rules composite
// states share. The resolution happened at generate time (package fsm);
// what is emitted here is straight-line code and range tests on kinds.

// within is the test that kind k is state s: a leaf, or one of the leaves
// of a composite state, whose kinds are consecutive.
func within(k jen.Code, s *fsm.State) jen.Code {
	if !s.Composite() {
		return jen.Add(k).Op("==").Id(s.KindName)
	}
	if s.First == s.Last {
		return jen.Add(k).Op("==").Id(s.First.KindName)
	}
	return jen.Add(k).Op(">=").Id(s.First.KindName).Op("&&").Add(k).Op("<=").Id(s.Last.KindName)
}

// runCompute emits what a run computes before the machine changes state:
// its effect's results, an entry's stores, and its timer's delay.
func (g *goGen) runCompute(run *fsm.Run, from jen.Code) []jen.Code {
	var out []jen.Code
	if run.State.Region != nil {
		// A state inside a region runs its effect in place (see
		// parhooks.go).
		return nil
	}
	if run.State.Regions != nil && !run.Entry {
		// The regions are left before the parallel state: their exits'
		// effects run before its own (SCXML 1.0 §3.13, exitStates).
		out = append(out, g.regionRemember(run, from)...)
		out = append(out, g.regionRun(run, from, true)...)
	}
	if h := run.Hook(); h != nil && h.Effect != nil {
		call := jen.Id("m").Dot("b").Dot(h.Effect.GoName).Call(g.values(run.EffectArgs)...)
		var locals []jen.Code
		for _, l := range run.Results {
			locals = append(locals, jen.Id(l))
		}
		if run.When != nil {
			for i, set := range h.Effect.Sets {
				out = append(out, jen.Var().Id(run.Results[i]).Add(goType(set.GoType)))
			}
			out = append(out, jen.If(within(from, run.When)).Block(jen.List(locals...).Op("=").Add(call)))
		} else {
			out = append(out, jen.List(locals...).Op(":=").Add(call))
		}
	}
	for _, st := range run.Stores {
		out = append(out, jen.Id("m").Dot("d").Dot(st.Data.GoName).Op("=").Add(g.value(st.Value)))
	}
	for _, d := range run.Delays {
		out = append(out, jen.Id(d.Local).Op(":=").Id("m").Dot("b").Dot(d.Timer.DelayFunc.GoName).Call(g.values(d.Args)...))
	}
	if run.State.Regions != nil && run.Entry {
		out = append(out, g.regionRun(run, from, true)...)
	}
	return out
}

// runActions emits the actions of a run, under its condition.
func (g *goGen) runActions(run *fsm.Run, from jen.Code) []jen.Code {
	var out []jen.Code
	if !run.Entry && run.State.Regions != nil {
		out = append(out, g.regionRun(run, from, false)...)
	}
	if run.State.Region != nil {
		// A state inside a region: its effect runs in place (see
		// parhooks.go).
		out = append(out, g.inlineRun(run)...)
	} else {
		for _, e := range run.Actions {
			out = append(out, g.emitAction(e)...)
		}
	}
	if run.Entry && run.State.Regions != nil {
		out = append(out, g.regionRun(run, from, false)...)
	}
	if run.When != nil && len(out) > 0 {
		return []jen.Code{jen.If(within(from, run.When)).Block(out...)}
	}
	return out
}

// emitAction emits the call that hands one action to the Handler; a
// StartTimer first numbers the timer.
func (g *goGen) emitAction(e *fsm.Emit) []jen.Code {
	if e.Action == g.m.StartTimer {
		t := e.Args[0].Timer
		slot := jen.Id("m").Dot("timers").Index(jen.Lit(t.Index))
		if t.State.Region != nil && t.DelayFunc != nil {
			return g.startRegionTimer(t, slot)
		}
		delay := g.value(e.Args[1])
		return []jen.Code{
			jen.Id("m").Dot("lastTimer").Op("++"),
			slot.Clone().Op("=").Add(rt("Timer")).Values(kv("ID", jen.Id("m").Dot("lastTimer")), kv("Delay", delay)),
			slot.Clone().Dot("Deadline").Op("=").Id("m").Dot("h").Dot("StartTimer").Call(jen.Id("m").Dot("lastTimer"), delay),
		}
	}
	if e.Action == g.m.CancelTimer {
		// A timer whose rule fired without leaving its state is spent:
		// there is nothing to cancel. A cancelled timer's record is
		// cleared: the records hold the running timers only.
		slot := jen.Id("m").Dot("timers").Index(jen.Lit(e.Args[0].Timer.Index))
		return []jen.Code{jen.If(slot.Clone().Dot("ID").Op("!=").Lit(0)).Block(
			jen.Id("m").Dot("h").Dot("CancelTimer").Call(slot.Clone().Dot("ID")),
			slot.Clone().Op("=").Add(rt("Timer")).Values())}
	}
	return []jen.Code{jen.Id("m").Dot("h").Dot(e.Action.GoName).Call(g.values(e.Args)...)}
}

// durationCode writes a constant duration as a reader would:
// 2 * time.Minute, 1500 * time.Millisecond.
func durationCode(d int64) jen.Code {
	units := []struct {
		name string
		size time.Duration
	}{{"Hour", time.Hour}, {"Minute", time.Minute}, {"Second", time.Second}, {"Millisecond", time.Millisecond}, {"Microsecond", time.Microsecond}, {"Nanosecond", time.Nanosecond}}
	for _, u := range units {
		if time.Duration(d)%u.size == 0 {
			n := time.Duration(d) / u.size
			if n == 1 {
				return jen.Qual("time", u.name)
			}
			return jen.Lit(int(n)).Op("*").Qual("time", u.name)
		}
	}
	return jen.Qual("time", "Duration").Call(jen.Lit(d))
}

// timerChain returns the timers of s and its ancestors, outermost first
// (a state's own in the order it lists them): those running while the
// machine is in s.
func timerChain(s *fsm.State) []*fsm.Timer {
	var out []*fsm.Timer
	for _, a := range s.Path() {
		out = append(out, a.Timers...)
	}
	return out
}

// delayCode is the delay timer t runs for: a constant, or its effect's.
func (g *goGen) delayCode(t *fsm.Timer) jen.Code {
	if t.DelayFunc != nil {
		return jen.Id("m").Dot("b").Dot(t.DelayFunc.GoName).Call(g.values(t.DelayArgs)...)
	}
	return durationCode(t.Delay)
}

// startTimer records timer t as running, numbered afresh, for Restore.
func (g *goGen) startTimer(t *fsm.Timer) []jen.Code {
	return []jen.Code{
		jen.Id("m").Dot("lastTimer").Op("++"),
		timerSlot(t).Op("=").Add(rt("Timer")).Values(kv("ID", jen.Id("m").Dot("lastTimer")), kv("Delay", g.delayCode(t))),
	}
}

// rearmTimer gives running timer t the delay this revision gives it.
func (g *goGen) rearmTimer(t *fsm.Timer) []jen.Code {
	return []jen.Code{timerSlot(t).Dot("Rearm").Call(g.delayCode(t))}
}

// genTimers emits startTimers, rearmTimers, Timers, Deadline and
// timerFired, the dispatch of TimerFired.
//
//	func (m *Machine) startTimers() { switch m.core.State { case StateA: m.lastTimer++; m.timers[0] = ... } }
//	func (m *Machine) rearmTimers() { switch m.core.State { case StateA: m.timers[0].Rearm(<delay>) } }
//	func (m *Machine) Timers() []*StartTimer
//	func (m *Machine) Deadline(id TimerID) time.Time
//	func (m *Machine) timerFired(ev *TimerFired) error {
//		switch {
//		case m.core.State == StateA && ev.Timer == m.timers[0].ID:
//			<the rules of A's timer>
//		}
//		return m.core.Ignore(stale)
//	}
func (g *goGen) genTimers() {
	m := g.m
	if len(m.Timers) == 0 {
		return
	}
	f := g.f
	// Leaves with the same timers share a case.
	type group struct {
		kinds    []jen.Code
		timers   []*fsm.Timer
		parallel *fsm.State // a parallel state, whose regions' timers follow
	}
	var groups []*group
	for _, s := range m.States {
		chain := timerChain(s)
		if len(chain) == 0 && !slices.ContainsFunc(s.Flat, func(reg *fsm.Region) bool { return len(reg.Timers) > 0 }) {
			continue
		}
		if s.Regions != nil {
			// The timers of its regions' states depend on their leaves:
			// a group of its own.
			groups = append(groups, &group{kinds: []jen.Code{jen.Id(s.KindName)}, timers: chain, parallel: s})
			continue
		}
		i := slices.IndexFunc(groups, func(gr *group) bool { return slices.Equal(gr.timers, chain) })
		if i < 0 {
			groups = append(groups, &group{timers: chain})
			i = len(groups) - 1
		}
		groups[i].kinds = append(groups[i].kinds, jen.Id(s.KindName))
	}
	var starts, rearms []jen.Code
	for _, gr := range groups {
		var start, rearm []jen.Code
		for _, t := range gr.timers {
			start = append(start, g.startTimer(t)...)
			rearm = append(rearm, g.rearmTimer(t)...)
		}
		if gr.parallel != nil {
			start = append(start, g.regionTimerCases(gr.parallel, g.startTimer)...)
			rearm = append(rearm, g.regionTimerCases(gr.parallel, g.rearmTimer)...)
		}
		starts = append(starts, jen.Case(gr.kinds...).Block(start...))
		rearms = append(rearms, jen.Case(gr.kinds...).Block(rearm...))
	}
	f.Comment("// startTimers numbers afresh and records the timers of the current state and")
	f.Comment("// its ancestors, outermost first, for Restore: their deadlines are not known.")
	f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("startTimers").Params().Block(jen.Switch(core().Dot("State")).Block(starts...))
	f.Comment("// rearmTimers gives each running timer of the current state and its ancestors")
	f.Comment("// the delay this revision gives it, for LoadWith: see fsmrt.Timer.Rearm.")
	f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("rearmTimers").Params().Block(jen.Switch(core().Dot("State")).Block(rearms...))

	f.Add(paragraphs("Timers returns the timers the current state has running, outermost state first, "+
		"as the StartTimer actions that started them: a timer runs from its state's entry until it "+
		"fires or the state is left. After Load or Restore, arm them again: at their Deadline, or, "+
		"after Restore, which numbers them afresh from 1 and knows no deadline, after their delay.",
		"The values are the caller's to keep."))
	f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("Timers").Params().Index().Op("*").Id("StartTimer").Block(
		jen.Var().Id("out").Index().Op("*").Id("StartTimer"),
		jen.For(jen.List(jen.Id("_"), jen.Id("t")).Op(":=").Range().Id("m").Dot("timers")).Block(
			jen.If(jen.Id("t").Dot("ID").Op("!=").Lit(0)).Block(
				jen.Id("out").Op("=").Append(jen.Id("out"), jen.Op("&").Id("StartTimer").Values(kv("Timer", jen.Id("t").Dot("ID")), kv("Delay", jen.Id("t").Dot("Delay")))))),
		jen.Return(jen.Id("out")))
	f.Add(paragraphs("Deadline returns when running timer id fires: what the Handler's StartTimer returned for it, " +
		"or what Load read. It is the zero time for a timer whose deadline the machine does not know " +
		"(its state was put with Restore) and for a timer that is not running."))
	f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("Deadline").Params(jen.Id("id").Id("TimerID")).Qual("time", "Time").Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("t")).Op(":=").Range().Id("m").Dot("timers")).Block(
			jen.If(jen.Id("id").Op("!=").Lit(0).Op("&&").Id("t").Dot("ID").Op("==").Id("id")).Block(jen.Return(jen.Id("t").Dot("Deadline")))),
		jen.Return(jen.Qual("time", "Time").Values()))

	fired := []jen.Code{jen.Case(jen.Id("ev").Dot("Timer").Op("==").Lit(0)).Comment("// no timer has the zero id; a spent timer's slot holds it")}
	for _, t := range m.Timers {
		cond := jen.Add(timerActive(t)).Op("&&").Id("ev").Dot("Timer").Op("==").Add(timerSlot(t)).Dot("ID")
		// The timer has fired: it runs no more (its rule may start it
		// again, by entering its state).
		clear := timerSlot(t).Op("=").Add(rt("Timer")).Values()
		fired = append(fired, jen.Case(cond).Block(append([]jen.Code{clear}, g.timerRules(t)...)...))
	}
	f.Comment("// timerFired handles a TimerFired: the rules of the timer it names when that")
	f.Comment("// timer runs for the current state, else the rule that ignores it.")
	f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("timerFired").Params(jen.Id("ev").Op("*").Id("TimerFired")).Error().Block(
		jen.If(jen.Id("ev").Op("==").Nil()).Block(jen.Return(core().Dot("NilEvent").Call(jen.Id("ev")))),
		jen.Switch().Block(fired...),
		jen.Return(core().Dot("Ignore").Call(jen.Lit(m.Stale.Index))))
}

// direct reports whether the states that take shared cell c reach it
// straight from HandleEvent, through its take method: the cells of
// composite states that do more than ignore or reject, so that a rule
// written on a composite state costs about what it would written on each
// state. "*" rows, and the ignore and reject lists of composite states,
// stay in otherwise, written once for all the states that take them.
func direct(c *fsm.Cell) bool {
	return c.Owner != nil && (len(c.Rules) > 1 || c.Rules[0].Kind == fsm.Transition)
}

// takeMethod names the method that holds the rules of a direct shared
// cell: "takeConnectionAbort".
func takeMethod(c *fsm.Cell) string { return "take" + c.Owner.GoName + c.Event.GoName }

// inlineMax is the most statements a composite state's rule may have to
// be written out in each state that takes it, as the state's own rule
// would be, rather than called: a call costs a fifth of a small rule.
const inlineMax = 6

// inline reports whether direct shared cell c is written out in each state
// that takes it: one unguarded rule of a few statements.
func (g *goGen) inline(c *fsm.Cell) bool {
	return len(c.Rules) == 1 && c.Rules[0].Guard == nil && !c.ReadsEvent && len(g.ruleBody(c.Rules[0])) <= inlineMax
}

// genTakes emits the take method of each direct shared cell that is not
// written out in its states.
func (g *goGen) genTakes() {
	for _, c := range g.m.Shared {
		if !direct(c) || g.inline(c) {
			continue
		}
		g.f.Add(comment("", fmt.Sprintf("%s takes the rules of %s for %s, for the states inside it that have none of their own, or none that holds.", takeMethod(c), c.Owner.Name, c.Event.Name)))
		g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id(takeMethod(c)).Params(jen.Id("ev").Op("*").Id(c.Event.GoName)).Error().Block(g.cellBody(c)...)
	}
}

// sharedDispatch emits, in otherwise, the rules "*" rows and the lists of
// composite states share, for each event innermost first:
//
//	switch ev := ev.(type) {
//	case *E:
//		if m.core.State >= StateA && m.core.State <= StateC {
//			<the composite's rules for E>
//		}
//		<the "*" row for E>
//	}
func (g *goGen) sharedDispatch() []jen.Code {
	var evCases []jen.Code
	bound := false
	var order []*fsm.Event
	byEvent := map[*fsm.Event][]*fsm.Cell{}
	for _, c := range g.m.Shared {
		if byEvent[c.Event] == nil {
			order = append(order, c.Event)
		}
		byEvent[c.Event] = append(byEvent[c.Event], c)
	}
	slices.SortFunc(order, func(a, b *fsm.Event) int { return a.Index - b.Index })
	wild := false // a "*" row, which applies in every state
	for _, e := range order {
		var body []jen.Code
		for _, c := range byEvent[e] {
			if direct(c) {
				continue // dispatched by HandleEvent, in each state that takes it
			}
			bound = bound || g.usesEvent(c)
			if c.Owner == nil {
				wild = true
				body = append(body, g.cellBody(c)...)
				continue
			}
			// The composite's rules, for its states that have none of
			// their own.
			body = append(body, jen.If(within(core().Dot("State"), c.Owner)).Block(g.cellBody(c)...))
		}
		if len(body) > 0 {
			evCases = append(evCases, jen.Case(jen.Op("*").Id(e.GoName)).Block(body...))
		}
	}
	if len(evCases) == 0 {
		return nil
	}
	subject := jen.Id("ev").Assert(jen.Type())
	if bound {
		subject = jen.Id("ev").Op(":=").Id("ev").Assert(jen.Type())
	}
	var out []jen.Code
	if wild {
		out = append(out,
			jen.Comment("// A machine not made by New or Restore is in no state: no shared rule applies."),
			jen.If(core().Dot("State").Op("==").Lit(0)).Block(jen.Return(core().Dot("Unhandled").Call(jen.Id("ev")))))
	}
	return append(out, jen.Switch(subject).Block(evCases...))
}

// startBody emits what New does after storing the initial state: the
// entries of the initial state and its ancestors, outermost first.
func (g *goGen) startBody() []jen.Code {
	var out, acts []jen.Code
	for _, run := range g.m.Start {
		out = append(out, g.runCompute(run, nil)...)
		acts = append(acts, g.runActions(run, nil)...)
	}
	return append(out, acts...)
}

// hookDoc describes a state's entry, exit and timer for its doc comment.
func hookDoc(s *fsm.State) string {
	var parts []string
	describe := func(what string, h *fsm.Hook) {
		if h == nil {
			return
		}
		var bits []string
		if h.Effect != nil {
			bits = append(bits, "runs "+h.Effect.Name)
		}
		if len(h.Actions) > 0 {
			var names []string
			for _, a := range h.Actions {
				names = append(names, a.Name)
			}
			bits = append(bits, "emits "+list(names))
		}
		parts = append(parts, "On "+what+" it "+strings.Join(bits, " and ")+".")
	}
	describe("entry", s.Entry)
	describe("exit", s.Exit)
	var delays []string
	for _, t := range s.Timers {
		delay := t.DelayText
		if t.DelayFunc != nil {
			delay = "the delay " + t.DelayFunc.Name + " computes"
		}
		delays = append(delays, delay)
	}
	switch len(delays) {
	case 0:
	case 1:
		parts = append(parts, fmt.Sprintf("Its timer fires after %s unless the state is left first.", delays[0]))
	default:
		parts = append(parts, fmt.Sprintf("Its timers fire after %s, each unless the state is left first.", list(delays)))
	}
	if s.Parent != nil {
		parts = append([]string{"It is a substate of " + s.Parent.Name + "."}, parts...)
	}
	return strings.Join(parts, " ")
}
