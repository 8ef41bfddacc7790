package fsm

import "slices"

// This file works out the configurations of a parallel state's regions
// that the ways and witness paths (parpaths.go) start from and end in:
// the one a step enters, the one where no region takes an event, the one
// a region's final state completes, and the way through a transient
// state a step ends in.

// throughChoices continues way w, when it ends in a transient state,
// through that state's eventless rows in the same step, one way per
// branch (each with the guards before it false, as expand does): a done
// transition of a parallel state may lead into a transient state. A
// final state whose done transition may refuse (Rests), and a state that
// waits, are continued so too, and also rest there, every guard
// answering false.
func throughChoices(w Way) []Way {
	c := w.To.Choice
	if c == nil || w.To.parWaits {
		// (A parallel state that waits tests its rules once its regions
		// settled: see settleEntry.)
		return []Way{w}
	}
	var out []Way
	if w.To.Rests() || w.To.Waits {
		x := w
		x.Tests = slices.Clone(w.Tests)
		for _, r := range c.Rules {
			x.Tests = append(x.Tests, Test{Guard: r.Guard})
		}
		out = append(out, x)
	}
	for _, r := range c.Rules {
		x := w
		x.Tests = slices.Clone(w.Tests)
		for _, other := range c.Rules {
			if other.Guard != nil {
				x.Tests = append(x.Tests, Test{Guard: other.Guard, Holds: other == r})
			}
			if other == r {
				break
			}
		}
		x.Rules = append(slices.Clone(w.Rules), r)
		x.after++
		if r.To != nil {
			x.To = r.To
		}
		out = append(out, throughChoices(x)...)
	}
	return out
}

// enters reports whether way w enters parallel state s (anew).
func enters(w *Way, s *State) bool {
	for _, r := range w.Rules {
		for _, run := range r.Entries {
			if run.State == s {
				return true
			}
		}
	}
	return false
}

// initialConfig returns the leaves the regions enter first.
func initialConfig(m *Machine) []*State {
	out := make([]*State, len(m.Regions))
	for _, reg := range m.Regions {
		if reg.Host == nil {
			out[reg.Index] = reg.Initial
		}
	}
	for _, p := range m.States {
		p.settleHosts(out)
	}
	return out
}

// quietConfig returns a configuration of parallel state p in which no
// region has a rule for e, so that the event reaches p's own rules; nil
// when some region has one in every leaf.
func quietConfig(m *Machine, p *State, e *Event) []*State {
	cfg := restingConfig(m)
	for _, reg := range p.Regions {
		out := func(s *State) bool {
			c := s.Cell(e)
			// A parallel state inside the region offers the event to its
			// own regions first: not quiet.
			return (c == nil || c.Out()) && s.Regions == nil
		}
		// A leaf that is not final first: a machine restored with every
		// region final would take its done transition.
		i := slices.IndexFunc(reg.Leaves, func(s *State) bool { return out(s) && !s.Final && !s.Settles() })
		if i < 0 {
			i = slices.IndexFunc(reg.Leaves, func(s *State) bool { return out(s) && !s.Settles() })
		}
		if i < 0 {
			return nil
		}
		if !out(cfg[reg.Index]) {
			cfg[reg.Index] = reg.Leaves[i]
		}
	}
	p.restHosts(cfg)
	if p.completes(cfg) {
		return nil
	}
	return cfg
}

// finalConfig returns, for a region reg of parallel state p whose rules
// in cfg may enter a final leaf, cfg with every other region of the
// innermost state around reg with a done transition (p, or a parallel
// state nested in p) in its first final leaf, so that the rule completes
// it; nil when none has a done transition.
func finalConfig(p *State, reg *Region, cfg []*State) []*State {
	done := reg.Completions()
	if len(done) == 0 {
		return nil
	}
	out := slices.Clone(cfg)
	for _, o := range done[0].Regions {
		if o != reg {
			out[o.Index] = o.Finals[0]
		}
	}
	if p.completes(out) {
		return nil // reg is final too: never at rest
	}
	return out
}
