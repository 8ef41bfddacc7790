package emit

import (
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file emits what the other regions of a parallel state take beside
// a region's rule that leaves it (fsm's Way.beside): their rules without
// a target and their ignores, which exit nothing and conflict with none
// (SCXML 1.0 §3.13, removeConflictingTransitions). They are steps the
// observer sees in document order around the rule that leaves, and their
// actions are handed out between its exits and its entries, around its
// own (SCXML's transition content, in document order):
//
//	case 10:
//		// Green --Fault--> Crashed / Alarm
//		switch tPump { case 33: m.core.Beside(33) } // Pump comes before Health
//		m.core.State = StateCrashed
//		m.core.Start(10, StateRunning)
//		switch tFan { case 40: m.core.Beside(40) } // Fan after
//		<the exits>
//		switch tPump { case 33: m.h.Beep() }
//		m.h.Alarm()
//		<the entries>

// beside is what the regions before and after the region of lead, a
// parallel state's rule for event e that leaves it, take beside it.
type beside struct {
	g             *goGen
	lead          *fsm.Rule
	e             *fsm.Event
	before, after []*fsm.Region
}

// newBeside returns what the regions of inv but from take beside lead,
// the rule for e that leaves their parallel state from region from; nil
// when none may take anything beside it.
func newBeside(g *goGen, lead *fsm.Rule, from *fsm.Region, inv []*fsm.Region, e *fsm.Event) *beside {
	b := &beside{g: g, lead: lead, e: e}
	i := slices.Index(inv, from)
	for k, reg := range inv {
		if reg == from || takesNone(reg, e) {
			continue
		}
		if k < i {
			b.before = append(b.before, reg)
		} else {
			b.after = append(b.after, reg)
		}
	}
	if len(b.before)+len(b.after) == 0 {
		return nil
	}
	return b
}

// besideRule reports whether region rule r is taken beside a rule that
// leaves the parallel state: a rule without a target, or an ignore.
func besideRule(r *fsm.Rule) bool {
	return r.Leaves == nil && (r.Kind == fsm.Ignore || r.Kind == fsm.Transition && r.To == nil)
}

// regions returns the regions before the lead's, or after it.
func (b *beside) regions(before bool) []*fsm.Region {
	if before {
		return b.before
	}
	return b.after
}

// steps emits, where rule r (the lead, or one of its variants into a
// history) is emitted, the steps of the regions before it or after it
// that the observer sees.
func (b *beside) steps(r *fsm.Rule, before bool) []jen.Code {
	return b.each(r, before, func(x *fsm.Rule) []jen.Code {
		return []jen.Code{core().Dot("Beside").Call(jen.Lit(x.Index))}
	})
}

// actions emits, where rule r's actions are, the actions of the rules
// without a target of the regions before it or after it.
func (b *beside) actions(r *fsm.Rule, before bool) []jen.Code {
	return b.each(r, before, func(x *fsm.Rule) []jen.Code {
		var acts []jen.Code
		for _, e := range x.Actions {
			acts = append(acts, b.g.emitAction(e)...)
		}
		return acts
	})
}

// each emits, where rule r is emitted, a switch over the pick of each
// region before it or after it, with body's code for the rules it takes
// beside r.
func (b *beside) each(r *fsm.Rule, before bool, body func(*fsm.Rule) []jen.Code) []jen.Code {
	if !b.at(r) {
		return nil
	}
	var out []jen.Code
	for _, reg := range b.regions(before) {
		out = append(out, b.g.ruleSwitch(reg, b.e, func(x *fsm.Rule) []jen.Code {
			if !besideRule(x) {
				return nil
			}
			return body(x)
		})...)
	}
	return out
}

// at reports whether rule r is b's lead, or a variant of it.
func (b *beside) at(r *fsm.Rule) bool {
	return b != nil && (r == b.lead || slices.Contains(b.lead.Variants, r))
}
