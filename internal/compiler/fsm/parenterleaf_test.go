package fsm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// intoSpec is a parallel state On whose region Left holds parallel state
// Den (regions X and Y), and whose region Right starts in parallel state
// Hole (region H); rules from Off enter On down to Den, to X2 inside Den,
// and to A.
const intoSpec = `version: 2
machine: Into
package: into
states:
  Off:
    initial: true
  On:
    parallel: true
    ignore: [Dig, Skip, Drop]
    states:
      Left:
        states:
          A: {initial: true}
          Den:
            parallel: true
            states:
              X:
                states:
                  X1: {initial: true}
                  X2: {}
              Y:
                states:
                  Y1: {initial: true}
      Right:
        states:
          Hole:
            initial: true
            parallel: true
            states:
              H:
                states:
                  H1: {initial: true}
              K:
                states:
                  K1: {initial: true}
events: {Dig: {}, Skip: {}, Drop: {}, Back: {}}
transitions:
  - {from: Off, on: Dig, to: Den}
  - {from: Off, on: Skip, to: X2}
  - {from: Off, on: Drop, to: A}
  - {from: On, on: Back, to: Off}
  - {from: Off, on: Back, to: On}
  - {from: A, on: Dig, to: Den}
  - {from: X1, on: Skip, to: X2}
`

// TestIntoLeaf checks the leaf each region is entered in by a rule from
// outside On into a state inside its regions (Run.IntoLeaf): the
// target's region down to it, the region around a parallel state on the
// way down to that state, and nil (the initial leaf) for the others.
func TestIntoLeaf(t *testing.T) {
	t.Parallel()
	m, diags := built(t, "into.yaml", intoSpec)
	require.False(t, diags.HasErrors(), "%s", diags)
	for _, tc := range []struct {
		event string
		want  map[string]string // region → leaf; the others nil
	}{
		{"Dig", map[string]string{"Left": "Den"}},
		{"Skip", map[string]string{"Left": "Den", "X": "X2"}},
		{"Drop", map[string]string{"Left": "A"}},
	} {
		t.Run(tc.event, func(t *testing.T) {
			t.Parallel()
			got := map[string]string{}
			found := false
			for _, r := range m.Rules {
				if r.From == nil || r.From.Name != "Off" || r.Event == nil || r.Event.Name != tc.event {
					continue
				}
				for _, run := range r.Entries {
					if run.Into == nil {
						continue
					}
					found = true
					for _, reg := range m.Regions {
						if l := run.IntoLeaf(reg); l != nil {
							got[reg.Root.Name] = l.Name
						}
					}
				}
			}
			require.True(t, found, "a rule from Off on %s that enters a state inside On's regions", tc.event)
			assert.Equal(t, tc.want, got)
		})
	}
}
