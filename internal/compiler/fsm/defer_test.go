package fsm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// precedenceSpec defers Print in a composite state, one of whose children
// takes it, and in a leaf whose composite state takes it.
const precedenceSpec = `version: 2
machine: Printer
package: printer
states:
  Warm:
    initial: true
    defer: [Print]
    states:
      Heating:
        initial: true
      Ready: {}
  Busy:
    states:
      Printing:
        initial: true
      Jammed:
        defer: [Print]
events:
  Print: {}
  Tick: {}
transitions:
  - from: Heating
    on: Tick
    to: Ready
  - from: Ready
    on: Print
    to: Printing
  - from: Ready
    on: Tick
    ignore: true
  - from: Busy
    on: Print
    action: Queue
  - from: Printing
    on: Tick
    to: Jammed
  - from: Jammed
    on: Tick
    to: Heating
actions:
  Queue: {}
`

// TestDeferPrecedence checks UML's precedence of deferrals: the innermost
// state with a rule for the event decides, so a transition of a state
// inside one that defers overrides the deferral, and a deferral of a
// state inside one with a transition overrides the transition.
func TestDeferPrecedence(t *testing.T) {
	t.Parallel()
	sf, diags := spec.Parse("printer.yaml", []byte(precedenceSpec))
	require.False(t, diags.HasErrors(), "%s", diags)
	m, diags := fsm.Build(sf, fsm.Env{})
	require.NotNil(t, m, "%s", diags)
	require.NotNil(t, m.Deferral)
	states, printEv := map[string]*fsm.State{}, m.Events[0]
	for _, s := range m.States {
		states[s.Name] = s
	}
	for _, tc := range []struct {
		state  string
		defers bool
	}{
		{"Heating", true},   // Warm's deferral
		{"Ready", false},    // its own transition overrides Warm's deferral
		{"Printing", false}, // Busy's transition
		{"Jammed", true},    // its own deferral overrides Busy's transition
	} {
		assert.Equal(t, tc.defers, m.Deferral.Defers(states[tc.state], printEv), tc.state)
	}
	assert.Equal(t, fsm.DefaultDeferLimit, m.Deferral.Limit)
	assert.Equal(t, []*fsm.Event{printEv}, m.Deferral.Events)
	var own []string
	for _, s := range append(append([]*fsm.State(nil), m.States...), m.Composites...) {
		for _, e := range m.OwnDeferrals(s) {
			own = append(own, s.Name+" "+e.Name)
		}
	}
	assert.ElementsMatch(t, []string{"Warm Print", "Jammed Print"}, own)
}
