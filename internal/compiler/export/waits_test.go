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
// XState again after an internal event that enabled nothing, such as the
// done event of a parallel state the step left, nothing having moved since
// the guard answered false (see run.mjs). Only the guards of states that
// wait may be asked so.
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
	for s := m.Initial; s != nil && s.Choice != nil && (s.Waits || s.Transient || s.Rests()); {
		var took *fsm.Rule
		for _, r := range s.Choice.Rules {
			if r.Guard == nil {
				took = r
				break
			}
			require.NotEmpty(t, answers, "%s: New tested fewer guards than its rules ask", m.Name)
			require.Equal(t, r.Guard.Name, answers[0].Guard, "%s: the guard New tested", m.Name)
			holds := answers[0].Answer
			answers = answers[1:]
			if holds {
				took = r
				break
			}
		}
		if took == nil {
			break
		}
		out = append(out, goRule{Rule: took.Index, From: s.Name})
		s = took.To
	}
	return out
}
