package fsm_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// regionDeferSpec defers Traffic in Quiet, a state of region Sound, which
// region Band takes in FM and leaves to On, which ignores it, in AM.
const regionDeferSpec = `version: 2
machine: Radio
package: radio
states:
  Off:
    initial: true
    ignore: [Tune, Mute, Traffic]
  On:
    parallel: true
    ignore: [Traffic]
    states:
      Sound:
        states:
          Loud: {initial: true}
          Quiet:
            defer: [Traffic]
      Band:
        states:
          FM: {initial: true}
          AM: {}
events:
  Power: {}
  Tune: {}
  Mute: {}
  Traffic: {}
actions:
  Announce: {}
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
    on: Traffic
    action: Announce
`

// TestRegionDefers checks what a state inside a region defers, and the
// ways the witness paths take on the deferred event: deferred where no
// region takes it (Quiet beside AM), taken by FM's transition (UML 2.5.1
// §14.2.3.9: a transition takes precedence over a deferral, and a step
// that takes one defers nothing), ignored by On where no region has a
// rule.
func TestRegionDefers(t *testing.T) {
	t.Parallel()
	sf, diags := spec.Parse("radio.yaml", []byte(regionDeferSpec))
	require.False(t, diags.HasErrors(), "%s", diags)
	m, diags := fsm.Build(sf, fsm.Env{})
	require.NotNil(t, m, "%s", diags)
	require.True(t, m.ConfigDefers())
	states, events := map[string]*fsm.State{}, map[string]*fsm.Event{}
	for _, s := range append(m.States, m.RegionLeaves()...) {
		states[s.Name] = s
	}
	for _, e := range m.Events {
		events[e.Name] = e
	}
	traffic := events["Traffic"]
	assert.True(t, m.Deferral.Defers(states["Quiet"], traffic))
	assert.False(t, m.Deferral.Defers(states["On"], traffic), "On ignores what its regions leave to it")
	assert.Equal(t, []*fsm.Event{traffic}, m.ConfigDeferred(states["On"]))
	assert.True(t, states["FM"].RegionTakes(traffic))
	assert.False(t, states["AM"].RegionTakes(traffic), "AM leaves it to On")
	assert.False(t, states["Quiet"].RegionTakes(traffic), "Quiet defers it")

	got := map[string]string{}
	for _, w := range m.Ways {
		if w.Event != traffic || w.Config == nil {
			continue
		}
		var cfg, rules []string
		for _, s := range w.Config {
			cfg = append(cfg, s.Name)
		}
		for _, r := range w.Rules {
			rules = append(rules, r.Label)
		}
		got[strings.Join(cfg, ",")] = strings.Join(rules, "; ")
	}
	assert.Equal(t, map[string]string{
		"Loud,FM":  "FM --Traffic--> (stays) / Announce",
		"Quiet,AM": "Quiet --Traffic--> deferred",
		"Loud,AM":  "On --Traffic--> ignored",
	}, got)
	for _, p := range m.Paths {
		for _, w := range p.Steps {
			for _, r := range w.Rules {
				if r.Kind == fsm.Defer {
					assert.Len(t, w.Rules, 1, "%s: a deferral is the step's only rule", p.Rule.Label)
				}
			}
		}
	}
}
