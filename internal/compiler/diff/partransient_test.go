package diff_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
)

// fanSpec is a parallel Active whose region Sound's Loud is an ordinary
// state (%LOUD% and %ROWS% empty) or a transient state.
const fanSpec = `version: 2
machine: Fan
package: fan
states:
  Idle:
    initial: true
    ignore: [Eject, Mute, Play]
  Active:
    parallel: true
    ignore: [Insert, Play]
    states:
      Drive:
        states:
          Spinning:
            initial: true
      Sound:
        states:
          Quiet:
            initial: true
          Loud: {%LOUD%}
events:
  Insert: {}
  Eject: {}
  Mute: {}
  Play: {}
transitions:
  - from: Idle
    on: Insert
    to: Active
  - from: Active
    on: Eject
    to: Idle
  - from: Quiet
    on: Mute
    to: Loud
%ROWS%`

// TestCompareRegionTransient checks how fsmgen diff classifies a state
// of a region made transient: a machine saved with the region in it no
// longer loads, and its choice is compared as a rule.
func TestCompareRegionTransient(t *testing.T) {
	t.Parallel()
	resting := strings.NewReplacer("%LOUD%", "", "%ROWS%", "  - from: Loud\n    on: [Play, Mute]\n    to: Quiet\n").Replace(fanSpec)
	transient := strings.NewReplacer("%LOUD%", "transient: true", "%ROWS%", "  - from: Loud\n    to: Quiet\n").Replace(fanSpec)
	rep := diff.Compare(machine(t, "old.yaml", resting), machine(t, "new.yaml", transient))
	got := changes(rep)
	assert.Contains(t, got, want{subject: "state Loud", what: "made transient", verdicts: []string{"saved_states=breaks"}}, fmt.Sprint(got))
	assert.Positive(t, rep.Breaks(), "breaking changes")

	back := diff.Compare(machine(t, "old.yaml", transient), machine(t, "new.yaml", resting))
	for _, c := range back.Changes {
		assert.NotEqual(t, "made transient", c.What, "a transient state made an ordinary one loads every machine saved before")
	}
}

// TestCompareRegionWaits checks how fsmgen diff classifies a state of a
// region that now waits on eventless rules: every machine saved before
// loads (the region rests there still), its eventless rules are compared
// as a rule; made transient from waiting, it no longer loads.
func TestCompareRegionWaits(t *testing.T) {
	t.Parallel()
	resting := strings.NewReplacer("%LOUD%", "", "%ROWS%", "  - from: Loud\n    on: [Play, Mute]\n    to: Quiet\n").Replace(fanSpec)
	waits := strings.NewReplacer("%LOUD%", "ignore: [Play, Mute]", "%ROWS%", "  - from: Loud\n    guards:\n      - if: calm\n        to: Quiet\n").Replace(fanSpec) + "guards:\n  calm: {}\n"
	transient := strings.NewReplacer("%LOUD%", "transient: true", "%ROWS%", "  - from: Loud\n    to: Quiet\n").Replace(fanSpec)
	got := changes(diff.Compare(machine(t, "old.yaml", resting), machine(t, "new.yaml", waits)))
	for _, c := range got {
		assert.NotEqual(t, "made transient", c.what, "a state that waits rests: every machine saved in it loads")
	}
	assert.True(t, slices.ContainsFunc(got, func(c want) bool { return c.subject == "rule Loud (its eventless rules)" }), "the eventless rules compared as a rule: %v", got)
	got = changes(diff.Compare(machine(t, "old.yaml", waits), machine(t, "new.yaml", transient)))
	assert.Contains(t, got, want{subject: "state Loud", what: "made transient", verdicts: []string{"saved_states=breaks"}}, fmt.Sprint(got))
}
