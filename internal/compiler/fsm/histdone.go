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
	if resumesEventless(out) {
		return intoEventless(out, hist)
	}
	last := out.Rules[len(out.Rules)-1]
	if out == w || last.Kind != Transition || last.Resume == nil || last.To == nil || last.To.Choice == nil || last.To.parWaits {
		return []*Way{out}, [][]*State{mem}
	}
	var ways []*Way
	var mems [][]*State
	for _, next := range expand(last.To, last.To.Choice) {
		ws, ms := resolveWays(joined(out, next), hist)
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
		ws := m.continueRegion(rw, hist)
		if len(ws) != 1 || ws[0].way != rw.way {
			// Settled anew from the variants picked: a way that ends with
			// the parallel state's done transition goes on as below.
			var out []regionWay
			for _, s := range ws {
				if s.way.Final != nil {
					out = append(out, m.continueFinal(s, hist)...)
				} else {
					out = append(out, s)
				}
			}
			return out
		}
		if rw.way.Final == nil {
			return ws
		}
		// The regions' rules ended with the parallel state's done
		// transition, which may go into a history that resumes a final
		// state: the step goes on through its eventless rules (the done
		// transition of its composite state), as after any rule.
	}
	res, _ := m.resolveRegional(rw, hist)
	out := res.way
	last := out.Rules[len(out.Rules)-1]
	waiting := resumesEventless(out) // (see intoEventless)
	if waiting {
		last = lastMove(out)
	}
	if !waiting && (out == rw.way || last.Kind != Transition || last.Resume == nil || last.To == nil || last.To.Choice == nil || last.To.parWaits) {
		return []regionWay{rw}
	}
	var ways []regionWay
	for _, next := range expand(last.To, last.To.Choice) {
		cp := *rw.way
		cp.Rules = append(slices.Clone(out.Rules), next.Rules...)
		cp.Tests = append(slices.Clone(out.Tests), next.Tests...)
		cp.To = next.To
		if waiting && len(next.Rules) == 0 {
			// No guard holds: the way rests in the state it resumed.
			ways = append(ways, regionWay{way: &cp})
			continue
		}
		if cp.Regional {
			cp.after += len(next.Rules) // eventless rules after the done transition
		}
		var after []*State
		if cp.To.Regions != nil && enters(&cp, cp.To) {
			after = m.enteredConfig(&cp)
		}
		ways = append(ways, m.continueFinal(regionWay{way: &cp, after: after}, hist)...)
	}
	return ways
}

// continueRegion is continueFinal for a way the regions take: when a
// region's rule into a history inside the region picks, from a machine
// that remembers hist, a variant that resumes a final state (whose
// composite state's done transition leaves the history's state, or a
// final state of the region whose parallel state has a done transition,
// which the history of the region's own state remembers), a transient
// state, or a state that waits, the step goes on as when a rule enters
// that state (settle): through that done transition, or, once every
// region is final, the parallel state's; through the eventless rules of
// the transient state, or of the state that waits.
// So it does, from the state the variant resumes, when the way went on
// after its first rules from the default's (a transient initial state's
// eventless rules, say), and whenever the parallel state has states that
// wait, whose In(State) guards may read the state resumed. The way's
// first rules are taken again with the variants picked, and settled
// anew; rw itself otherwise.
func (m *Machine) continueRegion(rw regionWay, hist []*State) []regionWay {
	w := rw.way
	if w.micro == 0 || w.head != nil || w.anew {
		return []regionWay{rw}
	}
	// A deep history that resumes a parallel state inside a region whose
	// regions start in states that wait or transient states: the step
	// tests the rows of the states resumed, not of those it starts in.
	hosted := slices.ContainsFunc(w.Rules[:w.micro], func(r *Rule) bool {
		return r.To != nil && (startsWaiting(r.To) || r.To.Restless()) && m.resumeHosted(r, hist) != nil
	})
	if !hosted && !slices.ContainsFunc(w.Rules, func(r *Rule) bool { return len(r.Variants) > 0 }) {
		return []regionWay{rw}
	}
	res, _ := m.resolveRegional(rw, hist)
	out := res.way
	picked, goesOn := false, hosted
	for i := range w.micro {
		if r := out.Rules[i]; r != w.Rules[i] {
			picked, goesOn = true, goesOn || resumesEnd(r) || r.To != nil && r.To.Waits
		}
	}
	// A later microstep's rule into a history (an eventless rule, or a
	// done transition) whose variant resumes a state the step leaves
	// again: the step settles anew, that rule fired as its variant.
	var pins map[*Rule]*Rule
	for i := w.micro; i < len(w.Rules) && i < len(out.Rules); i++ {
		if r := out.Rules[i]; r != w.Rules[i] && resumesEnd(r) {
			if pins == nil {
				pins = map[*Rule]*Rule{}
			}
			pins[w.Rules[i]] = r
			picked, goesOn = true, true
		}
	}
	if !goesOn && (!picked || len(w.Rules) == w.micro && !w.From.Awaits()) {
		return []regionWay{rw}
	}
	p := w.From
	cw := *w
	cw.Tests = slices.Clone(w.Tests[:w.pre])
	cw.Rules = slices.Clone(out.Rules[:w.micro])
	cw.moved = slices.Clone(w.moved[:w.micro])
	cw.groups, cw.Final, cw.after, cw.To, cw.asked, cw.pins, cw.anew = nil, nil, 0, p, nil, pins, true
	after := slices.Clone(w.Config)
	for i, r := range cw.Rules {
		if r.To != nil {
			after[cw.moved[i].Index] = r.To
		}
	}
	p.reenter(after, cw.Rules)
	if out.hosted != nil {
		after = m.placeResumed(after, out.hosted)
		cw.hosted = out.hosted
	}
	// The done events the rules raised, a parallel state's inside a
	// region whose regions they made all final among them (see raised).
	return m.settle(p, &cw, after, p.raised(nil, p.targeted(cw.Rules, cw.moved), after))
}

// resumesEnd reports whether variant v of a region's rule into a history
// resumes a state it leaves in the step: a transient state, or a final
// state whose composite state's done transition leaves the history's state
// (see remembered), or a final state of the region, remembered by the
// history of the region's own state, whose parallel state (a parallel
// state inside a region, or one nested as a region that holds it, among
// them) has a done transition, taken when every other region is final too
// (SCXML 1.0 §3.4 and §3.13).
func resumesEnd(v *Rule) bool {
	to := v.To
	if to == nil || to.Region == nil {
		return false
	}
	if to.Settles() {
		return true
	}
	if !slices.Contains(to.Region.Finals, to) {
		return false
	}
	if w := to.Region.Within; w != nil {
		return w.Completion != nil
	}
	// (the parallel states nested as regions that hold the region too)
	return len(to.Region.Completions()) > 0
}

// resumesEventless reports whether resolved way w ends with a rule into
// a history (the default, or the variant that fires) whose state waits
// or is transient: expand stops there, the default's state being known
// only once the variant is (see follow), and the way goes on through the
// eventless rules of the state the variant enters.
func resumesEventless(w *Way) bool {
	last := lastMove(w)
	return last != nil && (last.To.Waits || last.To.Transient) && !last.To.parWaits && (last.History != nil || last.Resume != nil)
}

// lastMove returns the last rule of way w with a target: the rules
// beside a lead that leaves a parallel state come after it (see
// Way.besides), and move nothing. Nil when no rule has a target.
func lastMove(w *Way) *Rule {
	for i := len(w.Rules) - 1; i >= 0; i-- {
		if r := w.Rules[i]; r.Kind == Transition && r.To != nil {
			return r
		}
	}
	return nil
}

// intoEventless continues resolved way w, whose last rule enters a state
// that waits, or a transient state, through a history, through that
// state's eventless rules: one way per branch, and for a state that waits
// one that stays, each resolved again from the memory hist w started
// with.
func intoEventless(w *Way, hist []*State) ([]*Way, [][]*State) {
	last := lastMove(w)
	var ways []*Way
	var mems [][]*State
	for _, next := range expand(last.To, last.To.Choice) {
		cp := joined(w, next)
		if len(next.Rules) == 0 || lastMove(cp) == last {
			// No guard holds: the way rests in the state it resumed (or
			// the branch moves nowhere: a target the build refused).
			o, mem := resolveWay(cp, hist)
			ways, mems = append(ways, o), append(mems, mem)
			continue
		}
		ws, ms := resolveWays(cp, hist)
		ways, mems = append(ways, ws...), append(mems, ms...)
	}
	return ways, mems
}

// freshEventless is intoEventless for way w of a machine with parallel
// states, resolved from a machine made by Restore in configuration cfg
// (see resolveFresh): when it resumes a state that waits (or a transient
// state) through a history, one way per branch of that state's eventless
// rules and, for a state that waits, one that stays, each with its trace
// worked out again; w itself otherwise, and for a way the regions take
// (continueRegion settles those).
func (m *Machine) freshEventless(w *Way, cfg []*State) []*Way {
	if w.Regional || !resumesEventless(w) {
		return []*Way{w}
	}
	last := lastMove(w)
	var out []*Way
	for _, next := range expand(last.To, last.To.Choice) {
		cp := joined(w, next)
		cp.Trace = m.trace(cp, w.From, cfg)
		out = append(out, cp)
	}
	return out
}

// joined returns way w continued by way next, which starts in the state
// w ends in: its rules and tests after w's, and where it ends.
func joined(w, next *Way) *Way {
	cp := *w
	cp.Rules = append(slices.Clone(w.Rules), next.Rules...)
	cp.Tests = append(slices.Clone(w.Tests), next.Tests...)
	cp.To = next.To
	return &cp
}
