package emit

import (
	"fmt"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file emits the entries and exits of the states inside regions
// whose effects read and set the parallel state's fields, or whose
// actions have fields (see docs/spec.md, "Fields and effects inside
// regions"). SCXML 1.0 §3.13 runs a step's executable content in one
// order: the exits of the states left, the transitions' content, the
// entries of the states entered, each piece reading what the earlier
// assigned. Inside regions the code runs each such entry and exit in
// place, where its actions are handed out: its effect, the fields it
// sets, then its actions.

// fieldRun reports whether run, an entry or exit of a state inside a
// region, reads or sets the parallel state's fields: it has an effect, or
// an action with fields.
func fieldRun(run *fsm.Run) bool {
	if h := run.Hook(); h != nil && h.Effect != nil {
		return true
	}
	return slices.ContainsFunc(run.Actions, fieldEmit)
}

// fieldEmit reports whether e hands out an action with fields of the
// spec's (not a timer's start or cancellation).
func fieldEmit(e *fsm.Emit) bool {
	return !e.Action.Builtin && len(e.Args) > 0
}

// inPlace reports whether region rule r runs its content in place, after
// the observer is told of the step: some entry or exit it runs reads or
// sets the parallel state's fields, so its effect runs between them, in
// SCXML's order.
func inPlace(r *fsm.Rule) bool {
	return slices.ContainsFunc(r.Exits, fieldRun) || slices.ContainsFunc(r.Entries, fieldRun)
}

// runDoes reports whether run hands out or computes anything: a rule that
// runs it only from some of its states tests the leaf it leaves.
func runDoes(run *fsm.Run) bool {
	return len(run.Actions) > 0 || run.Hook() != nil && run.Hook().Effect != nil
}

// inlineRun emits an entry or exit of a state inside a region in place:
// its effect, the parallel state's fields it sets, then its actions, which
// read the fields as they are then. A run with an effect is a block, so
// that the locals of its results are its own:
//
//	{
//		level := m.b.Glow(m.d.level)
//		m.d.level = level
//		m.h.Shine(level)
//	}
func (g *goGen) inlineRun(run *fsm.Run) []jen.Code {
	var out []jen.Code
	h := run.Hook()
	effect := h != nil && h.Effect != nil
	if effect {
		out = append(out, g.runEffect(run)...)
	}
	for _, e := range run.Actions {
		out = append(out, g.emitAction(e)...)
	}
	if effect {
		return []jen.Code{jen.Block(out...)}
	}
	return out
}

// leaveLocal names the local that holds, while a rule leaves a parallel
// state, argument i of action e of the exit of state s inside one of its
// regions: fadedLit1.
func leaveLocal(s *fsm.State, e *fsm.Emit, i int) string {
	return fmt.Sprintf("%s%s%d", lowerFirst(e.Action.GoName), s.GoName, i+1)
}

// lowerFirst returns name with its first letter in lower case.
func lowerFirst(name string) string {
	if name == "" {
		return name
	}
	return string(name[0]|0x20) + name[1:]
}

// leaveCompute emits, for a rule that leaves parallel state s, the
// effects of the exits of the states its regions are in, before the
// rule's own content changes the fields (SCXML 1.0 §3.13: the exits run
// first), regions in reverse document order, each innermost first: each
// effect runs, its results are stored, and the fields of its actions are
// kept in locals, declared first (decls), which the exits hand out later
// (see leaveActs):
//
//	var fadedLit1 int
//	if leftOn[0] == StateLit {
//		level := m.b.Fade(m.d.level)
//		m.d.level = level
//		fadedLit1 = level
//	}
func (g *goGen) leaveCompute(s *fsm.State, left string) (decls, out []jen.Code) {
	for i := len(s.Regions) - 1; i >= 0; i-- {
		d, o := g.leaveRegionCompute(s.Regions[i], left)
		decls, out = append(decls, d...), append(out, o...)
	}
	return decls, out
}

// leaveRegionCompute emits, for leaveCompute, the effects of the exits of
// the states region reg is in, innermost first: a parallel state inside
// the region after its own regions (reverse document order), whose slots
// of left are zero unless the region was in it.
func (g *goGen) leaveRegionCompute(reg *fsm.Region, left string) (decls, out []jen.Code) {
	k := jen.Id(left).Index(jen.Lit(reg.Index))
	leaves := g.leavesOf(reg)
	states := slices.Clone(leaves)
	for j := len(reg.Composites) - 1; j >= 0; j-- {
		states = append(states, reg.Composites[j])
	}
	// The parallel states nested as regions, left after their
	// regions: their exits run whatever the regions are in.
	states = append(states, reg.GroupExits()...)
	for i, st := range states {
		if i < len(leaves) && st.Regions != nil {
			// A parallel state inside the region: its regions first.
			d, o := g.leaveCompute(st, left)
			decls, out = append(decls, d...), append(out, o...)
		}
		run := st.Leave
		if run == nil || !fieldRun(run) {
			continue
		}
		var body []jen.Code
		if h := run.Hook(); h.Effect != nil {
			body = append(body, g.runEffect(run)...)
		}
		for _, e := range run.Actions {
			if !fieldEmit(e) {
				continue
			}
			for a, v := range e.Args {
				name := leaveLocal(st, e, a)
				decls = append(decls, jen.Var().Id(name).Add(goType(e.Action.Fields[a].GoType)))
				body = append(body, jen.Id(name).Op("=").Add(g.value(v)))
			}
		}
		if st == reg.Root || st.Region == nil {
			out = append(out, jen.Block(body...))
			continue
		}
		out = append(out, jen.If(within(k.Clone(), st)).Block(body...))
	}
	return decls, out
}

// leaveActs hands out the exit of state s inside a region as leaving its
// parallel state runs it: its running timers cancelled, then its actions,
// given the values leaveCompute kept.
func (g *goGen) leaveActs(s *fsm.State) []jen.Code {
	run := s.Leave
	if run == nil || !fieldRun(run) {
		return nil
	}
	var out []jen.Code
	for _, e := range run.Actions {
		if !fieldEmit(e) {
			out = append(out, g.emitAction(e)...)
			continue
		}
		var args []jen.Code
		for a := range e.Args {
			args = append(args, jen.Id(leaveLocal(s, e, a)))
		}
		out = append(out, jen.Id("m").Dot("h").Dot(e.Action.GoName).Call(args...))
	}
	return out
}

// runEffect emits the effect of run's entry or exit, into the locals of
// its results, then the fields of the parallel state it sets:
//
//	level := m.b.Glow(m.d.level)
//	m.d.level = level
func (g *goGen) runEffect(run *fsm.Run) []jen.Code {
	var locals []jen.Code
	for _, l := range run.Results {
		locals = append(locals, jen.Id(l))
	}
	out := []jen.Code{jen.List(locals...).Op(":=").Id("m").Dot("b").Dot(run.Hook().Effect.GoName).Call(g.values(run.EffectArgs)...)}
	for _, st := range run.Stores {
		out = append(out, jen.Id("m").Dot("d").Dot(st.Data.GoName).Op("=").Add(g.value(st.Value)))
	}
	return out
}
