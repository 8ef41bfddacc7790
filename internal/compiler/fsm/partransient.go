package fsm

import (
	"slices"
	"strings"
)

// eventless continues way w of parallel state p, after which some
// regions are in transient states (after), through their eventless rules,
// taken together as one microstep (SCXML 1.0 §3.13,
// selectEventlessTransitions: the first enabled eventless transition of
// every atomic state, in document order, then one microstep of them all;
// XState v5's always does the same), and again while some region is in a
// transient state or in a state that waits (State.Waits) and some region
// moved in the microstep before: one way per combination of the branches
// their guards take, tested before any of them moves, a state that waits
// staying when none holds. queue are the regions whose done
// events wait (see settle), which the microstep does not move.
//
// A branch that leaves p (Rule.Leaves, see parleaveeventless.go)
// conflicts with every other (removeConflictingTransitions): taken when
// no region before its own moves in the microstep, the regions after it
// then testing their guards but moving not; dropped otherwise, its state
// trying its guards again in the next microstep.
func (m *Machine) eventless(p *State, w *Way, after []*State, queue []*Region) []regionWay {
	// Each microstep takes every combination of the branches its guards
	// may take, and the next each of those: where many states wait,
	// too many ways to follow (see parjoin.go).
	if m.microsteps++; m.microsteps > microstepLimit {
		if m.swamped == nil {
			m.swamped = p
		}
		return nil
	}
	// A configuration a microstep of this step began in before (the
	// calls that follow one step's microsteps nest): a loop the loop
	// checks missed, which would not end while its guards hold.
	key := settleKey(after, queue)
	if slices.Contains(m.settling, key) {
		if m.endless == nil {
			m.endless = p
		}
		return nil
	}
	m.settling = append(m.settling, key)
	defer func() { m.settling = m.settling[:len(m.settling)-1] }()
	type alt struct {
		way   *Way
		next  []*State
		leave *Rule // the branch that leaves p, which the microstep takes
		took  bool  // some region moved in the microstep
	}
	alts := []alt{{way: w, next: after}}
	for _, reg := range p.Flat {
		// The regions of the parallel states inside regions too, in
		// document order; one the microstep enters waits for the next.
		s := after[reg.Index]
		if !s.Eventless() {
			continue
		}
		var out []alt
		for _, a := range alts {
			for _, pk := range picks(s.Choice, after) {
				pk = w.pinned(pk)
				if !a.way.agrees(pk.tests, pk.asks, len(w.Rules)) {
					continue // a guard asked before answers as it did (see asked.go)
				}
				// A state that waits stays when no guard holds.
				stay := pk.leaves == nil && pk.rule == nil && s.Waits
				if !stay && pk.leaves == nil && (pk.rule == nil || pk.rule.To == nil) {
					continue // an eventless rule leaves its state (checked by the build)
				}
				nw := *a.way
				nw.Tests = append(slices.Clone(a.way.Tests), pk.tests...)
				nw.ask(pk.tests, pk.asks, len(w.Rules))
				n := a
				n.way = &nw
				switch {
				case stay:
				case pk.leaves != nil:
					if !a.took && a.leave == nil {
						n.leave = pk.leaves
					}
				case a.leave != nil:
					// Dropped: the branch that leaves p conflicts with it.
				default:
					nw.Rules = append(slices.Clone(a.way.Rules), pk.rule)
					nw.moved = append(slices.Clone(a.way.moved), reg)
					next := slices.Clone(a.next)
					next[reg.Index] = pk.rule.To
					p.reenter(next, []*Rule{pk.rule})
					n.next, n.took = next, true
				}
				out = append(out, n)
			}
		}
		alts = out
	}
	var out []regionWay
	for _, a := range alts {
		nw := a.way
		if a.leave != nil {
			// The branch that leaves p, from the configuration the
			// microstep started in, as p's done transition does.
			cw := *nw
			cw.Rules = append(slices.Clone(nw.Rules), a.leave)
			cw.To, cw.Final, cw.after = a.leave.To, after, 0
			out = append(out, m.completed(p, w, cw)...)
			continue
		}
		if !a.took {
			// No region moved: the regions rest in the states that wait
			// (SCXML 1.0 §3.13: no eventless transition is enabled), and
			// the done events that wait are taken.
			out = append(out, m.settled(p, nw, a.next, queue)...)
			continue
		}
		nw.groups = append(slices.Clone(w.groups), len(nw.Rules)-len(w.Rules))
		// The done events the microstep raised wait behind those raised
		// before it, in document order (SCXML 1.0 §3.13, enterStates).
		out = append(out, m.settle(p, nw, a.next, p.raised(queue, p.targeted(nw.Rules[len(w.Rules):], nw.moved[len(w.moved):]), a.next))...)
	}
	return out
}

// microstepLimit is how many microsteps of eventless rules the witness
// paths follow at most (about a minute on one core): past it, the
// checker gives up and says so rather than run on for hours. A variable
// for the tests.
var microstepLimit = 1 << 20

// settleKey names the configuration a microstep of eventless rules
// begins in: the regions' leaves and the done events that wait.
func settleKey(after []*State, queue []*Region) string {
	var sb strings.Builder
	for _, s := range after {
		if s != nil {
			sb.WriteString(s.Name)
		}
		sb.WriteByte(',')
	}
	for _, reg := range queue {
		sb.WriteString(" " + reg.Root.Name)
	}
	return sb.String()
}
