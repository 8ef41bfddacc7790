package diff_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
)

// inOwnSpec holds On, a parallel state whose own rule for Save tests
// In(Playing), a state of its region Playback.
const inOwnSpec = `version: 2
machine: Player
package: player
output:
  go: .
states:
  Off:
    initial: true
    ignore: [Play, Pause, Save]
  On:
    parallel: true
    states:
      Playback:
        states:
          Stopped: {initial: true, ignore: [Pause]}
          Playing: {ignore: [Play]}
      Sound:
        states:
          Loud: {initial: true}
events: {Power: {}, Play: {}, Pause: {}, Save: {}}
actions: {Busy: {}}
transitions:
  - {from: Off, on: Power, to: On}
  - {from: On, on: Power, to: Off}
  - {from: Stopped, on: Play, to: Playing}
  - {from: Playing, on: Pause, to: Stopped}
  - from: On
    on: Save
    guards:
      - {if: In(Playing), action: Busy}
      - {else: true, to: Off}
`

// TestCompareInOwn checks how fsmgen diff classifies a change to the
// In(State) guard of a parallel state's own rule: what the machine does
// with Save then depends on another state of its region, in the parallel
// state and in each of the region's leaves, which leave Save to it.
func TestCompareInOwn(t *testing.T) {
	t.Parallel()
	other := strings.Replace(inOwnSpec, "In(Playing)", "In(Stopped)", 1)
	got := changes(diff.Compare(machine(t, "old.yaml", inOwnSpec), machine(t, "new.yaml", other)))
	now, was := "now [In(Stopped)] stays / Busy; [else] to Off", "was [In(Playing)] stays / Busy; [else] to Off"
	var wants []want
	for _, s := range []string{"On", "Stopped", "Playing", "Loud"} {
		wants = append(wants, want{subject: "rule " + s + " × Save", what: now + ", " + was, verdicts: []string{"behaviour=breaks"}})
	}
	assert.ElementsMatch(t, wants, got)
}
