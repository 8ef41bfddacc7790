package fsm_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// leaveRowSpec is a parallel state On whose region Left has a row from
// two states, A and B, on Go; its guards are inserted where %GUARDS%
// stands.
const leaveRowSpec = `version: 2
machine: Leave
package: leave
states:
  Off:
    initial: true
    ignore: [Go, Tick]
  On:
    parallel: true
    ignore: [Tick]
    states:
      Left:
        states:
          A: {initial: true}
          B: {}
      Right:
        states:
          C: {initial: true}
events: {Go: {}, Start: {}, Tick: {}}
guards: {hot: {}}
transitions:
  - {from: Off, on: Start, to: On}
  - {from: On, on: Start, to: Off}
  - {from: A, on: Tick, to: B}
  - from: [A, B]
    on: Go
    guards:
      - if: hot
        to: Off
%GUARDS%
`

// TestLeaveRowOfTwoStates builds a guarded row from two states of a
// region that leaves the parallel state by every branch, and one that
// stays in the region by its else branch: each source gets the parallel
// state's rules for its branches that leave (Rule.Source), in order, and
// for the second, each source's region chain holds a branch that leaves
// (Rule.Leaves) pointing at its own source's rule, before the branch that
// stays.
func TestLeaveRowOfTwoStates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, guards string
		on           []string // the labels of On's rules for Go
		chain        []string // A's region chain for Go: the labels, "leaves" marking a branch that leaves
	}{
		{
			name:   "every branch leaves",
			guards: "      - else: true\n        to: Off",
			on:     []string{"A --Go [hot]--> Off", "A --Go [else]--> Off", "B --Go [hot]--> Off", "B --Go [else]--> Off"},
		},
		{
			name:   "the else branch stays",
			guards: "      - else: true\n        to: A",
			on:     []string{"A --Go [hot]--> Off", "B --Go [hot]--> Off"},
			chain:  []string{"leaves A --Go [hot]--> Off", "A --Go [else]--> A"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sf, diags := spec.Parse("leave.yaml", []byte(strings.Replace(leaveRowSpec, "%GUARDS%", tc.guards, 1)))
			require.False(t, diags.HasErrors(), "%s", diags)
			m, diags := fsm.Build(sf, fsm.Env{})
			require.NotNil(t, m, "%s", diags)
			require.False(t, diags.HasErrors(), "%s", diags)
			var on []string
			for _, r := range m.Rules {
				if r.Event != nil && r.Event.Name == "Go" && r.Source != nil {
					on = append(on, r.Label)
				}
			}
			assert.Equal(t, tc.on, on)
			var chain []string
			for _, reg := range m.Regions {
				for _, s := range reg.Leaves {
					if s.Name != "A" {
						continue
					}
					for _, c := range s.Handles {
						if c.Event.Name != "Go" {
							continue
						}
						for _, r := range c.Rules {
							if r.Leaves != nil {
								assert.Equal(t, "A", r.Leaves.Source.Name, "the branch takes its own source's rule")
								chain = append(chain, "leaves "+r.Leaves.Label)
								continue
							}
							chain = append(chain, r.Label)
						}
					}
				}
			}
			assert.Equal(t, tc.chain, chain)
		})
	}
}
