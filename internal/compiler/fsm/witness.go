package fsm

import (
	"maps"
	"slices"
)

// Trace is what the machine does on a way: the id it gave the timer that
// fires (for a TimerFired), the actions it hands out and the effects it
// runs, in order. The generated tests check it.
type Trace struct {
	TimerID int
	Actions []*Action
	Effects []*Func
}

// Witness is one node of the prefix tree of the machine's paths: one
// step (a way: an event and the guards' answers it needs) after the steps
// of the node above it, and what the machine does on it. Laid out as a
// tree, the paths take room in proportion to the number of rules, not to
// the sum of their lengths.
type Witness struct {
	// Up is the node above; -1 for a first step.
	Up  int
	Way *Way
	Trace
}

// timerRun numbers the running timers as the machine does: from 1, in
// the order they start.
type timerRun struct {
	ids  map[*Timer]int // 0: not running, or spent
	last int
	// delays are the effects that computed the delays of the timers of
	// states inside regions started since the last drain (see
	// startRegionTimer in the emitter): they run as the timers start.
	delays []*Func
}

// restored returns the timers of a machine made by Restore in state s:
// those of s and its ancestors, numbered from 1 outermost first.
func restored(s *State) timerRun {
	run := timerRun{ids: map[*Timer]int{}}
	for _, a := range s.Path() {
		for _, t := range a.Timers {
			run.last++
			run.ids[t] = run.last
		}
	}
	return run
}

// step works out what way w does from the running timers, and returns
// it with the timers after it.
func (m *Machine) step(w *Way, before timerRun) (Trace, timerRun) {
	if w.head != nil {
		return m.stepEntered(w, before)
	}
	rules, cfg := w.Rules, w.Config
	var tr Trace
	run := timerRun{ids: maps.Clone(before.ids), last: before.last}
	if w.Timer != nil {
		tr.TimerID = run.ids[w.Timer]
		// It has fired: the machine clears its slot before its rules
		// run, which cancel it no more.
		run.ids[w.Timer] = 0
	}
	if w.Regional {
		moves := rules
		if w.Final != nil {
			moves = moves[:len(moves)-1-w.after]
		}
		if len(w.moved) > 0 {
			tr.Actions = m.regionTrace(moves[:w.micro], w.moved[:w.micro], cfg, w.hosted, &run)
			tr.Effects = append(tr.Effects, run.drain()...)
			// The done transitions of composite states inside the
			// regions, each a step of its own (see settle).
			cur := slices.Clone(cfg)
			for i, r := range moves {
				if i >= w.micro && w.groups == nil {
					tr.Actions = append(tr.Actions, m.regionTrace(moves[i:i+1], w.moved[i:i+1], cur, w.hosted, &run)...)
					tr.Effects = append(tr.Effects, run.drain()...)
				}
				if r.To != nil {
					cur[w.moved[i].Index] = r.To
				}
			}
			if w.groups != nil {
				// The eventless rules of transient states, a microstep
				// per group (see eventless).
				cur = slices.Clone(cfg)
				for i := 0; i < w.micro; i++ {
					if moves[i].To != nil {
						cur[w.moved[i].Index] = moves[i].To
					}
				}
				at := w.micro
				for _, n := range w.groups {
					tr.Actions = append(tr.Actions, m.regionTrace(moves[at:at+n], w.moved[at:at+n], cur, w.hosted, &run)...)
					tr.Effects = append(tr.Effects, run.drain()...)
					for i := at; i < at+n; i++ {
						cur[w.moved[i].Index] = moves[i].To
					}
					at += n
				}
			}
		}
		if w.Final == nil {
			return tr, run
		}
		// The done transition of the parallel state, which leaves its
		// regions from their final leaves.
		rules, cfg = rules[len(rules)-1-w.after:], w.Final
	}
	src := w.From
	for _, r := range rules {
		if r.Kind != Transition || slices.Contains(w.beside, r) {
			continue // the rules beside the lead: see content
		}
		applies := func(x *Run) bool { return x.When == nil || x.When.Contains(src) }
		effects := func(list []*Run) {
			for _, x := range list {
				if !applies(x) {
					continue
				}
				if !x.Entry && x.State.Regions != nil {
					// Its regions are left first, their exits' effects
					// running before its own (SCXML 1.0 §3.13).
					tr.Effects = append(tr.Effects, m.leaveEffects(x.State, cfg)...)
				}
				if h := x.Hook(); h != nil && h.Effect != nil {
					tr.Effects = append(tr.Effects, h.Effect)
				}
				for _, d := range x.Delays {
					tr.Effects = append(tr.Effects, d.Timer.DelayFunc)
				}
			}
		}
		effects(r.Exits)
		if r.Effect != nil {
			tr.Effects = append(tr.Effects, r.Effect)
		}
		effects(r.Entries)
		if t := r.Spends; t != nil {
			run.ids[t] = 0
		}
		for _, x := range r.Exits {
			if !applies(x) {
				continue
			}
			tr.Actions = append(tr.Actions, m.leaveRegions(x.State, cfg, &run)...)
			for _, e := range x.Actions {
				if e.Action == m.CancelTimer && run.ids[e.Args[0].Timer] == 0 {
					continue // spent: nothing to cancel
				}
				tr.Actions = append(tr.Actions, e.Action)
			}
		}
		for _, x := range w.content(r) {
			for _, e := range x.Actions {
				tr.Actions = append(tr.Actions, e.Action)
			}
		}
		for _, x := range r.Entries {
			for _, e := range x.Actions {
				if e.Action == m.StartTimer {
					run.last++
					run.ids[e.Args[0].Timer] = run.last
				}
				tr.Actions = append(tr.Actions, e.Action)
			}
			var resumed []*State
			if x.Resume != nil {
				resumed = w.Resumed
			} else if x.Into != nil {
				resumed = m.Entered(x)
				for i, l := range w.hosted {
					if l != nil && x.IntoResume != nil {
						resumed[i] = l // see Run.IntoResume
					}
				}
			}
			tr.Actions = append(tr.Actions, m.enterRegions(x.State, resumed, x.Resume == nil && x.Into != nil, &run)...)
		}
		tr.Effects = append(tr.Effects, run.drain()...)
		if r.To != nil {
			src = r.To
		}
	}
	return tr, run
}

// trace works out what way w does from a machine made by Restore in
// state s, its regions' leaves cfg (see step and restoredIn); nothing for
// a way the search for witness paths follows (see parallelPaths), whose
// steps witnesses works out along each path.
func (m *Machine) trace(w *Way, s *State, cfg []*State) Trace {
	if m.searching {
		return Trace{}
	}
	tr, _ := m.step(w, restoredIn(s, cfg))
	return tr
}

// traceWays works out what every way does from a machine made by Restore.
func (m *Machine) traceWays() {
	for _, w := range m.Ways {
		w.Trace = m.trace(w, w.From, nil)
	}
}

// witnesses lays the paths out as a prefix tree and works out what the
// machine does along it, from the timers New starts.
func (m *Machine) witnesses() {
	type key struct {
		up  int
		way *Way
	}
	index := map[key]int{}
	var runs []timerRun
	start := timerRun{ids: map[*Timer]int{}}
	for _, x := range m.Start {
		for _, e := range x.Actions {
			if e.Action == m.StartTimer {
				start.last++
				start.ids[e.Args[0].Timer] = start.last
			}
		}
		m.enterRegions(x.State, nil, false, &start)
	}
	for _, p := range m.Paths {
		up := -1
		for _, w := range p.Steps {
			k := key{up, w}
			if i, ok := index[k]; ok {
				up = i
				continue
			}
			before := start
			if up >= 0 {
				before = runs[up]
			}
			tr, after := m.step(w, before)
			index[k] = len(m.Witnesses)
			up = len(m.Witnesses)
			m.Witnesses = append(m.Witnesses, &Witness{Up: k.up, Way: w, Trace: tr})
			runs = append(runs, after)
		}
		m.PathEnds = append(m.PathEnds, up)
	}
}
