package fsm

import "slices"

// This file works out what a parallel state inside a region (see
// parinreg.go) adds to the ways and witness paths of a machine with
// parallel states (see parpaths.go): a configuration names a leaf for
// each of its regions while its host region is in it, and nil otherwise.

// hosting reports whether run enters or leaves a parallel state inside a
// region, whose regions are entered after its entry and left before its
// exit.
func hosting(run *Run) bool { return run.State.Region != nil && run.State.Regions != nil }

// hostedTimers returns the bits of the timers of the states inside the
// regions of parallel state s, those of the parallel states inside them
// included.
func hostedTimers(s *State) uint64 {
	var bits uint64
	for _, reg := range s.Regions {
		bits |= timerBits(reg.Timers)
		for _, l := range reg.Leaves {
			if l.Regions != nil {
				bits |= hostedTimers(l)
			}
		}
	}
	return bits
}

// settleHosts makes configuration cfg of parallel state p whole: a region
// of a parallel state inside a region is in its initial leaf when its
// host region is in that parallel state and cfg names none, and in none
// otherwise. Hosts come before the regions they hold (document order).
func (p *State) settleHosts(cfg []*State) { p.fillHosts(cfg, (*Region).first) }

// restHosts is settleHosts for a configuration the machine rests in, to
// restore it: a region it fills is in its Resting leaf, not in a
// transient initial state.
func (p *State) restHosts(cfg []*State) { p.fillHosts(cfg, (*Region).Resting) }

// first returns the leaf region reg is entered in.
func (reg *Region) first() *State { return reg.Initial }

// fillHosts puts the regions of the parallel states inside the regions
// of p that cfg names no leaf for in leaf(reg) when their host region is
// in that parallel state, and in none otherwise.
func (p *State) fillHosts(cfg []*State, leaf func(*Region) *State) {
	for _, reg := range p.Flat {
		switch {
		case reg.Host == nil:
		case cfg[reg.Host.Index] != reg.Within:
			cfg[reg.Index] = nil
		case cfg[reg.Index] == nil:
			cfg[reg.Index] = leaf(reg)
		}
	}
}

// place puts region reg of cfg in leaf l, and the regions that host it in
// the parallel states that hold it, the others at rest (see restHosts).
func (m *Machine) place(cfg []*State, reg *Region, l *State) {
	for h := reg; h.Host != nil; h = h.Host {
		cfg[h.Host.Index] = h.Within
	}
	cfg[reg.Index] = l
	reg.Parallel.restHosts(cfg)
}

// PickOrder returns the regions regs in the order they pick their rules
// for an event: each region after those of the parallel states inside it
// (at any depth), which preempt it, in document order otherwise. The
// generated code asks their guards in this order, and the witness paths
// answer them so.
func PickOrder(regs []*Region) []*Region {
	var out []*Region
	var add func(reg *Region)
	add = func(reg *Region) {
		if slices.Contains(out, reg) {
			return
		}
		for _, o := range regs {
			if o.Host == reg {
				add(o)
			}
		}
		out = append(out, reg)
	}
	for _, reg := range regs {
		add(reg)
	}
	return out
}

// preempt drops, from the picks ch of regions regs, the pick of a region
// that hosts a parallel state one of whose regions (at any depth) picked
// a rule: a descendant's transition preempts its ancestor's (SCXML 1.0
// §3.13, removeConflictingTransitions; XState v5 likewise), as a region's
// preempts its parallel state's. The host's guards are then not asked
// (see PickOrder), so its pick's tests go too.
func preempt(regs []*Region, ch []pick) []pick {
	out := ch
	for i, reg := range regs {
		if ch[i].rule == nil {
			continue
		}
		for h := reg.Host; h != nil; h = h.Host {
			if j := slices.Index(regs, h); j >= 0 && (out[j].rule != nil || len(out[j].tests) > 0) {
				if &out[0] == &ch[0] {
					out = slices.Clone(ch)
				}
				out[j] = pick{}
			}
		}
	}
	return out
}

// reenter updates after, the configuration of parallel state p once the
// regions' rules moves have moved, for the parallel states inside regions
// that the rules enter (anew, their regions in their initial leaves) or
// leave (their regions in none).
func (p *State) reenter(after []*State, moves []*Rule) {
	cleared := map[*State]bool{}
	for _, r := range moves {
		for _, run := range r.Entries {
			if hosting(run) {
				cleared[run.State] = true
			}
		}
	}
	gone := map[*Region]bool{}
	for _, reg := range p.Flat {
		if reg.Host != nil && (cleared[reg.Within] || gone[reg.Host]) {
			after[reg.Index] = nil
			gone[reg] = true
		}
	}
	for _, r := range moves {
		for _, run := range r.Entries {
			// A rule into a state inside a parallel state inside its
			// region enters that state's region (and those around it
			// inside the parallel state) through it.
			if hosting(run) && run.Into != nil {
				for _, reg := range p.Flat {
					if l := run.IntoLeaf(reg); l != nil {
						after[reg.Index] = l
					}
				}
			}
		}
	}
	p.settleHosts(after)
}

// hostDone returns the first parallel state inside a region of parallel
// state p, in document order, whose done transition cfg takes: its host
// region is in it, and every one of its regions in a final leaf (SCXML
// 1.0 §3.4, done.state.ID). nil when none is. One whose guards may all
// fail (RestsFinal) may rest so: only the step that makes its regions all
// final raises its done event (see raised).
//
// A step that makes its regions all final queues its done event (see
// raised), which settle takes in the order it was raised; hostDone finds
// one that no queue holds once the others are taken (SCXML 1.0 §3.13).
func hostDone(p *State, cfg []*State) *State {
	for _, reg := range p.Flat {
		if q := reg.Within; q != nil && q.Completion != nil && !q.RestsFinal() && reg == q.Regions[0] && cfg[reg.Host.Index] == q && q.completes(cfg) {
			return q
		}
	}
	return nil
}

// takeHostDone continues way w of parallel state p, after which every
// region of q, a parallel state inside a region of p, is in a final leaf
// (after), through q's done transition, a rule of q's host region, in a
// microstep of its own: one way per branch of its guards, each tested
// once the step before ran, and, when every guard may fail (RestsFinal),
// one that rests with every region of q final; queue are the done events
// that wait behind it.
func (m *Machine) takeHostDone(p *State, w *Way, after []*State, q *State, queue []*Region) []regionWay {
	host := q.Regions[0].Host
	var out []regionWay
	for _, pk := range picks(q.Completion, after) {
		r := pk.rule
		if r == nil && q.RestsFinal() {
			// No guard holds: the done event is dropped (SCXML 1.0
			// §3.13), and every region of q rests final.
			cw := *w
			cw.Tests = append(slices.Clone(w.Tests), pk.tests...)
			out = append(out, m.settle(p, &cw, after, queue)...)
			continue
		}
		if r == nil || r.To == nil {
			continue // the checker requires a target
		}
		cw, next := p.microstep(w, pk, host, after)
		// A final state of a composite state inside host, or a parallel
		// state inside it entered with every region final, raises its
		// done event behind those waiting.
		out = append(out, m.settle(p, cw, next, p.raised(queue, []*Region{host}, next))...)
	}
	return out
}

// Restless reports whether entering parallel state s enters one of its
// regions in a leaf it never rests in (a transient state, or a final
// state whose composite state's done transition leaves it), or in a
// parallel state inside the region that does so in turn: the step that
// enters s then goes on with the eventless rules (SCXML 1.0 §3.13,
// selectEventlessTransitions after the microstep that enters a
// <parallel>).
func (s *State) Restless() bool {
	return slices.ContainsFunc(s.Regions, func(reg *Region) bool { return reg.Initial.LeftOnEntry() })
}

// LeftOnEntry reports whether a region entered in leaf s leaves it in the
// step that enters it: s settles (see Restless), or is a parallel state
// inside the region whose regions start so.
func (s *State) LeftOnEntry() bool { return s.Settles() || s.Regions != nil && s.Restless() }

// EnteredLeaf returns the leaf rule r, which enters reg's parallel state
// anew, enters region reg in: the leaf on the way to the state r targets
// inside a region (Run.IntoLeaf), or reg's initial leaf.
func (r *Rule) EnteredLeaf(reg *Region) *State {
	for _, run := range r.Entries {
		if l := run.IntoLeaf(reg); run.Entry && l != nil {
			return l
		}
	}
	return reg.Initial
}

// LeftOnEntry reports whether region reg, which rule r enters anew,
// leaves the leaf it is entered in (EnteredLeaf) in the same step: the
// leaf settles, or is a parallel state inside the region one of whose
// regions r so enters in turn. Unlike State.LeftOnEntry it follows a rule
// from outside down to its target inside a parallel state inside a
// region's state (SCXML 1.0 §3.13: the eventless transitions after the
// microstep that enters them).
func (r *Rule) LeftOnEntry(reg *Region) bool {
	leaf := r.EnteredLeaf(reg)
	return leaf.Settles() || slices.ContainsFunc(leaf.Regions, r.LeftOnEntry)
}

// EntersRestless reports whether rule r of a region enters a parallel
// state inside a region (anew) whose regions start in a leaf they never
// rest in (see Restless).
func (r *Rule) EntersRestless() bool {
	return slices.ContainsFunc(r.Entries, func(run *Run) bool {
		return run.Entry && hosting(run) && slices.ContainsFunc(run.State.Regions, r.LeftOnEntry)
	})
}
