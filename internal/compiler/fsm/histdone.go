package fsm

import "slices"

// This file follows a rule into a history that resumes a final state:
// a history beside a done transition that leaves its state remembers the
// final state it leaves from (SCXML 1.0 §3.10; see remembered), and the
// final state is a transient state whose eventless rule is the done
// transition, so the step that resumes it goes on through the done
// transition. The witness paths pick the variant by what the machine
// remembers, and go on from there.

// resolveWays is resolveWay for the search of paths: when the variant
// that fires resumes a final state (a transient state, whose done
// transition is its eventless rule: see remembered), the way goes on
// through its eventless rules, one way per branch, each resolved with the
// memory after it.
func resolveWays(w *Way, hist []*State) ([]*Way, [][]*State) {
	out, mem := resolveWay(w, hist)
	last := out.Rules[len(out.Rules)-1]
	if out == w || last.Kind != Transition || last.Resume == nil || last.To == nil || !last.To.Transient || last.To.Choice == nil {
		return []*Way{out}, [][]*State{mem}
	}
	var ways []*Way
	var mems [][]*State
	for _, next := range expand(last.To, last.To.Choice) {
		cp := *out
		cp.Rules = append(slices.Clone(out.Rules), next.Rules...)
		cp.Tests = append(slices.Clone(out.Tests), next.Tests...)
		cp.To = next.To
		ws, ms := resolveWays(&cp, hist)
		ways, mems = append(ways, ws...), append(mems, ms...)
	}
	return ways, mems
}

// continueFinal is resolveWays for a machine with parallel states: the
// ways rw goes on into when, from a machine that remembers hist, the
// variant that fires resumes a final state; rw itself otherwise. The
// ways are resolved again, as every way of the search is.
func (m *Machine) continueFinal(rw regionWay, hist []*State) []regionWay {
	if rw.way.Regional {
		return []regionWay{rw}
	}
	res, _ := m.resolveRegional(rw, hist)
	out := res.way
	last := out.Rules[len(out.Rules)-1]
	if out == rw.way || last.Kind != Transition || last.Resume == nil || last.To == nil || !last.To.Transient || last.To.Choice == nil {
		return []regionWay{rw}
	}
	var ways []regionWay
	for _, next := range expand(last.To, last.To.Choice) {
		cp := *rw.way
		cp.Rules = append(slices.Clone(out.Rules), next.Rules...)
		cp.Tests = append(slices.Clone(out.Tests), next.Tests...)
		cp.To = next.To
		var after []*State
		if cp.To.Regions != nil && enters(&cp, cp.To) {
			after = initialConfig(m)
		}
		ways = append(ways, m.continueFinal(regionWay{way: &cp, after: after}, hist)...)
	}
	return ways
}
