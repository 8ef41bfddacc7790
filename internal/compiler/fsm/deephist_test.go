package fsm_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// rackSpec has a deep history over a parallel state (Live's, over Mix)
// and a deep history of a parallel state (Rack's). Rack's Cut leaves and
// resumes it in one step, and reaches Rack only once region Left is in L2.
const rackSpec = `version: 2
machine: Console
package: console
actions:
  L2In: {}
  RackIn: {}
  LoudIn: {}
states:
  Off:
    initial: true
    ignore: [Next, Cut]
  Live:
    history: deep
    ignore: [Cut]
    states:
      Warmup:
        initial: true
        ignore: [Next]
      Mix:
        parallel: true
        states:
          Audio:
            states:
              Mute: {initial: true}
              Loud: {entry: LoudIn}
          Video:
            states:
              Dark: {initial: true}
  Rack:
    parallel: true
    history: deep
    entry: RackIn
    ignore: [Next]
    states:
      Left:
        states:
          L1: {initial: true}
          L2: {entry: L2In}
      Right:
        states:
          R1: {initial: true}
events:
  Power: {}
  Swap: {}
  Next: {}
  Cut: {}
transitions:
  - {from: Off, on: Power, to: Live.history}
  - {from: Off, on: Swap, to: Rack.history}
  - {from: Live, on: Power, to: Off}
  - {from: Warmup, on: Swap, to: Mix}
  - {from: Live, on: Swap, to: Rack}
  - {from: Rack, on: Power, to: Off}
  - {from: Rack, on: Swap, to: Live.history}
  - {from: Rack, on: Cut, to: Rack.history}
  - {from: L1, on: Cut, to: L2}
  - {from: Mute, on: Next, to: Loud}
  - {from: Loud, on: Next, to: Mute}
`

// TestDeepHistoryOverParallel checks how deep histories remember the
// leaves of regions: one memory per region of each parallel state a deep
// history holds, after the histories; a rule into the history enters the
// parallel state with its regions resumed, which its witness path and the
// generated tests' ways follow.
func TestDeepHistoryOverParallel(t *testing.T) {
	t.Parallel()
	sf, diags := spec.Parse("console.yaml", []byte(rackSpec))
	require.False(t, diags.HasErrors(), "%s", diags)
	m, diags := fsm.Build(sf, fsm.Env{})
	require.NotNil(t, m, "%s", diags)
	var mems []string
	for i, mem := range m.Memories {
		assert.Equal(t, len(m.Histories)+i, mem.Slot)
		mems = append(mems, mem.History.Name+"/"+mem.Region.Root.Name)
	}
	assert.Equal(t, []string{"Live/Audio", "Live/Video", "Rack/Left", "Rack/Right"}, mems)
	assert.Equal(t, len(m.Histories)+4, m.HistSlots())

	actions := func(tr fsm.Trace) []string {
		var out []string
		for _, a := range tr.Actions {
			out = append(out, a.Name)
		}
		return out
	}
	var cut *fsm.Path
	for _, p := range m.Paths {
		if p.Rule.Label == "Rack --Cut--> Rack.history" {
			cut = p
		}
	}
	require.NotNil(t, cut)
	last := cut.Steps[len(cut.Steps)-1]
	require.NotNil(t, last.Resumed, "the regions resume what Rack remembers")
	var resumed []string
	for _, s := range last.Resumed {
		if s != nil && s.Region.Parallel.Name == "Rack" {
			resumed = append(resumed, s.Name)
		}
	}
	assert.Equal(t, []string{"L2", "R1"}, resumed)
	for _, w := range m.Ways {
		if len(w.Rules) > 0 && w.Rules[0].Label == "Rack --Cut--> Rack.history" {
			assert.Equal(t, []string{"RackIn", "L2In"}, actions(w.Trace), "the generated test's way enters L2 again")
		}
	}

	// The paths follow Live's memory of Mix's regions: Loud, resumed
	// after Live is left from it, is entered again.
	for _, p := range m.Paths {
		if p.Rule.Label != "Rack --Swap--> Live.history (was in Mix)" {
			continue
		}
		w := p.Steps[len(p.Steps)-1]
		require.NotNil(t, w.Resumed)
		assert.NotContains(t, actions(w.Trace), "RackIn")
	}
}

// TestDeepHistoryOverNestedParallel checks a deep history over parallel
// states that nest parallel states as regions (chart vault): it keeps a
// memory of every region, the nested ones' too, and resuming it enters
// each nested parallel state before its first region, whatever leaf that
// region resumes (SCXML 1.0 §3.13, document order), in the witness
// paths' traces as in the generated code.
func TestDeepHistoryOverNestedParallel(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../export/testdata/charts/vault/vault.yaml")
	require.NoError(t, err)
	m, _ := built(t, "vault.yaml", string(src))
	var mems []string
	for _, mem := range m.Memories {
		mems = append(mems, mem.History.Name+"/"+mem.Region.Root.Name)
	}
	assert.Equal(t, []string{"Live/Audio", "Live/Video", "Live/Net", "Rack/L", "Rack/M", "Rack/Right"}, mems)
	actions := func(tr fsm.Trace) []string {
		var out []string
		for _, a := range tr.Actions {
			out = append(out, a.Name)
		}
		return out
	}
	traces := map[string][]string{}
	for i, p := range m.Paths {
		w := m.Witnesses[m.PathEnds[i]]
		traces[p.Rule.Label] = actions(w.Trace)
	}
	assert.Equal(t, []string{"LiveIn", "OnIn", "MediaIn"}, traces["Off --Power--> Live.history (was in On)"], "Media is entered before Audio, though nothing was remembered of it")
	for _, r := range m.Regions {
		if r.Root.Name == "L" {
			for _, l := range r.Leaves {
				require.NotEmpty(t, l.Enter)
				assert.Equal(t, "Left", l.Enter[0].State.Name, "resuming %s enters Left first", l.Name)
			}
		}
	}
}
