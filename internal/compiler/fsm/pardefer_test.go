package fsm_test

import (
	"strings"
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

// partDeferSpec defers Scan and Store in parallel state On, which region
// Band takes in FM only and region Sound in Quiet only: On holds each
// while the leaf that would take it is not active.
const partDeferSpec = `version: 2
machine: Radio
package: radio
states:
  Off:
    initial: true
    defer: [Tune, Scan]
    ignore: [Mute, Store]
  On:
    parallel: true
    defer: [Scan, Store]
    states:
      Sound:
        states:
          Loud: {initial: true}
          Quiet: {}
      Band:
        states:
          FM: {initial: true}
          AM: {}
events:
  Power: {}
  Tune: {}
  Mute: {}
  Scan: {}
  Store: {}
actions:
  Seek: {}
  Preset: {}
transitions:
  - from: Off
    on: Power
    to: On
  - from: On
    on: Power
    to: Off
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
  - from: FM
    on: Scan
    action: Seek
  - from: Quiet
    on: Store
    action: Preset
`

// TestParallelDefersPartly checks a parallel state that defers events a
// region takes in some of its states only: On defers them (they are in
// its deferrals and its configuration decides), and the witness paths
// take each by the region's rule where its leaf is active, by On's
// deferral elsewhere (UML 2.5.1 §14.2.3.9: a transition of the
// configuration takes precedence over a deferral).
func TestParallelDefersPartly(t *testing.T) {
	t.Parallel()
	sf, diags := spec.Parse("radio.yaml", []byte(partDeferSpec))
	require.False(t, diags.HasErrors(), "%s", diags)
	m, diags := fsm.Build(sf, fsm.Env{})
	require.NotNil(t, m, "%s", diags)
	require.False(t, diags.HasErrors(), "%s", diags)
	states, events := map[string]*fsm.State{}, map[string]*fsm.Event{}
	for _, s := range append(m.States, m.RegionLeaves()...) {
		states[s.Name] = s
	}
	for _, e := range m.Events {
		events[e.Name] = e
	}
	on, scan, store := states["On"], events["Scan"], events["Store"]
	assert.True(t, m.ConfigDefers())
	assert.True(t, m.Deferral.Defers(on, scan))
	assert.True(t, m.Deferral.Defers(on, store))
	assert.Equal(t, []*fsm.Event{scan, store}, m.ConfigDeferred(on))
	for _, tc := range []struct {
		leaf  string
		event *fsm.Event
		takes bool
	}{
		{"FM", scan, true},
		{"AM", scan, false},
		{"Loud", scan, false},
		{"Quiet", store, true},
		{"Loud", store, false},
	} {
		assert.Equal(t, tc.takes, states[tc.leaf].RegionTakes(tc.event), "%s × %s", tc.leaf, tc.event.Name)
	}

	got := map[string]string{}
	for _, w := range m.Ways {
		if (w.Event != scan && w.Event != store) || w.Config == nil {
			continue
		}
		var cfg, rules []string
		for _, s := range w.Config {
			cfg = append(cfg, s.Name)
		}
		for _, r := range w.Rules {
			rules = append(rules, r.Label)
		}
		got[w.Event.Name+" in "+strings.Join(cfg, ",")] = strings.Join(rules, "; ")
	}
	assert.Equal(t, map[string]string{
		"Scan in Loud,FM":   "FM --Scan--> (stays) / Seek",
		"Scan in Loud,AM":   "On --Scan--> deferred",
		"Store in Loud,FM":  "On --Store--> deferred",
		"Store in Quiet,FM": "Quiet --Store--> (stays) / Preset",
	}, got)
}
