package fsm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// twoParallelSpec has two parallel states; the second's regions (whose
// indexes come after the first's) run a timer.
const twoParallelSpec = `version: 2
machine: Two
package: two
states:
  A:
    initial: true
    parallel: true
    ignore: "*"
    states:
      A1:
        states:
          A1x: {initial: true}
      A2:
        states:
          A2x: {initial: true}
  B:
    parallel: true
    ignore: "*"
    states:
      B1:
        states:
          B1x:
            initial: true
            after: {delay: 5s, to: B1y}
          B1y: {}
      B2:
        states:
          B2x: {initial: true}
          B2y: {}
events:
  Go: {}
  Turn: {}
transitions:
  - {from: A, on: Go, to: B}
  - {from: B, on: Go, to: A}
  - {from: B2x, on: Turn, to: B2y}
`

// TestTimedConfigsLaterParallel: the configurations in which the second
// parallel state is saved with its timers running hold its own regions'
// leaves (it panicked on the first parallel state's regions, nil there).
func TestTimedConfigsLaterParallel(t *testing.T) {
	t.Parallel()
	sf, diags := spec.Parse("two.yaml", []byte(twoParallelSpec))
	require.False(t, diags.HasErrors(), diags.Error())
	m, diags := fsm.Build(sf, fsm.Env{})
	require.False(t, diags.HasErrors(), diags.Error())
	var b *fsm.State
	for _, s := range m.States {
		if s.Name == "B" {
			b = s
		}
	}
	require.NotNil(t, b)
	cfgs := b.TimedConfigs()
	require.Len(t, cfgs, 1)
	var names []string
	for _, reg := range b.Regions {
		names = append(names, cfgs[0][reg.Index].Name)
	}
	assert.Equal(t, []string{"B1y", "B2y"}, names)
}
