package fsm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// parDeferSpec defers Tune and Eject in a composite state around a
// parallel state, one of whose regions takes Tune in every state.
const parDeferSpec = `version: 2
machine: Radio
package: radio
states:
  Home:
    initial: true
    defer: [Tune, Eject]
    states:
      Off:
        initial: true
      On:
        parallel: true
        states:
          Sound:
            states:
              Loud: {initial: true}
              Quiet: {}
          Band:
            states:
              FM: {initial: true}
              AM: {}
  Away:
    ignore: [Tune, Power, Mute]
events:
  Power: {}
  Tune: {}
  Mute: {}
  Eject: {}
  Leave: {}
transitions:
  - from: Off
    on: Power
    to: On
  - from: On
    on: Power
    to: Off
  - from: Off
    on: Mute
    ignore: true
  - from: Loud
    on: Mute
    to: Quiet
  - from: Quiet
    on: Mute
    to: Loud
  - from: FM
    on: Tune
    to: AM
  - from: AM
    on: Tune
    to: FM
  - from: Home
    on: Leave
    to: Away
  - from: Away
    on: Leave
    to: Home
  - from: Away
    on: Eject
    action: EjectDisc
actions:
  EjectDisc: {}
`

// TestParallelDefers checks which events a parallel state defers: those
// its regions leave to it, by a deferral of a composite state around it;
// not one a region takes in every state (UML: a transition the event
// enables takes precedence over a deferral).
func TestParallelDefers(t *testing.T) {
	t.Parallel()
	sf, diags := spec.Parse("radio.yaml", []byte(parDeferSpec))
	require.False(t, diags.HasErrors(), "%s", diags)
	m, diags := fsm.Build(sf, fsm.Env{})
	require.NotNil(t, m, "%s", diags)
	require.NotNil(t, m.Deferral)
	states, events := map[string]*fsm.State{}, map[string]*fsm.Event{}
	for _, s := range m.States {
		states[s.Name] = s
	}
	for _, e := range m.Events {
		events[e.Name] = e
	}
	for _, tc := range []struct {
		state, event string
		defers       bool
	}{
		{"Off", "Tune", true},
		{"Off", "Eject", true},
		{"On", "Tune", false}, // region Band takes it in every state
		{"On", "Eject", true}, // no region has a rule for it
		{"On", "Mute", false},
		{"Away", "Eject", false},
	} {
		assert.Equal(t, tc.defers, m.Deferral.Defers(states[tc.state], events[tc.event]), "%s × %s", tc.state, tc.event)
	}
}
