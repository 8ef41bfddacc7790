package fsm

import "slices"

// eventless continues way w of parallel state p, after which some
// regions are in transient states (after), through their eventless rules,
// taken together as one microstep (SCXML 1.0 §3.13,
// selectEventlessTransitions: the first enabled eventless transition of
// every atomic state, in document order, then one microstep of them all;
// XState v5's always does the same), and again while some region is in a
// transient state: one way per combination of the branches their guards
// take, tested before any of them moves. queue are the regions whose done
// events wait (see settle), which the microstep does not move.
func (m *Machine) eventless(p *State, w *Way, after []*State, queue []*Region) []regionWay {
	ways := []*Way{w}
	nexts := [][]*State{after}
	for _, reg := range p.Flat {
		// The regions of the parallel states inside regions too, in
		// document order; one the microstep enters waits for the next.
		s := after[reg.Index]
		if !s.Eventless() {
			continue
		}
		var ws []*Way
		var ns [][]*State
		for i, cw := range ways {
			for _, pk := range picks(s.Choice, after) {
				if pk.rule == nil || pk.rule.To == nil {
					continue // an eventless rule leaves its state (checked by the build)
				}
				nw := *cw
				nw.Tests = append(slices.Clone(cw.Tests), pk.tests...)
				nw.Rules = append(slices.Clone(cw.Rules), pk.rule)
				nw.moved = append(slices.Clone(cw.moved), reg)
				next := slices.Clone(nexts[i])
				next[reg.Index] = pk.rule.To
				p.reenter(next, []*Rule{pk.rule})
				ws, ns = append(ws, &nw), append(ns, next)
			}
		}
		ways, nexts = ws, ns
	}
	var out []regionWay
	for i, nw := range ways {
		nw.groups = append(slices.Clone(w.groups), len(nw.Rules)-len(w.Rules))
		// The done events the microstep raised wait behind those raised
		// before it, in document order (SCXML 1.0 §3.13, enterStates).
		out = append(out, m.settle(p, nw, nexts[i], p.raised(queue, nw.moved[len(w.moved):], nexts[i]))...)
	}
	return out
}
