package fsm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// nestOwnSpec nests Media in Run, with lists and rules of its own.
const nestOwnSpec = `version: 2
machine: Own
package: own
states:
  Off:
    initial: true
    ignore: [Mute, Show, Tap, Beep, Sync]
  Run:
    parallel: true
    states:
      Media:
        parallel: true
        ignore: [Mute]
        defer: [Sync]
        states:
          Audio:
            states:
              Silent: {initial: true}
              Playing: {}
          Video:
            states:
              Hidden: {initial: true}
              Shown: {}
      Net:
        states:
          Offline: {initial: true}
events: {Go: {}, Mute: {}, Show: {}, Tap: {}, Beep: {}, Sync: {}}
actions:
  Tapped: {}
guards:
  quiet: {}
transitions:
  - {from: Off, on: Go, to: Run}
  - {from: Run, on: Go, to: Off}
  - {from: Hidden, on: [Show, Sync], to: Shown}
  - {from: Shown, on: [Show, Mute], to: Hidden}
  - {from: Playing, on: Beep, to: Silent}
  - {from: Silent, on: Beep, to: Playing}
  - {from: Media, on: Tap, action: Tapped}
  - {from: Audio, on: Mute, guards: [{if: quiet, to: Playing}]}
`

// TestNestedOwnPlacement: a nested parallel state's list entry is held
// by the first of its regions whose own state does not name the event
// (a row of Audio's own takes Mute, after a guard: Video holds Media's Mute; Audio its Sync,
// which Video takes in Hidden), and its rule by the region whose states
// take the event, else by the first (Tap), under Media's name.
func TestNestedOwnPlacement(t *testing.T) {
	t.Parallel()
	sf, diags := spec.Parse("own.yaml", []byte(nestOwnSpec))
	require.False(t, diags.HasErrors(), diags.Error())
	m, diags := fsm.Build(sf, fsm.Env{})
	require.False(t, diags.HasErrors(), diags.Error())
	held := map[string]string{}
	for _, r := range m.RegionRules() {
		if r.Group != nil {
			assert.Equal(t, "Media", r.Group.Name, r.Label)
			held[r.Label] = r.From.Region.Root.Name
		}
	}
	assert.Equal(t, map[string]string{
		"Media --Mute--> ignored":         "Video",
		"Media --Sync--> deferred":        "Audio",
		"Media --Tap--> (stays) / Tapped": "Audio",
	}, held)
}
