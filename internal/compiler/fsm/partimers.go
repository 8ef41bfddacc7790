package fsm

import "slices"

// This file works out what the timers of the states inside regions do on
// the ways and witness paths of a machine with parallel states (see
// parpaths.go). A region's timer is a timer of the machine, in a slot
// after the machine's own: entering its state starts it, leaving the
// state cancels it, and its TimerFired fires its rules in its region
// alone.

// Path returns state s of the region and its ancestors inside the
// region, outermost first.
func (reg *Region) Path(s *State) []*State {
	var out []*State
	for a := s; a != nil && a.Region == reg; a = a.Parent {
		out = append(out, a)
	}
	slices.Reverse(out)
	return out
}

// restoredIn returns the timers of a machine made by Restore in state s
// whose regions are in cfg (nil for a state that is not parallel): those
// of s and its ancestors, then those of each region's leaf and its
// ancestors in the region, regions in document order, numbered from 1
// outermost first, as the generated startTimers numbers them.
func restoredIn(s *State, cfg []*State) timerRun {
	run := restored(s)
	if cfg == nil {
		return run
	}
	for _, reg := range s.Flat {
		for _, a := range reg.Path(cfg[reg.Index]) {
			for _, t := range a.Timers {
				run.last++
				run.ids[t] = run.last
			}
		}
	}
	return run
}

// regionTrace is what the regions' rules moves hand out, taken as one
// step (SCXML 1.0 §3.13): the exits of all, in reverse document order,
// then their actions and their entries, in document order (a parallel
// state inside a region that a deep history resumes entered down to the
// leaves resumed holds, see Way.hosted). It keeps run,
// the running timers, up to date: a timer whose rule keeps its state is
// spent, an exit cancels the timers still running, an entry starts its
// state's.
func (m *Machine) regionTrace(moves []*Rule, regs []*Region, cfg, resumed []*State, run *timerRun) []*Action {
	var out []*Action
	runs := func(list []*Run, from *State) {
		for _, x := range list {
			if x.When != nil && !x.When.Contains(from) {
				continue
			}
			if hosting(x) && !x.Entry {
				// A parallel state inside the region: its regions first,
				// their exits' effects too.
				run.delays = append(run.delays, m.leaveEffects(x.State, cfg)...)
				out = append(out, m.leaveRegions(x.State, cfg, run)...)
			}
			if h := x.Hook(); h != nil && h.Effect != nil {
				// Its effect runs in place, before its actions.
				run.delays = append(run.delays, h.Effect)
			}
			for _, e := range x.Actions {
				switch e.Action {
				case m.CancelTimer:
					if run.ids[e.Args[0].Timer] == 0 {
						continue // spent: nothing to cancel
					}
					run.ids[e.Args[0].Timer] = 0
				case m.StartTimer:
					run.last++
					run.ids[e.Args[0].Timer] = run.last
					run.delayed(e.Args[0].Timer)
				}
				out = append(out, e.Action)
			}
			if hosting(x) && x.Entry {
				var from []*State
				if x.Resume != nil {
					from = resumed
				} else if x.Into != nil {
					from = m.Entered(x)
				}
				out = append(out, m.enterRegions(x.State, from, x.Resume == nil && x.Into != nil, run)...)
			}
		}
	}
	for _, r := range moves {
		if t := r.Spends; t != nil {
			run.ids[t] = 0
		}
	}
	for i := len(moves) - 1; i >= 0; i-- {
		runs(moves[i].Exits, cfg[regs[i].Index])
	}
	// The rules' effects, after the exits' and before the entries'.
	run.delays = append(run.delays, regionEffects(moves)...)
	for _, r := range moves {
		for _, e := range r.Actions {
			out = append(out, e.Action)
		}
	}
	for i, r := range moves {
		runs(r.Entries, cfg[regs[i].Index])
	}
	return out
}

// leaveRegions returns the exit actions of the regions of parallel state
// s, whose leaves are cfg: in reverse document order, each innermost
// first, a state's running timers cancelled before its exit (as the
// generated code hands them out); nil for other states.
func (m *Machine) leaveRegions(s *State, cfg []*State, run *timerRun) []*Action {
	var out []*Action
	if cfg == nil {
		return nil
	}
	for i := len(s.Regions) - 1; i >= 0; i-- {
		reg := s.Regions[i]
		for a := cfg[reg.Index]; a != nil && a.Region == reg; a = a.Parent {
			if a.Regions != nil {
				// A parallel state inside the region: its regions first.
				out = append(out, m.leaveRegions(a, cfg, run)...)
			}
			for _, t := range a.Timers {
				if run.ids[t] != 0 {
					run.ids[t] = 0
					out = append(out, m.CancelTimer)
				}
			}
			if a.Exit != nil {
				out = append(out, a.Exit.Actions...)
			}
		}
		for _, g := range reg.GroupExits() {
			out = append(out, g.Exit.Actions...)
		}
	}
	return out
}

// leaveEffects returns the effects of the exits of the regions of
// parallel state s, whose leaves are cfg, in the order leaving s runs
// them (see leaveRegions): before the rule's own content.
func (m *Machine) leaveEffects(s *State, cfg []*State) []*Func {
	var out []*Func
	if cfg == nil {
		return nil
	}
	for i := len(s.Regions) - 1; i >= 0; i-- {
		reg := s.Regions[i]
		for a := cfg[reg.Index]; a != nil && a.Region == reg; a = a.Parent {
			if a.Regions != nil {
				// A parallel state inside the region: its regions first.
				out = append(out, m.leaveEffects(a, cfg)...)
			}
			if a.Exit != nil && a.Exit.Effect != nil {
				out = append(out, a.Exit.Effect)
			}
		}
		for _, g := range reg.GroupExits() {
			if g.Exit.Effect != nil {
				out = append(out, g.Exit.Effect)
			}
		}
	}
	return out
}

// enterRegions returns the entry actions of the regions of parallel
// state s, entered into their initial leaves, or the leaves resumed
// gives (by Region.Index; nil for the initial ones), in document order,
// and starts their timers in run. into says resumed are the leaves a rule
// into a state inside a region enters (Machine.Entered), which reach the
// regions of the parallel states inside the regions too.
func (m *Machine) enterRegions(s *State, resumed []*State, into bool, run *timerRun) []*Action {
	var out []*Action
	for _, reg := range s.Regions {
		runs := reg.Start
		if resumed != nil && resumed[reg.Index] != nil {
			runs = resumed[reg.Index].Enter
		}
		for _, x := range runs {
			if h := x.Hook(); h != nil && h.Effect != nil {
				// Its effect runs in place, before its actions.
				run.delays = append(run.delays, h.Effect)
			}
			for _, e := range x.Actions {
				if e.Action == m.StartTimer {
					run.last++
					run.ids[e.Args[0].Timer] = run.last
					run.delayed(e.Args[0].Timer)
				}
				out = append(out, e.Action)
			}
			if hosting(x) && x.State != s {
				// A parallel state inside the region, entered with it:
				// through the leaves a rule into a state inside its
				// regions enters them in (see Run.IntoLeaf).
				var in []*State
				if into {
					in = resumed
				}
				out = append(out, m.enterRegions(x.State, in, into, run)...)
			}
		}
	}
	return out
}

// regionTimers returns the timers of the states the regions of cfg are
// in, outermost first, regions in document order: those running in that
// configuration, unless spent.
func regionTimers(p *State, cfg []*State) []*Timer {
	var out []*Timer
	if cfg == nil {
		return nil
	}
	for _, reg := range p.Flat {
		for _, a := range reg.Path(cfg[reg.Index]) {
			out = append(out, a.Timers...)
		}
	}
	return out
}

// timerBits returns the bits of timers (those below 64).
func timerBits(timers []*Timer) uint64 {
	var bits uint64
	for _, t := range timers {
		if t.Index < 64 {
			bits |= 1 << t.Index
		}
	}
	return bits
}

// regionTimerWays returns the ways of region timer t firing in parallel
// state p in configuration cfg: one per branch of its guards, in its
// region alone (the other regions do not see the timer's event).
func (m *Machine) regionTimerWays(p *State, cfg []*State, t *Timer) []regionWay {
	reg := t.State.Region
	var out []regionWay
	// A rule that leaves a parallel state inside a region's state for a
	// state of that region: that region's (see parhostedlift.go).
	lifted := func(r *Rule) bool { return r.Source != nil && r.From != nil && r.From.Region != nil }
	if first := t.Cell.Rules[0]; first.Source != nil && !lifted(first) && t.Cell.Rules[len(t.Cell.Rules)-1].Source != nil {
		// Its rules leave p (see parleave.go), as p's own would.
		return m.leavingTimerWays(p, cfg, t, nil)
	}
	for _, pk := range picks(t.Cell, cfg) {
		if pk.rule == nil {
			continue // no guard holds: the timer is spent, nothing happens
		}
		at := reg
		switch {
		case lifted(pk.rule):
			at = pk.rule.From.Region
		case pk.rule.Source != nil:
			// A branch that leaves p, beside others that stay.
			out = append(out, m.leavingTimerWays(p, cfg, t, pk.rule)...)
			continue
		}
		for _, rw := range m.combine(p, cfg, m.TimerFired, []*Region{at}, []pick{pk}) {
			rw.way.Timer = t
			out = append(out, rw)
		}
	}
	return out
}

// timerWays returns the ways of every timer of the regions of parallel
// state p, each from the configuration its first leaf rests in, for the
// generated tests.
func (m *Machine) timerWays(p *State) []*Way {
	var out []*Way
	for _, reg := range p.Flat {
		for _, t := range reg.Timers {
			i := slices.IndexFunc(reg.Leaves, func(s *State) bool { return t.State.Contains(s) })
			if i < 0 {
				continue
			}
			cfg := restingConfig(m)
			m.place(cfg, reg, reg.Leaves[i])
			if p.completes(cfg) {
				continue
			}
			for _, rw := range m.regionTimerWays(p, cfg, t) {
				rw.way.Trace = m.trace(rw.way, p, cfg)
				// A rule that enters p anew (see parleavetimers.go)
				// settles the regions it enters in that step.
				for _, fw := range m.freshEventless(m.resolveFresh(rw.way, cfg), cfg) {
					out = append(out, m.settleWay(fw, cfg)...)
				}
			}
		}
	}
	return out
}

// spendIn is spend for a machine with parallel states: the timers of the
// regions' leaves after way w (cfg) are kept too, unless w enters their
// parallel state anew, which starts them again.
func spendIn(spent uint64, w *Way, cfg []*State) uint64 {
	keep := timersOf(w.To) | timerBits(regionTimers(w.To, cfg))
	if w.To.Regions != nil && enters(w, w.To) {
		for _, reg := range w.To.Flat {
			spent &^= timerBits(reg.Timers)
		}
	}
	for _, r := range w.Rules {
		for _, run := range r.Entries {
			spent &^= timerBits(run.State.Timers)
			if hosting(run) {
				spent &^= hostedTimers(run.State)
			}
		}
		if t := r.Spends; t != nil && t.Index < 64 {
			spent |= 1 << t.Index
		}
	}
	return spent & keep
}

// TimedConfigs returns, for parallel state p when a state inside one of
// its regions has a timer, defers an event or takes one p defers (see
// Region.defers), configurations beside the initial one in which the
// machine may rest, so that the generated tests save and load it with
// those timers running, and defer in them: the
// k-th puts every region in its k-th leaf (its last, when it has fewer),
// for k from 1. It skips one that puts a region in a state it leaves in
// the step that enters it, or every region final where p, or a parallel
// state inside one of its regions' states, would have taken its done
// transition (a final state the machine may rest in, see Rests and
// RestsFinal, is kept). Nil for other states.
func (p *State) TimedConfigs() [][]*State {
	timed, most, size := false, 0, 0
	for _, reg := range p.Flat {
		timed = timed || len(reg.Timers) > 0 || reg.defers()
		most = max(most, len(reg.Leaves))
		size = max(size, reg.Index+1)
	}
	if !timed {
		return nil
	}
	var out [][]*State
	for k := 1; k < most; k++ {
		cfg := make([]*State, size) // by Region.Index
		for _, reg := range p.Flat {
			cfg[reg.Index] = reg.Leaves[min(k, len(reg.Leaves)-1)]
		}
		p.restHosts(cfg)
		// cfg holds nil for the regions of the machine's other parallel
		// states, and of the parallel states inside p's regions that cfg
		// does not enter.
		settles := false
		for _, reg := range p.Flat {
			at := cfg[reg.Index]
			settles = settles || at != nil && at.Settles() && !at.Rests()
		}
		if (!p.completes(cfg) || p.RestsFinal()) && hostDone(p, cfg) == nil && !settles {
			out = append(out, cfg)
		}
	}
	return out
}
