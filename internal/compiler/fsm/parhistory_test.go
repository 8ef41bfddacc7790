package fsm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// radioSpec is a parallel state whose region Radio has a composite state
// Tuned with a deep history that no rule of the region leaves: only
// leaving On remembers a leaf of it. Tape's Stopped has a timer into
// Running's shallow history.
const radioSpec = `version: 2
machine: Deck
package: deck
states:
  Idle:
    initial: true
    ignore: [Tune, Flip, Play, Stop]
  On:
    parallel: true
    ignore: [Tune, Flip, Play, Stop]
    states:
      Tape:
        states:
          Stopped:
            initial: true
            after: {delay: 1s, to: Running.history}
          Running:
            history: shallow
            states:
              Slow:
                initial: true
              Fast: {}
      Radio:
        states:
          Silent:
            initial: true
          Tuned:
            history: deep
            states:
              AM:
                initial: true
              FM: {}
events:
  Power: {}
  Tune: {}
  Flip: {}
  Play: {}
  Stop: {}
transitions:
  - {from: Idle, on: Power, to: On}
  - {from: On, on: Power, to: Idle}
  - {from: Silent, on: Tune, to: Tuned.history}
  - {from: AM, on: Flip, to: FM}
  - {from: Slow, on: Play, to: Fast}
  - {from: Running, on: Stop, to: Stopped}
`

// TestRegionHistory checks how histories inside regions are resolved: they
// join the machine's, after its own, each in its region; a timer's rule
// into one has variants the timer fires too; and the witness path of a
// variant that only leaving the parallel state makes possible leaves it
// and enters it again.
func TestRegionHistory(t *testing.T) {
	t.Parallel()
	sf, diags := spec.Parse("deck.yaml", []byte(radioSpec))
	require.False(t, diags.HasErrors(), "%s", diags)
	m, diags := fsm.Build(sf, fsm.Env{})
	require.NotNil(t, m, "%s", diags)
	var names []string
	for i, s := range m.Histories {
		names = append(names, s.Name)
		assert.Equal(t, i, s.Hist, s.Name)
		require.NotNil(t, s.Region, s.Name)
	}
	assert.Equal(t, []string{"Running", "Tuned"}, names)
	paths := map[string][]string{}
	for _, p := range m.Paths {
		var steps []string
		for _, w := range p.Steps {
			steps = append(steps, w.Event.Name)
		}
		paths[p.Rule.Label] = steps
	}
	for _, r := range m.AllRules() {
		if r.Resume != nil && r.History.Name == "Running" {
			assert.NotNil(t, r.Timer, "%s: the timer fires the variant", r.Label)
		}
	}
	assert.Equal(t, []string{"Power", "Tune", "Flip", "Power", "Power", "Tune"}, paths["Silent --Tune--> Tuned.history (was in FM)"])
	assert.Equal(t, []string{"Power", "TimerFired", "Play", "Stop", "TimerFired"}, paths["Stopped --after 1s--> Running.history (was in Fast)"])
}
