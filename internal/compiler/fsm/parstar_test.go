package fsm_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// starSpec is a parallel state On, left on Stop, whose "*" list is
// %LIST%: region A takes Park in every state, Go in A1 only.
const starSpec = `version: 2
machine: Star
package: star
states:
  Off:
    initial: true
    ignore: [Go, Park, Stop]
  On:
    parallel: true
    %LIST%: "*"
    states:
      A:
        states:
          A1: {initial: true}
          A2: {}
      B:
        states:
          B1: {initial: true}
events: {Start: {}, Go: {}, Park: {}, Stop: {}}
transitions:
  - {from: Off, on: Start, to: On}
  - {from: On, on: Stop, to: Off}
  - {from: A1, on: Park, to: A2}
  - {from: A2, on: Park, to: A1}
  - {from: A1, on: Go, to: A2}
`

// TestParallelStarList checks that a parallel state's "*" list takes the
// events its regions leave to it in some configuration (Go, from A2, and
// Start), and no event a region takes in every state (Park), which it
// would never take: the checker reported that as a rule that can never
// fire, refusing the machine.
func TestParallelStarList(t *testing.T) {
	t.Parallel()
	for _, list := range []string{"ignore", "reject"} {
		t.Run(list, func(t *testing.T) {
			t.Parallel()
			m, diags := built(t, "star.yaml", strings.Replace(starSpec, "%LIST%", list, 1))
			require.Empty(t, diags)
			var on []string
			for _, r := range m.Rules {
				if r.From != nil && r.From.Name == "On" && r.Others {
					on = append(on, r.Event.Name)
				}
			}
			assert.ElementsMatch(t, []string{"Start", "Go"}, on)
		})
	}
}
