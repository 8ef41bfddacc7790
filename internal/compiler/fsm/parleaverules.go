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
