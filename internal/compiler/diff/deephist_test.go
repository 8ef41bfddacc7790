package diff_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
)

// mixSpec is a console whose Live state keeps a deep history over Mix, a
// parallel state, and whose Rack, a parallel state, keeps a deep history
// of its own (the cases change both).
const mixSpec = `version: 2
machine: Console
package: console
output:
  go: .
states:
  Off:
    initial: true
    ignore: [Next, Mode]
  Live:
    history: deep
    states:
      Mix:
        initial: true
        parallel: true
        states:
          Audio:
            states:
              Mute: {initial: true}
              Loud: {}
          Video:
            states:
              Dark: {initial: true}
              Lit: {}
  Rack:
    parallel: true
    history: deep
    ignore: [Next, Mode]
    states:
      Left:
        states:
          L1: {initial: true}
          L2: {}
      Right:
        states:
          R1: {initial: true}
          R2: {}
events:
  Power: {}
  Swap: {}
  Next: {}
  Mode: {}
transitions:
  - {from: Off, on: Power, to: Live.history}
  - {from: Off, on: Swap, to: Rack.history}
  - {from: Live, on: Power, to: Off}
  - {from: Live, on: Swap, to: Rack}
  - {from: Rack, on: Power, to: Off}
  - {from: Rack, on: Swap, to: Off}
  - {from: Mute, on: Next, to: Loud}
  - {from: Loud, on: Next, to: Mute}
  - {from: Dark, on: Mode, to: Lit}
  - {from: Lit, on: Mode, to: Dark}
  - {from: L1, on: Next, to: L2}
  - {from: R1, on: Mode, to: R2}
`

// TestCompareDeepHistoryOverParallel checks that fsmgen diff classifies
// a deep history over a parallel state made shallow (saved machines
// remember its regions' leaves, which no longer load) and a parallel
// state's own deep history added and removed.
func TestCompareDeepHistoryOverParallel(t *testing.T) {
	t.Parallel()
	shallow := strings.Replace(mixSpec, "history: deep", "history: shallow", 1)
	noRack := strings.Replace(strings.Replace(mixSpec, "    history: deep\n    ignore", "    ignore", 1), "to: Rack.history", "to: Rack", 1)
	tests := []struct {
		name     string
		old, new string
		breaks   int
		want     []want
	}{
		{
			name: "deep made shallow", old: mixSpec, new: shallow, breaks: 2,
			want: []want{
				{subject: "state Live", what: "history made shallow (was deep)", verdicts: []string{"saved_states=breaks", "behaviour=breaks"}},
				{subject: "rule Off × Power", what: "now to Live.history (shallow), was to Live.history (deep)", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name: "a parallel state's history added", old: noRack, new: mixSpec, breaks: 1,
			want: []want{
				{subject: "state Rack", what: "gained a deep history"},
				{subject: "rule Off × Swap", what: "now to Rack.history (deep), was to Rack", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name: "a parallel state's history removed", old: mixSpec, new: noRack, breaks: 2,
			want: []want{
				{subject: "state Rack", what: "lost its deep history", verdicts: []string{"saved_states=breaks"}},
				{subject: "rule Off × Swap", what: "now to Rack, was to Rack.history (deep)", verdicts: []string{"behaviour=breaks"}},
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
