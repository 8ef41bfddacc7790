package diff_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
)

// editingSpec holds Editing, a parallel state inside region Work with a
// deep history of its own, which remembers the leaf of each of its
// regions.
const editingSpec = `version: 2
machine: Studio
package: studio
output:
  go: .
states:
  Off:
    initial: true
    ignore: [Stop, Edit, Close, Type, Save, Show, Pause, Resume, Redo, GoOnline, GoOffline]
  Run:
    parallel: true
    ignore: [Start]
    states:
      Work:
        states:
          Reading:
            initial: true
            ignore: [Close, Type, Save, Show, Pause, Resume, Redo]
          Editing:
            parallel: true
            history: deep
            entry: EditIn
            exit: EditOut
            ignore: [Edit, Resume]
            states:
              Text:
                states:
                  Typing: {initial: true, entry: TypingIn, ignore: [Type, Pause]}
                  Saved: {entry: SavedIn, ignore: [Save]}
              Preview:
                states:
                  Hidden: {initial: true}
                  Shown: {entry: ShownIn, exit: ShownOut, ignore: [Show], after: {delay: 5s, to: Hidden}}
          Break:
            ignore: [Edit, Close, Type, Save, Show, Pause, Redo]
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
  Redo: {}
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
  - {from: Reading, on: Edit, to: Editing.history}
  - {from: Editing, on: Close, to: Reading}
  - {from: Editing, on: Redo, to: Editing.history}
  - {from: Typing, on: Save, to: Saved}
  - {from: Saved, on: Type, to: Typing}
  - {from: Hidden, on: Show, to: Shown}
  - {from: Editing, on: Pause, to: Break}
  - {from: Break, on: Resume, to: Editing.history}
  - {from: Offline, on: GoOnline, to: Online}
  - {from: Online, on: GoOffline, to: Offline}
`

// TestCompareHostedOwnHistory checks how fsmgen diff classifies the deep
// history of a parallel state inside a region: given, it changes where
// the rules into Editing lead; dropped, it breaks the machines saved with
// its memory of Editing's regions; and a region added to Editing is
// resumed in its initial state from a memory saved before.
func TestCompareHostedOwnHistory(t *testing.T) {
	t.Parallel()
	none := strings.ReplaceAll(strings.Replace(editingSpec, "            history: deep\n", "", 1), "to: Editing.history", "to: Editing")
	wider := strings.Replace(editingSpec, "              Preview:\n", "              Side:\n                states:\n                  S1: {initial: true}\n              Preview:\n", 1)
	tests := []struct {
		name     string
		old, new string
		want     []want
	}{
		{
			name: "a deep history given", old: none, new: editingSpec,
			// (Editing's Redo is a rule of each leaf of its regions too.)
			want: []want{
				{subject: "state Editing", what: "gained a deep history"},
				{subject: "rule Reading × Edit", what: "now to Editing.history (deep), was to Editing", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Break × Resume", what: "now to Editing.history (deep), was to Editing", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Editing × Redo", what: "now to Editing.history (deep), was to Editing", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Typing × Redo", what: "now to Editing.history (deep), was to Editing", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Saved × Redo", what: "now to Editing.history (deep), was to Editing", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Hidden × Redo", what: "now to Editing.history (deep), was to Editing", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Shown × Redo", what: "now to Editing.history (deep), was to Editing", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name: "the deep history dropped", old: editingSpec, new: none,
			want: []want{
				{subject: "state Editing", what: "lost its deep history", verdicts: []string{"saved_states=breaks"}},
				{subject: "rule Reading × Edit", what: "now to Editing, was to Editing.history (deep)", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Break × Resume", what: "now to Editing, was to Editing.history (deep)", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Editing × Redo", what: "now to Editing, was to Editing.history (deep)", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Typing × Redo", what: "now to Editing, was to Editing.history (deep)", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Saved × Redo", what: "now to Editing, was to Editing.history (deep)", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Hidden × Redo", what: "now to Editing, was to Editing.history (deep)", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Shown × Redo", what: "now to Editing, was to Editing.history (deep)", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name: "a region added to the parallel state with the history", old: editingSpec, new: wider,
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
				if c.What == "gained a deep history" {
					assert.Contains(t, c.Why[diff.SavedStates], "a transition to Editing.history enters its regions' initial states until the machine has left Editing once")
				}
				if c.What == "lost its deep history" {
					assert.Contains(t, c.Why[diff.SavedStates], "a machine saved after it left Editing remembers a leaf of it, and no longer loads")
				}
				if c.What == "gained region Side" {
					assert.Contains(t, c.Why[diff.Behaviour], "the deep history of Editing remembered Editing's regions resumes region Side in its initial state S1")
				}
			}
		})
	}
}
