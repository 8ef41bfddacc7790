package diff_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
)

// tapeSpec is a player whose On state is parallel; region Tape's Running
// remembers its child (the cases add, remove and change that history).
const tapeSpec = `version: 2
machine: Player
package: player
output:
  go: .
states:
  Off:
    initial: true
    ignore: [Play, Stop, Speed, Mute]
  On:
    parallel: true
    ignore: [Play, Stop, Speed]
    states:
      Tape:
        states:
          Stopped:
            initial: true
          Running:
            history: shallow
            states:
              Slow:
                initial: true
              Fast: {}
      Volume:
        states:
          Normal:
            initial: true
          Muted: {}
events:
  Power: {}
  Play: {}
  Stop: {}
  Speed: {}
  Mute: {}
transitions:
  - {from: Off, on: Power, to: On}
  - {from: On, on: Power, to: Off}
  - {from: Stopped, on: Play, to: Running.history}
  - {from: Running, on: Stop, to: Stopped}
  - {from: Slow, on: Speed, to: Fast}
  - {from: Fast, on: Speed, to: Slow}
  - {from: Normal, on: Mute, to: Muted}
  - {from: Muted, on: Mute, to: Normal}
`

// TestCompareRegionHistory checks that fsmgen diff classifies a history
// added to a composite state inside a region, removed from it, and made
// deep, as it does outside regions.
func TestCompareRegionHistory(t *testing.T) {
	t.Parallel()
	without := strings.Replace(strings.Replace(tapeSpec, "            history: shallow\n", "", 1), "to: Running.history", "to: Running", 1)
	deep := strings.Replace(tapeSpec, "history: shallow", "history: deep", 1)
	rule := want{subject: "rule Stopped × Play", what: "now to Running.history (shallow), was to Running", verdicts: []string{"behaviour=breaks"}}
	tests := []struct {
		name     string
		old, new string
		breaks   int
		want     []want
	}{
		{
			name: "a history added", old: without, new: tapeSpec, breaks: 1,
			want: []want{{subject: "state Running", what: "gained a shallow history"}, rule},
		},
		{
			name: "a history removed", old: tapeSpec, new: without, breaks: 2,
			want: []want{
				{subject: "state Running", what: "lost its shallow history", verdicts: []string{"saved_states=breaks"}},
				{subject: "rule Stopped × Play", what: "now to Running, was to Running.history (shallow)", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name: "a history made deep", old: tapeSpec, new: deep, breaks: 2,
			want: []want{
				{subject: "state Running", what: "history made deep (was shallow)", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Stopped × Play", what: "now to Running.history (deep), was to Running.history (shallow)", verdicts: []string{"behaviour=breaks"}},
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

// TestCompareRootHistoryBesideDone checks that fsmgen diff classifies a
// history added to a region's own state beside its parallel state's done
// transition (chart kiln) as any region's history: a machine saved before
// remembers nothing of Heat and loads; one saved after may remember Heat's
// final state, a leaf of it like any other.
func TestCompareRootHistoryBesideDone(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../export/testdata/charts/kiln/kiln.yaml")
	require.NoError(t, err)
	with := string(src)
	without := strings.Replace(strings.Replace(with, "        history: shallow\n        entry: HeatIn\n", "        entry: HeatIn\n", 1), "{from: Cold, on: Back, to: Heat.history}", "{from: Cold, on: Back, to: Warm}", 1)
	require.NotEqual(t, with, without)
	rule := want{subject: "rule Cold × Back", what: "now to Heat.history (shallow), was to Warm", verdicts: []string{"behaviour=breaks"}}
	for _, tt := range []struct {
		name     string
		old, new string
		want     []want
	}{
		{name: "gained", old: without, new: with, want: []want{{subject: "state Heat", what: "gained a shallow history"}, rule}},
		{name: "lost", old: with, new: without, want: []want{
			{subject: "state Heat", what: "lost its shallow history", verdicts: []string{"saved_states=breaks"}},
			{subject: "rule Cold × Back", what: "now to Warm, was to Heat.history (shallow)", verdicts: []string{"behaviour=breaks"}},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := diff.Compare(machine(t, "old.yaml", tt.old), machine(t, "new.yaml", tt.new))
			assert.ElementsMatch(t, tt.want, changes(rep))
		})
	}
}
