package diff_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
)

// deskSpec holds Desk, a composite state of region Work with a deep
// history around Editing, a parallel state inside the region, whose
// regions' leaves the history remembers.
const deskSpec = `version: 2
machine: Studio
package: studio
output:
  go: .
states:
  Off:
    initial: true
    ignore: [Stop, Edit, Close, Type, Save, Show, Pause, Resume, GoOnline, GoOffline]
  Run:
    parallel: true
    ignore: [Start]
    states:
      Work:
        states:
          Browse:
            initial: true
            ignore: [Close, Type, Save, Show, Pause, Resume]
          Desk:
            history: deep
            ignore: [Resume]
            states:
              Reading:
                initial: true
                ignore: [Close, Type, Save, Show]
              Editing:
                parallel: true
                entry: EditIn
                exit: EditOut
                ignore: [Edit]
                states:
                  Text:
                    states:
                      Typing: {initial: true, entry: TypingIn, ignore: [Type]}
                      Saved: {entry: SavedIn, ignore: [Save]}
                  Preview:
                    states:
                      Hidden: {initial: true}
                      Shown: {entry: ShownIn, exit: ShownOut, ignore: [Show], after: {delay: 5s, to: Hidden}}
          Break:
            ignore: [Edit, Close, Type, Save, Show, Pause]
      Net:
        states:
          Offline: {initial: true, ignore: [GoOffline]}
          Online: {ignore: [GoOnline]}
events:
  Start: {}
  Stop: {}
  Edit: {}
  Close: {}
  Type: {}
  Save: {}
  Show: {}
  Pause: {}
  Resume: {}
  GoOnline: {}
  GoOffline: {}
actions:
  EditIn: {}
  EditOut: {}
  TypingIn: {}
  SavedIn: {}
  ShownIn: {}
  ShownOut: {}
transitions:
  - {from: Off, on: Start, to: Run}
  - {from: Run, on: Stop, to: Off}
  - {from: Browse, on: Edit, to: Desk}
  - {from: Reading, on: Edit, to: Editing}
  - {from: Editing, on: Close, to: Reading}
  - {from: Typing, on: Save, to: Saved}
  - {from: Saved, on: Type, to: Typing}
  - {from: Hidden, on: Show, to: Shown}
  - {from: Desk, on: Pause, to: Break}
  - {from: Break, on: Resume, to: Desk.history}
  - {from: Offline, on: GoOnline, to: Online}
  - {from: Online, on: GoOffline, to: Offline}
`

// TestCompareHostedDeepHistory checks how fsmgen diff classifies a deep
// history around a parallel state inside a region: it remembers the leaf
// of each of the parallel state's regions, so made shallow it breaks the
// machines saved with such a memory, and a region added to the parallel
// state is resumed in its initial state from a memory saved before.
func TestCompareHostedDeepHistory(t *testing.T) {
	t.Parallel()
	shallow := strings.Replace(deskSpec, "history: deep", "history: shallow", 1)
	none := strings.Replace(strings.Replace(deskSpec, "            history: deep\n", "", 1), "to: Desk.history", "to: Desk", 1)
	wider := strings.Replace(deskSpec, "                  Preview:\n", "                  Side:\n                    states:\n                      S1: {initial: true}\n                  Preview:\n", 1)
	tests := []struct {
		name     string
		old, new string
		want     []want
	}{
		{
			name: "a deep history given", old: none, new: deskSpec,
			want: []want{
				{subject: "state Desk", what: "gained a deep history"},
				{subject: "rule Break × Resume", what: "now to Desk.history (deep), was to Desk", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name: "made shallow", old: deskSpec, new: shallow,
			want: []want{
				{subject: "state Desk", what: "history made shallow (was deep)", verdicts: []string{"saved_states=breaks", "behaviour=breaks"}},
				{subject: "rule Break × Resume", what: "now to Desk.history (shallow), was to Desk.history (deep)", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name: "a region added to the parallel state the history holds", old: deskSpec, new: wider,
			want: []want{
				{subject: "state Run", what: "gained region Side", verdicts: []string{"saved_states=breaks", "behaviour=review"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := diff.Compare(machine(t, "old.yaml", tt.old), machine(t, "new.yaml", tt.new))
			assert.ElementsMatch(t, tt.want, changes(rep))
			for _, c := range rep.Changes {
				if c.What == "history made shallow (was deep)" {
					assert.Contains(t, c.Why[diff.SavedStates], "from parallel state Editing remembers the leaf of each of its regions")
				}
				if c.What == "gained region Side" {
					assert.Contains(t, c.Why[diff.Behaviour], "the deep history of Desk remembered Editing's regions resumes region Side in its initial state S1")
				}
			}
		})
	}
}
