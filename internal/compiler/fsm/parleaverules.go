package fsm

import (
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
)

// This file resolves, in the machine's build, the rules that leave a
// parallel state from inside a region (see parleave.go), and answers
// their In(State) guards on the ways and witness paths.

// leavingRules resolves the In(State) guards of the rules that leave a
// parallel state from inside one of its regions (ins, made by the
// machine's build; inRegion are the states inside regions by name), and
// names each rule after its source (Rule.Source): an else branch of its
// guards (elses) as such.
func leavingRules(m *Machine, ins []*Func, inRegion map[string]*State, owns, elses map[diag.Pos]bool) {
	if len(ins) == 0 {
		return
	}
	for _, r := range m.Rules {
		if owns[r.Pos] && r.Else {
			// The parallel state's own rule after those that leave it:
			// written unguarded, as the spec does.
			r.Else = false
			r.Listed = r.Kind != Transition
			r.Label = RuleLabel(r)
		}
	}
	for _, fn := range ins {
		fn.In = inRegion[fn.InName]
	}
	for _, r := range m.Rules {
		switch {
		case r.SourceIn != nil:
			// A branch of its guards that tests In(S) before its guard.
			r.Source = r.SourceIn.In
		case r.Guard == nil || !slices.Contains(ins, r.Guard):
			continue
		default:
			r.Source = r.Guard.In
			r.Else = elses[r.Pos]
		}
		from, guard := r.From, r.Guard
		r.From, r.Guard = r.Source, r.ShownGuard()
		r.Label = RuleLabel(r)
		r.From, r.Guard = from, guard
	}
}

// leaveTest reports whether test t asks the In(State) guard of a rule
// that leaves a parallel state from inside a region (see above), which
// the configuration answers: no choice of the generated tests.
func leaveTest(t Test) bool { return t.Guard != nil && t.Guard.In != nil }

// inAgrees reports whether configuration cfg answers the In(State)
// guards way w of a parallel state's own rules tests as w does, and
// drops those tests from w.
func inAgrees(w *Way, cfg []*State) bool {
	var kept []Test
	for _, t := range w.Tests {
		if !leaveTest(t) {
			kept = append(kept, t)
			continue
		}
		if inHolds(t.Guard.In, w.From, cfg) != t.Holds {
			return false
		}
	}
	w.Tests = kept
	return true
}

// inConfig returns cfg, a configuration of parallel state p in which no
// region takes the event of way w, changed so that it answers the
// In(State) guards w tests as w does (see inAgrees); nil when no
// configuration does.
func (m *Machine) inConfig(p *State, w *Way, cfg []*State) []*State {
	if !slices.ContainsFunc(w.Tests, leaveTest) {
		return cfg
	}
	out := slices.Clone(cfg)
	for _, reg := range p.Regions {
		fits := func(l *State) bool {
			if c := l.Cell(w.Event); c != nil && !c.Out() || l.Regions != nil || l.Settles() {
				return false
			}
			for _, t := range w.Tests {
				if leaveTest(t) && t.Guard.In.Region == reg && t.Guard.In.Contains(l) != t.Holds {
					return false
				}
			}
			return true
		}
		if fits(out[reg.Index]) {
			continue
		}
		i := slices.IndexFunc(reg.Leaves, func(l *State) bool { return fits(l) && !l.Final })
		if i < 0 {
			i = slices.IndexFunc(reg.Leaves, fits)
		}
		if i < 0 {
			return nil
		}
		m.place(out, reg, reg.Leaves[i])
	}
	if p.completes(out) || !inAgrees(w, out) {
		return nil
	}
	return out
}

// leavesFrom reports whether leaf s of a region of parallel state par,
// or a state around it, has a rule for event e that leaves par (see
// above).
func (h *parHook) leavesFrom(par, e string, s *State) bool {
	for _, a := range s.Path() {
		if slices.Contains(h.sources[par][e], a.Name) {
			return true
		}
	}
	return false
}

// passRules points each rule of a region's chain that stands for a branch
// that leaves the region's parallel state (see mixed) at the parallel
// state's rule for the branch (Rule.Leaves), whose label it takes.
func passRules(m *Machine, passing []*Rule) {
	for _, r := range passing {
		p := r.From.Region.Parallel
		i := slices.IndexFunc(m.Rules, func(o *Rule) bool {
			// An eventless rule's is named after its source here (see
			// parleaveeventless.go and parleavedone.go).
			src := o.Source == r.From || r.Event == nil && o.Source == nil
			return o.From == p && o.Event == r.Event && o.Pos == r.Pos && src
		})
		if i < 0 {
			continue
		}
		if l := m.Rules[i]; l.Source == nil {
			// A done transition's stays its composite state's (see
			// parleavedone.go); so do its variants into a history.
			for _, v := range append([]*Rule{l}, l.Variants...) {
				v.Source, v.Done = r.From, r.Done
				v.Label = sourceLabel(v)
			}
		}
		r.Leaves = m.Rules[i]
		r.Label = r.Leaves.Label
		r.Leaves.Mixed = true
		for _, v := range append([]*Rule{r.Leaves}, r.Leaves.Variants...) {
			v.Mixed = true // taken where the rule is (see preempted)
			// A branch of a composite state's eventless row, which its
			// source takes: the composite state's (see compositeWaits).
			v.Around = r.Around
		}
	}
}

// passes reports whether the chain of region cell c, or one it falls
// back to, holds a branch that leaves the parallel state (Rule.Leaves).
func passes(c *Cell) bool {
	for ; c != nil && !c.Out(); c = c.Fallback {
		if slices.ContainsFunc(c.Rules, func(r *Rule) bool { return r.Leaves != nil }) {
			return true
		}
	}
	return false
}

// quietOthers returns cfg, a configuration of parallel state p, with each
// region of p but reg in a leaf at rest that has no rule for e where it is
// not in one already, so that a branch of reg's that leaves p reaches p's
// rules; nil when that changes nothing, or some region has a rule for e
// in every leaf, or the configuration completes p.
func quietOthers(p *State, reg *Region, cfg []*State, e *Event) []*State {
	out := slices.Clone(cfg)
	changed := false
	for _, o := range p.Regions {
		quiet := func(s *State) bool {
			c := s.Cell(e)
			return (c == nil || c.Out()) && s.Regions == nil && !s.Settles()
		}
		if o == reg || quiet(out[o.Index]) {
			continue
		}
		i := slices.IndexFunc(o.Leaves, func(s *State) bool { return quiet(s) && !s.Final })
		if i < 0 {
			return nil
		}
		out[o.Index], changed = o.Leaves[i], true
	}
	if !changed || p.completes(out) {
		return nil
	}
	return out
}

// OwnChain returns the rules of parallel state p for event e that its own
// chain tries once no region took e: p's cell without the rules a
// region's chain takes (Rule.Mixed), or the cell it falls back to when
// none is left; nil when p has none.
func OwnChain(p *State, e *Event) *Cell {
	c := p.Cell(e)
	if c == nil || !slices.ContainsFunc(c.Rules, func(r *Rule) bool { return r.Mixed }) {
		return c
	}
	own := *c
	own.Rules = slices.DeleteFunc(slices.Clone(c.Rules), func(r *Rule) bool { return r.Mixed })
	if len(own.Rules) == 0 {
		return c.Fallback
	}
	if !own.Open() {
		own.Fallback = nil
	}
	return &own
}
