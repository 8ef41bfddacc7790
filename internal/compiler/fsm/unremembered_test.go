package fsm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shelfSpec has a history no rule enters: Shelf's own done transition
// leaves it from End all the same, so the history remembers End, and Save
// writes it.
const shelfSpec = `version: 2
machine: Shelf
package: shelf
states:
  Idle:
    initial: true
    ignore: [Fin]
  Shelf:
    history: shallow
    done: {to: Idle}
    ignore: [Go]
    states:
      Work: {initial: true}
      End: {final: true}
events: {Go: {}, Fin: {}}
transitions:
  - {from: Idle, on: Go, to: Shelf}
  - {from: Work, on: Fin, to: End}
`

// TestUnremembered checks which leaves a history never remembers, which
// Load refuses in a saved history: those the machine never rests in and
// never leaves the history's state from, whether or not a rule enters
// the history (random chart 83017: Load refused the final state that
// Save wrote for a history no rule entered).
func TestUnremembered(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src, state string
		want             []string
	}{
		{"own done, no rule into the history", shelfSpec, "Shelf", nil},
		{"own done, a rule into the history", jobSpec, "Batch", nil},
		{"inner done leaves the state", jobSpec, "Session", nil},
		{"inner done stays inside", jobSpec, "Desk", []string{"Sent"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, _ := built(t, "spec.yaml", tc.src)
			i := -1
			for j, s := range m.Histories {
				if s.Name == tc.state {
					i = j
				}
			}
			require.GreaterOrEqual(t, i, 0, "%s has a history", tc.state)
			var got []string
			for _, l := range m.Unremembered(m.Histories[i]) {
				got = append(got, l.Name)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
