package fsmtest

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// newStep returns the first node of a path when it is New's own step (a
// node without an event: the eventless rules of an initial state that
// waits, which New tests once it has entered the state), or nil.
func newStep[Ev any, A fsmrt.Kind](nodes []Node[Ev, A], path []int) *Node[Ev, A] {
	if len(path) == 0 || any(nodes[path[0]].Event) != nil {
		return nil
	}
	return &nodes[path[0]]
}

// checkNew checks New's own step n (nil: New took none): at is the state
// New left the machine in, acts what it handed out. The state must be
// the one the step's last rule with a target leads to (the rules of a
// parallel state's regions after it, a done transition inside a region
// say, keep the machine in the parallel state; the initial state when
// none fired), and the step's actions must come last, after the
// entries'. New runs before an observer can be set, so the rules are
// taken as fired when the state and the actions are the step's; it
// returns them.
func checkNew[Ac Value[A], Ev any, S, E, A fsmrt.Kind](t *testing.T, n *Node[Ev, A], rules []fsmrt.Rule[S, E, A], at S, acts *[]Ac) []int {
	t.Helper()
	if n == nil {
		return nil
	}
	for i := len(n.Rules) - 1; i >= 0; i-- {
		if to := rules[n.Rules[i]].To; to != 0 {
			assert.Equal(t, to, at, "the state New's eventless rules lead to")
			break
		}
	}
	if got := kinds(acts, 0); acts != nil && len(n.Actions) > 0 && assert.GreaterOrEqual(t, len(got), len(n.Actions), "New's actions") {
		assert.Equal(t, n.Actions, got[len(got)-len(n.Actions):], "the actions of New's eventless rules, after the entries'")
	}
	return n.Rules
}
