package emit

import (
	"fmt"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file emits what the timers of the states inside regions add to a
// machine with parallel states (see internal/compiler/fsm/partimers.go).
// They are timers of the machine, in its slots after its own, started
// and cancelled by the same code as any timer (emitAction); what differs
// is how the machine knows their state is active: by its region's leaf,
// m.rgn[i], while the machine is in the parallel state.

// regionTimed reports whether a state inside a region of m has a timer.
func regionTimed(m *fsm.Machine) bool {
	return slices.ContainsFunc(m.Regions, func(reg *fsm.Region) bool { return len(reg.Timers) > 0 })
}

// timerSlot is the slot of timer t: m.timers[i].
func timerSlot(t *fsm.Timer) *jen.Statement {
	return jen.Id("m").Dot("timers").Index(jen.Lit(t.Index))
}

// timerActive is the test that timer t's state is active: the machine's
// leaf is in it, or, for a state inside a region, the machine is in the
// parallel state and the region's leaf is in it.
func timerActive(t *fsm.Timer) jen.Code {
	reg := t.State.Region
	if reg == nil {
		return within(core().Dot("State"), t.State)
	}
	return jen.Add(core().Dot("State")).Op("==").Id(reg.Parallel.KindName).Op("&&").Add(within(rgn(reg), t.State))
}

// timerRules emits the rules of timer t once it has fired: a region's
// timer fires them in its region alone, as a region's rules for an event
// are taken (regionRule).
func (g *goGen) timerRules(t *fsm.Timer) []jen.Code {
	reg := t.State.Region
	// A rule of a timer of a state inside a region of a parallel state
	// inside another region's state that leaves that parallel state for
	// a state of the other region: that region's rule (see fsm's
	// parhostedlift.go).
	lifted := func(r *fsm.Rule) *fsm.Region {
		if r.Source != nil && r.From != nil {
			return r.From.Region
		}
		return nil
	}
	if reg == nil || !slices.ContainsFunc(t.Cell.Rules, func(r *fsm.Rule) bool { return r.Source == nil }) {
		// A timer of the machine's own, or one of a state inside a
		// region whose rules leave the parallel state, as its rules.
		if host := lifted(t.Cell.Rules[0]); host != nil {
			return g.regionCell(host, t.Cell, func(r *fsm.Rule) []jen.Code { return g.regionRule(host, r) })
		}
		return g.cellBody(t.Cell)
	}
	return g.regionCell(reg, t.Cell, func(r *fsm.Rule) []jen.Code {
		if host := lifted(r); host != nil {
			return g.regionRule(host, r)
		}
		if r.Source != nil {
			// A branch that leaves the parallel state, beside others
			// that stay in the region.
			return g.ruleBody(r)
		}
		return g.regionRule(reg, r)
	})
}

// regionTimerCases returns, for parallel state p, what startTimers (or,
// with rearm, rearmTimers) does for the timers of its regions' states:
// for each region with timers, in document order, a switch over its leaf
// whose cases start (or re-arm) the timers of the leaf and its ancestors
// in the region, outermost first.
//
//	switch m.rgn[2] {
//	case StateBuffering:
//		m.lastTimer++
//		m.timers[1] = fsmrt.Timer{ID: m.lastTimer, Delay: 30 * time.Second}
//	}
func (g *goGen) regionTimerCases(p *fsm.State, each func(t *fsm.Timer) []jen.Code) []jen.Code {
	var out []jen.Code
	for _, reg := range p.Flat {
		if len(reg.Timers) == 0 {
			continue
		}
		var cases []jen.Code
		for _, l := range reg.Leaves {
			var body []jen.Code
			for _, a := range reg.Path(l) {
				for _, t := range a.Timers {
					body = append(body, each(t)...)
				}
			}
			if len(body) > 0 {
				cases = append(cases, jen.Case(jen.Id(l.KindName)).Block(body...))
			}
		}
		out = append(out, jen.Switch(rgn(reg)).Block(cases...))
	}
	return out
}

// regionTimerChecks returns what put checks of the timers of the states
// inside regions, once the machine's state and timers are in place: a
// running timer's region is in its state. (CheckTimers has checked that
// the machine is in the timer's parallel state.)
//
//	if m.timers[1].ID != 0 && !(m.rgn[2] == StateBuffering) {
//		return nil, fmt.Errorf("...: %w", m.timers[1].ID, m.rgn[2], fsmrt.ErrTimerNotRunning)
//	}
func (g *goGen) regionTimerChecks() []jen.Code {
	var out []jen.Code
	for _, reg := range g.m.Regions {
		for _, t := range reg.Timers {
			what := "timer %d"
			if t.ID != "" {
				what += " (" + t.ID + ")"
			}
			msg := fmt.Sprintf("%s: load a saved machine: %s of state %q runs, but region %s of %s is in %%v: %%w", g.m.Package, what, t.State.Snake, reg.Root.Name, reg.Parallel.Name)
			out = append(out, jen.If(timerSlot(t).Dot("ID").Op("!=").Lit(0).Op("&&").Op("!").Parens(within(rgn(reg), t.State))).Block(
				jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(msg), timerSlot(t).Dot("ID"), rgn(reg), rt("ErrTimerNotRunning")))))
		}
	}
	return out
}

// cancelRegionTimers returns the cancellation of the running timers of
// state s inside a region, as its exit hands them out before its actions.
func (g *goGen) cancelRegionTimers(s *fsm.State) []jen.Code {
	var out []jen.Code
	for _, t := range s.Timers {
		out = append(out, g.emitAction(&fsm.Emit{Action: g.m.CancelTimer, Args: []fsm.Value{{Source: fsm.FromTimer, Timer: t}}})...)
	}
	return out
}
