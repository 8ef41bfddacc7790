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
	// leave are, for a timer that leaves by some branches of its guards
	// and stays by others, the positions of those that leave; nil when
	// every branch leaves.
	leave map[diag.Pos]bool
}

// timer records timer t of a state inside region r (its rules as a row,
// see checkRegion) when its rules leave r's parallel state, and reports
// whether it did (or refused it, named). The region's build runs the
// timer, from its state's entry to its exit, with a stand-in rule;
// the machine's build resolves its rules as the parallel state's, which
// join gives the timer (see leavingTimers). For a region of a parallel
// state Q inside another region's state, the rules may leave the
// parallel state outside regions, resolved so too, or leave Q for a
// state of that other region, which its build resolves as Q's
// (liftTimers).
func (l *leaving) timer(t *spec.Transition, r *specRegion, regionOf map[string]*specRegion, lifts *lifts, diags *diag.List) bool {
	// A target that leaves: outside every region.
	out := func(n spec.String) bool { return regionOf[strings.TrimSuffix(n.Value, historySuffix)] == nil }
	par, lifting := r.par, false
	inHost := func(n spec.String) bool {
		return r.host != nil && regionOf[strings.TrimSuffix(n.Value, historySuffix)] == r.host
	}
	switch {
	case slices.ContainsFunc(targets(t), out) && slices.ContainsFunc(targets(t), inHost):
		return false // both: refused by regionRow
	case slices.ContainsFunc(targets(t), out) && r.host != nil:
		// A timer of a region of a parallel state inside a region's
		// state leaves the parallel state outside regions: its event
		// goes to its state alone, so no other region's rule competes.
		par = r.top
	case slices.ContainsFunc(targets(t), out):
	case slices.ContainsFunc(targets(t), inHost):
		// Or into a state of its host outside its parallel state Q:
		// Q's rule in the host's build (see parhostedlift.go).
		out, lifting = inHost, true
	default:
		return false // regionRow's
	}
	all := !slices.ContainsFunc(targets(t), func(n spec.String) bool { return !out(n) })
	// A branch without a target (an action, an ignore) stays in the
	// region, as a branch into a state of the region does.
	all = all && !slices.ContainsFunc(t.Guards, func(br spec.Branch) bool { return !br.To.Set })
	s := stateNamed(r.root, t.From[0].Value)
	i := slices.IndexFunc(s.After, func(a *spec.After) bool { return a.Pos == t.Pos })
	if i < 0 {
		return false
	}
	a := s.After[i]
	// The timer as t has it: a target in another region of the parallel
	// state rewritten to the parallel state itself (see entering.across).
	cp := *a
	cp.Outcome, cp.Guards = t.Outcome, t.Guards
	self := func(pos diag.Pos) spec.Outcome {
		return spec.Outcome{To: spec.String{Value: s.Name.Value, Pos: pos, Set: true}}
	}
	stand := &spec.After{Pos: a.Pos, ID: a.ID, Delay: a.Delay, Outcome: self(a.Pos)}
	lt := leaveTimer{par: par.Name.Value, src: s.Name.Value, after: &cp}
	if !all {
		// It leaves by some branches of its guards and stays by others:
		// the region's build runs those that stay, and a stand-in for
		// each that leaves, which swapTimers swaps for the rule the
		// machine's build resolves for it.
		stand.Outcome, lt.leave = spec.Outcome{}, map[diag.Pos]bool{}
		for _, br := range cp.Guards {
			if br.To.Set && out(br.To) {
				lt.leave[br.Pos] = true
				br.Outcome = self(br.Pos)
			}
			stand.Guards = append(stand.Guards, br)
		}
	}
	lifts.standIns[a] = stand
	if lifting {
		l.liftTimers[r.host] = append(l.liftTimers[r.host], lt)
	} else {
		l.timers = append(l.timers, lt)
	}
	return true
}

// leavingBranches resolves, in the machine's build, the branches among
// guards that leave their parallel state p (the positions in leave) when
// others stay in the region (a timer's, see timer, or an eventless row's,
// see parleaveeventless.go): each a rule of p for event ev, in order.
func (b *builder) leavingBranches(guards []spec.Branch, leave map[diag.Pos]bool, p *State, ev *Event) []*Rule {
	var out []*Rule
	for i := range guards {
		br := &guards[i]
		if !leave[br.Pos] {
			continue
		}
		r := b.outcome(&br.Outcome, br.Pos, p, ev)
		if r == nil {
			continue
		}
		if br.If.Set {
			if r.Guard = b.fn(br.If, Guard); r.Guard == nil {
				continue
			}
		} else {
			r.Else = true
		}
		out = append(out, r)
	}
	return out
}

// leavingTimers resolves, in the machine's build, the rules of the timers
// of states inside regions that leave their parallel state (see timer),
// each as a rule of the parallel state fired by a timer of its own, which
// join swaps for the timer the region's build runs.
func (b *builder) leavingTimers() {
	if b.par == nil {
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
		var rules []*Rule
		if lt.leave != nil {
			rules = b.leavingBranches(lt.after.Guards, lt.leave, p, b.m.TimerFired)
		} else {
			rules = b.rowRules(row, p, b.m.TimerFired)
		}
		if rules == nil {
			continue
		}
		t := &Timer{State: p, ID: lt.after.ID.Value, Pos: lt.after.Pos, DelayText: lt.after.Delay.Value}
		for _, r := range rules {
			r.Timer = t
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
		var rules []*Rule
		for _, r := range t.Cell.Rules {
			j := slices.IndexFunc(left[i].Cell.Rules, func(o *Rule) bool { return o.Pos == r.Pos })
			mixed := !slices.ContainsFunc(t.Cell.Rules, func(o *Rule) bool { return o.Pos == t.Pos })
			if mixed && j < 0 {
				rules = append(rules, r) // a branch that stays, the region's
				continue
			}
			drop[r] = true
			for _, v := range r.Variants {
				drop[v] = true
			}
			if mixed {
				rules = append(rules, left[i].Cell.Rules[j])
			}
		}
		if len(rules) == 0 {
			rules = left[i].Cell.Rules // every branch leaves
		}
		t.Cell.Rules = rules
		for _, r := range t.Cell.Rules {
			if !slices.Contains(left[i].Cell.Rules, r) {
				continue
			}
			for _, v := range append([]*Rule{r}, r.Variants...) {
				v.Timer, v.Source = t, t.State
				v.Label = sourceLabel(v)
			}
		}
	}
	return drop
}

// leavingTimerWays returns the ways of timer t of a state inside a region
// of parallel state p firing in configuration cfg through its rules that
// leave p, as p's own would: all, or only rule r.
func (m *Machine) leavingTimerWays(p *State, cfg []*State, t *Timer, r *Rule) []regionWay {
	var out []regionWay
	for _, w := range expand(p, t.Cell) {
		if r != nil && w.Rules[0] != r {
			continue
		}
		w.Config = cfg
		after := []*State(nil)
		if w.To.Regions != nil && enters(w, w.To) {
			after = m.enteredConfig(w)
		}
		out = append(out, regionWay{way: w, after: after})
	}
	return out
}
