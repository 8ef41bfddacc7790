package diff_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
)

// playerSpec is a player switched on into a parallel state of two regions
// (the cases add, remove and change them).
const playerSpec = `version: 2
machine: Player
package: player
output:
  go: .
states:
  Off:
    initial: true
    ignore: [Play, Mute]
  On:
    parallel: true
    states:
      Playback:
        states:
          Stopped:
            initial: true
          Playing: {}
      Volume:
        states:
          Normal:
            initial: true
          Muted: {}
events:
  Power: {}
  Play: {}
  Mute: {}
transitions:
  - from: Off
    on: Power
    to: On
  - from: On
    on: Power
    to: Off
  - from: Stopped
    on: Play
    to: Playing
  - from: Playing
    on: Play
    to: Stopped
  - from: Normal
    on: Mute
    to: Muted
  - from: Muted
    on: Mute
    to: Normal
`

// TestCompareParallel checks how fsmgen diff classifies a region added to
// a parallel state or removed from it, a state of a region removed, and a
// composite state made parallel: each breaks the machines saved in it; a
// region or a state of one renamed with renamed_from breaks none.
func TestCompareParallel(t *testing.T) {
	t.Parallel()
	oneRegion := strings.NewReplacer(
		"      Volume:\n        states:\n          Normal:\n            initial: true\n          Muted: {}\n", "",
		"  - from: Normal\n    on: Mute\n    to: Muted\n  - from: Muted\n    on: Mute\n    to: Normal\n", "",
		"    parallel: true\n", "    ignore: [Mute]\n",
		"      Playback:\n", "      Playback:\n        initial: true\n",
	).Replace(playerSpec)
	twoRegions := strings.NewReplacer(
		"      Volume:\n        states:\n          Normal:\n            initial: true\n          Muted: {}\n",
		"      Volume:\n        states:\n          Normal:\n            initial: true\n          Muted: {}\n      Network:\n        states:\n          Offline:\n            initial: true\n          Online: {}\n",
		"  Mute: {}\n", "  Mute: {}\n  Connect: {}\n",
		"    ignore: [Play, Mute]\n", "    ignore: [Play, Mute, Connect]\n",
		"  - from: Muted\n    on: Mute\n    to: Normal\n", "  - from: Muted\n    on: Mute\n    to: Normal\n  - from: Offline\n    on: Connect\n    to: Online\n  - from: Online\n    on: Connect\n    to: Offline\n",
	).Replace(playerSpec)
	renamed := strings.NewReplacer(
		"      Volume:\n", "      Sound:\n        renamed_from: [Volume]\n",
		"          Muted: {}\n", "          Silent: {renamed_from: [Muted]}\n",
		"    to: Muted\n", "    to: Silent\n",
		"  - from: Muted\n", "  - from: Silent\n",
	).Replace(playerSpec)
	noMuted := strings.NewReplacer(
		"          Muted: {}\n", "",
		"  - from: Normal\n    on: Mute\n    to: Muted\n  - from: Muted\n    on: Mute\n    to: Normal\n", "  - from: Normal\n    on: Mute\n    to: Normal\n",
	).Replace(playerSpec)
	timed := strings.Replace(playerSpec, "          Playing: {}\n", "          Playing:\n            after:\n              delay: 10m\n              to: Stopped\n", 1)
	retimed := strings.Replace(timed, "delay: 10m", "delay: 5m", 1)
	retargeted := strings.Replace(playerSpec, "  - from: Playing\n    on: Play\n    to: Stopped\n", "  - from: Playing\n    on: Play\n    to: Playing\n", 1)
	leaves := playerSpec + "  - from: Playing\n    on: Power\n    to: On\n"
	mixed := strings.Replace(strings.Replace(timed, "              delay: 10m\n              to: Stopped\n", "              delay: 10m\n              guards:\n                - if: hot\n                  to: Off\n                - else: true\n                  to: Stopped\n", 1), "events:\n", "guards:\n  hot: {}\nevents:\n", 1)
	guarded := strings.Replace(playerSpec, "events:\n", "guards:\n  hot: {}\nevents:\n", 1) + "  - from: Playing\n    on: Power\n    guards:\n      - if: hot\n        to: On\n"
	mixedRow := strings.Replace(strings.Replace(playerSpec, "events:\n", "guards:\n  hot: {}\nevents:\n", 1), "  - from: Playing\n    on: Play\n    to: Stopped\n", "  - from: Playing\n    on: Play\n    guards:\n      - if: hot\n        to: Off\n      - else: true\n        to: Stopped\n", 1)
	deep := strings.NewReplacer(
		"    parallel: true\n", "    parallel: true\n    history: deep\n",
		"  - from: Off\n    on: Power\n    to: On\n", "  - from: Off\n    on: Power\n    to: On.history\n",
	)
	tests := []struct {
		name     string
		old, new string
		breaks   int
		want     []want
	}{
		{
			name: "a region's rule changed", old: playerSpec, new: retargeted, breaks: 1,
			want: []want{
				{subject: "rule Playing × Play", what: "now to Playing, was to Stopped", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			// The rule of Playing leaves On, written as On's in the
			// generated code: only Playing's pair changes.
			name: "a region's state gained a rule that leaves the parallel state", old: playerSpec, new: leaves, breaks: 1,
			want: []want{
				{subject: "rule Playing × Power", what: "now to On, was to Off", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			// Its guard may fail: On's own rule follows.
			name: "a region's state gained a guarded rule that leaves the parallel state", old: playerSpec, new: guarded, breaks: 2,
			want: []want{
				{subject: "guard hot", what: "added", verdicts: []string{"code=breaks"}},
				{subject: "rule Playing × Power", what: "now [hot] to On; to Off, was to Off", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			// One branch leaves On, the other stays in Playback.
			name: "a region's timer leaves the parallel state by one branch", old: timed, new: mixed, breaks: 2,
			want: []want{
				{subject: "guard hot", what: "added", verdicts: []string{"code=breaks"}},
				{subject: "state Playing", what: "timer changed: fires after 10m: [hot] to Off; [else] to Stopped, was fires after 10m: to Stopped", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			// One branch leaves On, the other stays in Playback: one
			// row of Playing, its branches in order.
			name: "a region's row leaves the parallel state by one branch", old: playerSpec, new: mixedRow, breaks: 2,
			want: []want{
				{subject: "guard hot", what: "added", verdicts: []string{"code=breaks"}},
				{subject: "rule Playing × Play", what: "now [hot] to Off; [else] to Stopped, was to Stopped", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name: "a region's state gained a timer", old: playerSpec, new: timed, breaks: 4,
			want: []want{
				{subject: "state Playing", what: "gained the timer of Playing", verdicts: []string{"saved_states=breaks"}},
				{subject: "state Playing", what: "timer changed: fires after 10m: to Stopped, was nothing", verdicts: []string{"behaviour=breaks"}},
				{subject: "event TimerFired", what: "added"},
				{subject: "action StartTimer", what: "added", verdicts: []string{"code=breaks"}},
				{subject: "action CancelTimer", what: "added", verdicts: []string{"code=breaks"}},
			},
		},
		{
			name: "a region's state lost its timer", old: timed, new: playerSpec, breaks: 5,
			want: []want{
				{subject: "state Playing", what: "lost the timer of Playing", verdicts: []string{"saved_states=breaks"}},
				{subject: "state Playing", what: "timer changed: nothing, was fires after 10m: to Stopped", verdicts: []string{"behaviour=breaks"}},
				{subject: "event TimerFired", what: "removed", verdicts: []string{"event_log=breaks"}},
				{subject: "action StartTimer", what: "removed", verdicts: []string{"event_log=breaks"}},
				{subject: "action CancelTimer", what: "removed", verdicts: []string{"event_log=breaks"}},
			},
		},
		{
			name: "a region's timer retimed", old: timed, new: retimed, breaks: 1,
			want: []want{
				{subject: "state Playing", what: "timer changed: fires after 5m: to Stopped, was fires after 10m: to Stopped", verdicts: []string{"saved_states=review", "behaviour=breaks"}},
			},
		},
		{
			name: "a region added", old: playerSpec, new: twoRegions, breaks: 1,
			want: []want{
				{subject: "state On", what: "gained region Network", verdicts: []string{"saved_states=breaks"}},
				{subject: "event Connect", what: "added"},
			},
		},
		{
			// A machine saved in Off remembers On's regions, but not the
			// new one, which the history then resumes in its initial state.
			name: "a region added under a deep history", old: deep.Replace(playerSpec), new: deep.Replace(twoRegions), breaks: 1,
			want: []want{
				{subject: "state On", what: "gained region Network", verdicts: []string{"saved_states=breaks", "behaviour=review"}},
				{subject: "event Connect", what: "added"},
			},
		},
		{
			name: "a region removed", old: twoRegions, new: playerSpec, breaks: 2,
			want: []want{
				{subject: "state On", what: "lost region Network", verdicts: []string{"saved_states=breaks"}},
				{subject: "event Connect", what: "removed", verdicts: []string{"event_log=breaks"}},
			},
		},
		{
			name: "a state of a region removed", old: playerSpec, new: noMuted, breaks: 2,
			want: []want{
				{subject: "state Muted", what: "removed from region Volume of On", verdicts: []string{"saved_states=breaks"}},
				{subject: "rule Normal × Mute", what: "now to Normal, was to Muted", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			// renamed_from inside regions: a saved machine names them by
			// their old names, and loads (the rule moves with them).
			name: "a state of a region and a region renamed", old: playerSpec, new: renamed,
			want: []want{
				{subject: "state Sound", what: "renamed from Volume", verdicts: []string{"code=review"}},
				{subject: "state Silent", what: "renamed from Muted", verdicts: []string{"code=review"}},
			},
		},
		{
			name: "a composite state made parallel", old: oneRegion, new: playerSpec, breaks: 6,
			want: []want{
				{subject: "state On", what: "made parallel", verdicts: []string{"saved_states=breaks", "behaviour=breaks"}},
				{subject: "state Stopped", what: "removed", verdicts: []string{"saved_states=breaks"}},
				{subject: "state Playing", what: "removed", verdicts: []string{"saved_states=breaks"}},
				{subject: "state Playback", what: "removed"},
				// On's rule was a composite state's, now a parallel state's.
				{subject: "rule On × Power", what: "now to Off, was nothing", verdicts: []string{"behaviour=breaks"}},
				// Mute, which On ignored, now reaches region Volume, which
				// takes it in every state: Playback's states have no rule.
				{subject: "rule Stopped × Mute", what: "now nothing, was ignored", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Playing × Mute", what: "now nothing, was ignored", verdicts: []string{"behaviour=breaks"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := diff.Compare(machine(t, "old.yaml", tt.old), machine(t, "new.yaml", tt.new))
			assert.ElementsMatch(t, tt.want, changes(rep))
			assert.Equal(t, tt.breaks, rep.Breaks(), "breaking changes")
		})
	}
}
