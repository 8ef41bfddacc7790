package export_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// waitingGuards returns the guards of the eventless rules of machine m's
// states that wait (fsm.State.Waits).
func waitingGuards(m *fsm.Machine) []string {
	var out []string
	for _, s := range append(slices.Clone(m.States), m.RegionLeaves()...) {
		if !s.Waits {
			continue
		}
		for _, r := range s.Choice.Rules {
			if !slices.Contains(out, r.Guard.Name) {
				out = append(out, r.Guard.Name)
			}
		}
	}
	return out
}

// rejected reports whether the Go machine rejected the event of step r.
// The targets take a rejection as a transition that does nothing, after
// which they test the eventless rules of a state that waits, as after
// every step; the Go machine changes nothing, and does not. The guards
// are pure and the state rested, every one of them answering false: the
// runners answer false (see earlyGuards).
func rejected(m *fsm.Machine, r goResult) bool {
	if len(waitingGuards(m)) == 0 || len(r.Rules) != 1 {
		return false
	}
	all := m.AllRules()
	i := r.Rules[0].Rule
	return i < len(all) && all[i].Kind == fsm.Reject
}

// earlyGuards checks the guards of states that wait a target asked on a
// step of machine m where the Go machine did not: SCION before it took the
// step's event (see run.cjs), as it selects eventless transitions first,
// where the Go machine (and SCXML 1.0 §3.13) tested them at the end of the
// step before; either target after a rejected event (see rejected);
// either again after an internal event that enabled nothing, such as the
// done event of a parallel state the step left or of a region that ended,
// nothing having moved since the guard answered false (see run.mjs and
// run.cjs). Only the guards of states that wait may be asked so.
func earlyGuards(t *testing.T, tg target, m *fsm.Machine, name string, early []string) bool {
	t.Helper()
	ok := true
	for _, g := range early {
		ok = assert.Contains(t, waitingGuards(m), g, "%s: %s asked guard %s where the Go machine did not (before the event, or after a rejected one), which no state that waits has", name, tg.format, g) && ok
	}
	return ok
}

// newRules returns the rules New took in its own step, result g: the
// eventless rules of an initial state that waits, and of the states they
// lead to that wait or are transient, as the guards answered. New runs
// before the adapter can set an observer, so they are worked out from the
// answers, as the generated New tests them: each state's rules in order,
// the first whose guard holds (or the else) taken.
func newRules(t *testing.T, m *fsm.Machine, g goResult) []goRule {
	t.Helper()
	var out []goRule
	answers := g.Guards
	// holds answers guard r of New's step: In(State) from the regions'
	// leaves cfg, the others from the answers, in order.
	holds := func(r *fsm.Rule, cfg []*fsm.State) bool {
		if r.Guard.In != nil {
			return r.Guard.In.Contains(cfg[r.Guard.In.Region.Index])
		}
		require.NotEmpty(t, answers, "%s: New tested fewer guards than its rules ask", m.Name)
		require.Equal(t, r.Guard.Name, answers[0].Guard, "%s: the guard New tested", m.Name)
		yes := answers[0].Answer
		answers = answers[1:]
		return yes
	}
	asked := func() int { return len(g.Guards) - len(answers) } // by New so far
	var last *fsm.Rule
	for s := m.Initial; s != nil && s.Choice != nil && (s.Waits || s.Transient || s.Rests()) || s != nil && (s.Awaits() || startsEventless(s)); {
		var cfg []*fsm.State
		if s.Regions != nil {
			// A parallel state that waits or whose regions have states
			// that wait, entered by New or by the rule before: New tests
			// the regions' eventless rules, a microstep at a time (see
			// newRegionRules), then the parallel state's own.
			cfg = make([]*fsm.State, len(m.Regions))
			for _, reg := range s.Flat {
				if reg.Host != nil && cfg[reg.Host.Index] != reg.Within {
					continue // a region of a parallel state its host is not in (hosts come first)
				}
				cfg[reg.Index] = reg.Initial
				if last != nil {
					cfg[reg.Index] = last.EnteredLeaf(reg)
				}
			}
			rules, left := newRegionRules(s, cfg, holds, asked)
			if out = append(out, rules...); left {
				break
			}
			if !s.Waits {
				// Every region final: the parallel state's done
				// transition follows in New's step (SCXML 1.0 §3.13).
				d := newDone(s, cfg, holds)
				if d == nil {
					break
				}
				out = append(out, goRule{Rule: d.Index, From: s.Name, Asked: asked()})
				s, last = d.To, d
				continue
			}
		}
		var took *fsm.Rule
		for _, r := range s.Choice.Rules {
			if r.Guard == nil || holds(r, cfg) {
				took = r
				break
			}
		}
		if took == nil && s.Regions != nil {
			took = newDone(s, cfg, holds)
		}
		if took == nil {
			break
		}
		rule := goRule{Rule: took.Index, From: s.Name}
		if s.Regions != nil {
			rule.Asked = asked()
		}
		out = append(out, rule)
		s, last = took.To, took
	}
	return out
}

// startsEventless reports whether some region of parallel state p starts
// in a transient state, whose eventless rules the step that enters p
// takes.
func startsEventless(p *fsm.State) bool {
	return p.Regions != nil && slices.ContainsFunc(p.Flat, func(reg *fsm.Region) bool { return reg.Initial.Eventless() })
}

// newDone returns the branch of parallel state p's done transition that
// New's step takes when every region of p rests in a final leaf of cfg,
// its guards asked with holds; nil when a region is not final, p has no
// done transition, or no guard holds.
func newDone(p *fsm.State, cfg []*fsm.State, holds func(*fsm.Rule, []*fsm.State) bool) *fsm.Rule {
	if p.Completion == nil || slices.ContainsFunc(p.Regions, func(reg *fsm.Region) bool { return !slices.Contains(reg.Finals, cfg[reg.Index]) }) {
		return nil
	}
	for _, r := range p.Completion.Rules {
		if r.Guard == nil || holds(r, cfg) {
			return r
		}
	}
	return nil
}

// newRegionRules returns the eventless rules of the regions of parallel
// state p, entered in New's step in the leaves cfg, as the generated
// waitP takes them: each microstep, every region in a transient state or
// a state that waits picks the first rule whose guard holds (asked with
// holds before anything moves), then they all move; until none picks
// one. A rule that leaves p, picked where no region before its own picked
// one, ends them, and the step (left); one picked after is dropped. asked
// counts the guards asked so far, which each rule records as an observed
// one does.
func newRegionRules(p *fsm.State, cfg []*fsm.State, holds func(*fsm.Rule, []*fsm.State) bool, asked func() int) (rules []goRule, left bool) {
	var out []goRule
	for {
		var picked []*fsm.Rule
		var regs []*fsm.Region
		for _, reg := range p.Flat {
			l := cfg[reg.Index]
			if !l.Eventless() {
				continue
			}
			var took *fsm.Rule
		chain:
			for c := l.Choice; c != nil && !c.Out(); c = c.Fallback {
				for _, x := range c.Rules {
					if x.Guard == nil || holds(x, cfg) {
						took = x
						break chain
					}
				}
			}
			if took != nil {
				picked, regs = append(picked, took), append(regs, reg)
			}
		}
		if len(picked) == 0 {
			return out, false
		}
		n := asked()
		if picked[0].Leaves != nil {
			return append(out, goRule{Rule: picked[0].Leaves.Index, From: p.Name, Asked: n}), true
		}
		for i, x := range picked {
			if x.Leaves == nil {
				out = append(out, goRule{Rule: x.Index, From: p.Name, Asked: n})
				cfg[regs[i].Index] = x.To
			}
		}
	}
}
