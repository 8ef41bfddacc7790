package fsm_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// fallbackSpec is a composite state C whose rule for E moves to B; A,
// inside it, has one guarded outcome for E, written where %OUTCOME%
// stands, and no else.
const fallbackSpec = `version: 2
machine: Flat
package: flat
states:
  C:
    initial: true
    states:
      A: {initial: true}
      B: {}
events: {E: {}}
guards: {g: {}}
transitions:
  - {from: C, on: E, to: B}
  - from: A
    on: E
    guards:
      - if: g
        %OUTCOME%
  - {from: B, on: E, to: A}
`

// TestGuardedRefusalFallsBack checks that a state whose one rule for an
// event ignores or rejects it under a guard, without else, falls back to
// the rule of the state around it when the guard fails, as a guarded
// transition does (it is a decision, not a plain refusal).
func TestGuardedRefusalFallsBack(t *testing.T) {
	t.Parallel()
	for _, outcome := range []string{"ignore: true", "reject: not now", "to: A"} {
		t.Run(outcome, func(t *testing.T) {
			t.Parallel()
			m, diags := built(t, "flat.yaml", strings.Replace(fallbackSpec, "%OUTCOME%", outcome, 1))
			require.Empty(t, diags, "no error, no warning")
			var a *fsm.State
			for _, s := range m.States {
				if s.Name == "A" {
					a = s
				}
			}
			require.NotNil(t, a)
			c := a.Cell(m.Events[0])
			require.NotNil(t, c)
			require.NotNil(t, c.Fallback, "when g fails, C's rule")
			assert.Equal(t, "C --E--> B", c.Fallback.Rules[0].Label)
		})
	}
}
