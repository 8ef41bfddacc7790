package fsm

import "slices"

// This file settles a step of the regions of a parallel state, for the
// witness search (see parpaths.go): the eventless microsteps of the
// states that wait and the transient states, the done events of the
// composite states whose final states the step entered, in the order
// SCXML raises them, the parallel state's own eventless rules, and, once
// every region is final, its done transition.

// settle continues way w of parallel state p, after which the regions
// are in after, through the done transitions of the composite states
// inside its regions whose final states the way entered: queue are the
// regions in such a state, in the order their done events were raised
// (SCXML 1.0 §3.13: entries in document order, each done transition a
// microstep of its own, raising the next in turn). One way per branch of
// each done transition's guards, tested once the step before ran; then,
// when every region is final, p's own done transition (complete).
func (m *Machine) settle(p *State, w *Way, after []*State, queue []*Region) []regionWay {
	if slices.ContainsFunc(p.Flat, func(reg *Region) bool { return after[reg.Index].Eventless() }) {
		// SCXML 1.0 §3.13 (macrostep): the eventless transitions run
		// before the next done event of the internal queue is taken, those
		// of the regions of the parallel states inside regions among them
		// (their atomic states are the configuration's too).
		return m.eventless(p, w, after, queue)
	}
	return m.settled(p, w, after, queue)
}

// settled is settle once no region is in a state whose eventless rules
// the microstep would test: the done events that wait, then p's own done
// transition.
func (m *Machine) settled(p *State, w *Way, after []*State, queue []*Region) []regionWay {
	if len(queue) == 0 {
		if q := hostDone(p, after); q != nil {
			return m.takeHostDone(p, w, after, q, nil)
		}
		if p.Waits {
			return m.waitOwn(p, w, after, func(cw *Way) []regionWay { return m.settledDone(p, cw, after) })
		}
		return m.settledDone(p, w, after)
	}
	if p.Waits {
		// p's own eventless rules come before the done event (SCXML
		// 1.0 §3.13: the eventless transitions are selected before an
		// event of the internal queue is taken).
		return m.waitOwn(p, w, after, func(cw *Way) []regionWay { return m.settledQueue(p, cw, after, queue) })
	}
	return m.settledQueue(p, w, after, queue)
}

// settledQueue is settled for the done event of queue[0], which waits.
func (m *Machine) settledQueue(p *State, w *Way, after []*State, queue []*Region) []regionWay {
	reg := queue[0]
	if q := waitingHost(reg, after); q != nil {
		// The done event of a parallel state inside reg.
		return m.takeHostDone(p, w, after, q, queue[1:])
	}
	var out []regionWay
	for _, pk := range picks(after[reg.Index].Choice, after) {
		pk = w.pinned(pk)
		r := pk.rule
		if pk.leaves != nil {
			// A done transition that leaves p (see parleavedone.go): p's
			// rule, from the configuration the microstep starts in, as
			// p's own done transition is taken; the done events that
			// wait are dropped with the states that raised them.
			cw := *w
			cw.Tests = append(slices.Clone(w.Tests), pk.tests...)
			cw.Rules = append(slices.Clone(w.Rules), pk.leaves)
			cw.To, cw.Final, cw.after = pk.leaves.To, after, 0
			out = append(out, m.completed(p, w, cw)...)
			continue
		}
		if r == nil && after[reg.Index].Rests() {
			// No guard of the done transition holds: its done event is
			// dropped (SCXML 1.0 §3.13), and the region rests in the
			// final state.
			cw := *w
			cw.Tests = append(slices.Clone(w.Tests), pk.tests...)
			out = append(out, m.settle(p, &cw, after, queue[1:])...)
			continue
		}
		if r == nil || r.To == nil {
			continue // an eventless rule leaves its state (checked by the build)
		}
		cw, next := p.microstep(w, pk, reg, after)
		out = append(out, m.settle(p, cw, next, p.raised(queue[1:], p.targeted([]*Rule{r}, []*Region{reg}), next))...)
	}
	return out
}

// waitOwn continues way w of parallel state p, which waits, once its
// regions settled in after, through p's own eventless rules (SCXML 1.0
// §3.13: selected for an atomic state only when none of its nearer
// ancestors has one enabled, and preempted by a region's): one way per
// rule, its guard holding and those before it failing, leaving p from
// after as p's done transition does; then, every guard failing, the way
// on through next (the done event that waits, or p's done transition).
func (m *Machine) waitOwn(p *State, w *Way, after []*State, next func(*Way) []regionWay) []regionWay {
	var out []regionWay
	tests := w.Tests
	for _, r := range p.Choice.Rules {
		in := r.Guard.In
		if in != nil && !in.Contains(after[in.Region.Index]) {
			continue // In(State), answered by the configuration (see parinown.go)
		}
		cw := *w
		cw.Tests = slices.Clone(tests)
		if in == nil {
			cw.Tests = append(cw.Tests, Test{Guard: r.Guard, Holds: true})
			tests = append(slices.Clip(tests), Test{Guard: r.Guard})
		}
		cw.Rules = append(slices.Clone(w.Rules), r)
		cw.To, cw.Final, cw.after = r.To, after, 0
		out = append(out, m.completed(p, w, cw)...)
		if in != nil {
			return out // it holds: the rules after it are not tested
		}
	}
	cw := *w
	cw.Tests = tests
	return append(out, next(&cw)...)
}

// settledDone is settled once the regions of p settled and p's own
// eventless rules, if any, were not taken: p's done transition, when the
// step raised its done event.
func (m *Machine) settledDone(p *State, w *Way, after []*State) []regionWay {
	// Whether the step entered a final state of p's regions (or p,
	// with its regions' leaves).
	entered := slices.ContainsFunc(w.Rules, func(r *Rule) bool {
		return r.To != nil && r.To.Ends() && p.Contains(r.To) || slices.ContainsFunc(r.Entries, func(run *Run) bool {
			return run.State == p || run.State.Ends() && p.Contains(run.State)
		})
	})
	if done := p.raisedDone(w.Config, after, entered); len(done) > 0 {
		return m.complete(p, w, after, done)
	}
	return []regionWay{{way: w, after: after}}
}

// microstep returns way w of parallel state p continued by pk's rule, of
// region reg, as a microstep of its own, and the configuration after it,
// from after: the regions of the parallel states inside reg that the
// rule enters or leaves set too.
func (p *State) microstep(w *Way, pk pick, reg *Region, after []*State) (*Way, []*State) {
	r := pk.rule
	cw := *w
	cw.Tests = append(slices.Clone(w.Tests), pk.tests...)
	cw.Rules = append(slices.Clone(w.Rules), r)
	cw.moved = append(slices.Clone(w.moved), reg)
	cw.groups = append(slices.Clone(w.groups), 1)
	next := slices.Clone(after)
	next[reg.Index] = r.To
	p.reenter(next, []*Rule{r})
	return &cw, next
}

// completes reports whether cfg, the leaves of the regions of parallel
// state s, completes s or a parallel state nested as its regions: it has
// a done transition, and every region of it is in one of its final leaves
// (SCXML 1.0 §3.4 and §3.13: done.state.ID of a <parallel> is raised once
// all its children are in final states; see DoneIn).
func (s *State) completes(cfg []*State) bool { return s.DoneIn(cfg) != nil }

// complete continues way w of parallel state p, after which every region
// of p, or of a parallel state nested in it, is in a final leaf (after),
// through the done transitions the step raised (raised, see raisedDone),
// in the same step: one way per branch of the first's guards, each tested
// after the regions' rules ran (as a transient state's are), and, when
// every guard may fail (RestsFinal), the next one's, or one that rests
// there.
func (m *Machine) complete(p *State, w *Way, after []*State, raised []*State) []regionWay {
	var out []regionWay
	tests := w.Tests
	done := raised[0]
	for _, r := range done.Completion.Rules {
		if r.Guard != nil && r.Guard.In != nil && !r.Guard.In.Contains(after[r.Guard.In.Region.Index]) {
			continue // In(State), answered by the configuration (see parinown.go)
		}
		cw := *w
		cw.Tests = slices.Clone(tests)
		if r.Guard != nil && r.Guard.In != nil {
			cw.Rules = append(slices.Clone(w.Rules), r)
			cw.To, cw.Final = r.To, after
			out = append(out, m.completed(p, w, cw)...)
			return out
		}
		if r.Guard != nil {
			cw.Tests = append(cw.Tests, Test{Guard: r.Guard, Holds: true})
			tests = append(slices.Clip(tests), Test{Guard: r.Guard})
		}
		cw.Rules = append(slices.Clone(w.Rules), r)
		cw.To, cw.Final = r.To, after
		out = append(out, m.completed(p, w, cw)...)
	}
	if done.RestsFinal() {
		// No guard holds: the done event is dropped (SCXML 1.0 §3.13),
		// and the machine rests with every region of done final, or
		// the next done event raised is taken.
		cw := *w
		cw.Tests = tests
		if len(raised) > 1 {
			out = append(out, m.complete(p, &cw, after, raised[1:])...)
		} else {
			out = append(out, regionWay{way: &cw, after: after})
		}
	}
	return out
}
