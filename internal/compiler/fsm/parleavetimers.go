package fsm

import (
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file runs the timers of states inside regions whose rules leave
// the region's parallel state (see parleave.go).

// leaveTimer is a timer of a state inside a region whose rules leave the
// region's parallel state.
type leaveTimer struct {
	par   string
	src   string
	after *spec.After
}

// timer records timer t of a state inside region r (its rules as a row,
// see checkRegion) when its rules leave r's parallel state, and reports
// whether it did (or refused it, named). The region's build runs the
// timer, from its state's entry to its exit, with a stand-in rule;
// the machine's build resolves its rules as the parallel state's, which
// join gives the timer (see leavingTimers).
func (l *leaving) timer(t *spec.Transition, r *specRegion, regionOf map[string]*specRegion, lifts *lifts, diags *diag.List) bool {
	some, _ := leavesAll(t, regionOf)
	if !some || r.groups != nil || r.host != nil {
		return false // regionRow's, or refused there
	}
	for _, to := range targets(t) {
		if regionOf[strings.TrimSuffix(to.Value, historySuffix)] != nil {
			diags.Errorf(to.Pos, "a timer of %s, in region %s, leaves parallel state %s by one branch and moves to %s inside it by another: fsmgen does not write both in one timer yet; give the branches targets outside %s, or give %s two timers", t.From[0].Value, r.root.Name.Value, r.par.Name.Value, to.Value, r.par.Name.Value, t.From[0].Value)
			return true
		}
	}
	s := stateNamed(r.root, t.From[0].Value)
	i := slices.IndexFunc(s.After, func(a *spec.After) bool { return a.Pos == t.Pos })
	if i < 0 {
		return false
	}
	a := s.After[i]
	lifts.standIns[a] = &spec.After{Pos: a.Pos, ID: a.ID, Delay: a.Delay, Outcome: spec.Outcome{To: spec.String{Value: s.Name.Value, Pos: a.Pos, Set: true}}}
	l.timers = append(l.timers, leaveTimer{par: r.par.Name.Value, src: s.Name.Value, after: a})
	return true
}

// leavingTimers resolves, in the machine's build, the rules of the timers
// of states inside regions that leave their parallel state (see timer),
// each as a rule of the parallel state fired by a timer of its own, which
// join swaps for the timer the region's build runs.
func (b *builder) leavingTimers() {
	if b.par == nil || b.par.inRegion() {
		return
	}
	for _, lt := range b.par.leaveTimers {
		p := b.states[lt.par]
		if p == nil || b.m.TimerFired == nil {
			continue
		}
		row := &spec.Transition{Pos: lt.after.Pos, Outcome: lt.after.Outcome, Guards: lt.after.Guards}
		if len(lt.after.Guards) > 0 && lt.after.Says() {
			continue // the region's build says so
		}
		rules := b.rowRules(row, p, b.m.TimerFired)
		if rules == nil {
			continue
		}
		t := &Timer{State: p, ID: lt.after.ID.Value, Pos: lt.after.Pos, DelayText: lt.after.Delay.Value}
		for _, r := range rules {
			r.Timer = t
			for _, v := range r.Variants {
				v.Timer = t
			}
			if r.Kind == Reject {
				b.errorf(r.Pos, "a timer's rule cannot reject: nobody sent its event to be told; ignore it, or move")
			}
		}
		t.Cell = &Cell{State: p, Event: b.m.TimerFired, Rules: rules}
		b.par.leftTimers = append(b.par.leftTimers, t)
	}
}

// swapTimers gives each timer of a state inside region reg's build
// (sr's) that leaves its parallel state the rules the machine's build
// resolved for it (leftTimers), named after their source, and reports
// the stand-in rules of the region's build, which the machine drops.
func swapTimers(reg *Region, sub *Machine, left []*Timer) map[*Rule]bool {
	drop := map[*Rule]bool{}
	for _, t := range sub.Timers {
		i := slices.IndexFunc(left, func(o *Timer) bool { return o.Pos == t.Pos })
		if i < 0 {
			continue
		}
		for _, r := range t.Cell.Rules {
			drop[r] = true
			for _, v := range r.Variants {
				drop[v] = true
			}
		}
		t.Cell.Rules = left[i].Cell.Rules
		for _, r := range t.Cell.Rules {
			for _, v := range append([]*Rule{r}, r.Variants...) {
				v.Timer, v.Source = t, t.State
				from := v.From
				v.From = t.State
				v.Label = RuleLabel(v)
				v.From = from
			}
		}
	}
	return drop
}
