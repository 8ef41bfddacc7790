package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file emits what a rule inside a region does with the parallel
// state's fields: its effect and the storage it writes (see
// docs/spec.md, "Fields and effects inside regions").

// regionCompute emits the content of region rule r that changes the
// machine's storage, before its actions are handed out:
//
//	prevLevel := m.d.level           // values its actions read before it changes them
//	level := m.b.Raise(m.d.level, ev.Step)
//	m.d.level = level                // the effect's results, set: and with:
//
// Several regions that take one event run theirs in document order, each
// reading the storage as the earlier left it (SCXML 1.0 §3.13, microstep).
//
// Its locals are read by its own actions and stores only: the entries and
// exits of the states inside regions hand out no action with fields.
func (g *goGen) regionCompute(r *fsm.Rule) []jen.Code {
	var out []jen.Code
	for _, c := range r.Captures {
		out = append(out, jen.Id(c.Local).Op(":=").Id("m").Dot("d").Dot(c.Data.GoName))
	}
	if e := r.Effect; e != nil {
		call := jen.Id("m").Dot("b").Dot(e.GoName).Call(g.values(r.EffectArgs)...)
		var locals []jen.Code
		for _, set := range e.Sets {
			locals = append(locals, jen.Id(set.Param))
		}
		out = append(out, jen.List(locals...).Op(":=").Add(call))
	}
	for _, st := range r.Stores {
		out = append(out, jen.Id("m").Dot("d").Dot(st.Data.GoName).Op("=").Add(g.value(st.Value)))
	}
	for _, d := range r.Clears {
		out = append(out, jen.Id("m").Dot("d").Dot(d.GoName).Op("=").Add(zeroValue(d)))
	}
	return out
}

// startRegionTimer emits the start of timer t of a state inside a region
// whose delay an effect computes from the parallel state's fields: the
// delay is computed as the timer starts, with the state's entry, after
// the content of every rule of the step (SCXML 1.0 §3.13 enters the
// states after the transitions' content, and evaluates a <send>'s
// delayexpr then):
//
//	m.lastTimer++
//	m.timers[1] = fsmrt.Timer{ID: m.lastTimer, Delay: m.b.Backoff(m.d.level)}
//	m.timers[1].Deadline = m.h.StartTimer(m.lastTimer, m.timers[1].Delay)
func (g *goGen) startRegionTimer(t *fsm.Timer, slot *jen.Statement) []jen.Code {
	return []jen.Code{
		jen.Id("m").Dot("lastTimer").Op("++"),
		slot.Clone().Op("=").Add(rt("Timer")).Values(kv("ID", jen.Id("m").Dot("lastTimer")), kv("Delay", g.delayCode(t))),
		slot.Clone().Dot("Deadline").Op("=").Id("m").Dot("h").Dot("StartTimer").Call(jen.Id("m").Dot("lastTimer"), slot.Clone().Dot("Delay")),
	}
}
