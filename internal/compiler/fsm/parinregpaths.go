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
func (p *State) settleHosts(cfg []*State) {
	for _, reg := range p.Flat {
		switch {
		case reg.Host == nil:
		case cfg[reg.Host.Index] != reg.Within:
			cfg[reg.Index] = nil
		case cfg[reg.Index] == nil:
			cfg[reg.Index] = reg.Initial
		}
	}
}

// place puts region reg of cfg in leaf l, and the regions that host it in
// the parallel states that hold it, the others settled (see settleHosts).
func (m *Machine) place(cfg []*State, reg *Region, l *State) {
	for h := reg; h.Host != nil; h = h.Host {
		cfg[h.Host.Index] = h.Within
	}
	cfg[reg.Index] = l
	reg.Parallel.settleHosts(cfg)
}

// preempt drops, from the picks ch of regions regs, the rule of a region
// that hosts a parallel state one of whose regions (at any depth) picked
// a rule: a descendant's transition preempts its ancestor's (SCXML 1.0
// §3.13, removeConflictingTransitions; XState v5 likewise), as a region's
// preempts its parallel state's.
func preempt(regs []*Region, ch []pick) []pick {
	out := ch
	for i, reg := range regs {
		if ch[i].rule == nil {
			continue
		}
		for h := reg.Host; h != nil; h = h.Host {
			if j := slices.Index(regs, h); j >= 0 && out[j].rule != nil {
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
	p.settleHosts(after)
}
