package diff_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
)

// holdSpec is a call that may be put on hold; Connected remembers where it
// was when the call is held (the cases add and change that history).
const holdSpec = `version: 2
machine: Call
package: call
output:
  go: .
states:
  Idle:
    initial: true
    ignore: [Hold]
  Connected:
    history: shallow
    states:
      Talking:
        initial: true
      Muted: {}
  Held:
    ignore: [Hold, Mute]
events:
  Dial: {}
  Hold: {}
  Mute: {}
  Resume: {}
transitions:
  - from: Idle
    on: Dial
    to: Connected
  - from: Talking
    on: Mute
    to: Muted
  - from: Muted
    on: Mute
    to: Talking
  - from: Connected
    on: Hold
    to: Held
  - from: Held
    on: Resume
    to: Connected.history
  - from: "*"
    on: [Dial, Resume, Mute]
    ignore: true
`

// TestCompareHistory checks how fsmgen diff classifies a history added to
// a composite state, removed from it, and made deep, and a transient
// state it remembers in one revision and not in the other.
func TestCompareHistory(t *testing.T) {
	t.Parallel()
	without := strings.Replace(strings.Replace(holdSpec, "    history: shallow\n", "", 1), "to: Connected.history", "to: Connected", 1)
	deep := strings.Replace(holdSpec, "history: shallow", "history: deep", 1)
	// The case adds a done transition to the revision without history,
	// so that the done transition is its only change.
	done := strings.NewReplacer(
		"  Connected:\n", "  Connected:\n    done:\n      to: Idle\n",
		"      Muted: {}\n", "      Muted: {}\n      Over:\n        final: true\n",
		"  - from: Held\n    on: Resume\n", "  - from: Muted\n    on: Dial\n    to: Over\n  - from: Held\n    on: Resume\n",
	).Replace(without)
	rule := want{subject: "rule Held × Resume", what: "now to Connected.history (shallow), was to Connected", verdicts: []string{"behaviour=breaks"}}
	// Pick's eventless row leaves Connected for Held while Busy holds, so
	// Connected's history remembers Pick; once the row stays inside
	// Connected, no saved machine that remembers Pick loads.
	leaves := strings.NewReplacer(
		"      Muted: {}\n", "      Muted: {}\n      Pick:\n        transient: true\n",
		"  - from: Held\n    on: Resume\n", "  - from: Talking\n    on: Dial\n    to: Pick\n  - from: Pick\n    guards:\n      - if: Busy\n        to: Held\n      - else: true\n        to: Muted\n  - from: Held\n    on: Resume\n",
		"events:\n", "guards:\n  Busy: {}\nevents:\n",
	).Replace(holdSpec)
	stays := strings.Replace(leaves, "        to: Held\n      - else", "        to: Talking\n      - else", 1)
	choice := func(now, was string) want {
		return want{subject: "rule Pick (its choice)", what: "now [Busy] to " + now + "; [else] to Muted, was [Busy] to " + was + "; [else] to Muted", verdicts: []string{"behaviour=breaks"}}
	}
	tests := []struct {
		name     string
		old, new string
		breaks   int
		want     []want
	}{
		{
			name: "a history added", old: without, new: holdSpec, breaks: 1,
			want: []want{{subject: "state Connected", what: "gained a shallow history"}, rule},
		},
		{
			name: "a history removed", old: holdSpec, new: without, breaks: 2,
			want: []want{
				{subject: "state Connected", what: "lost its shallow history", verdicts: []string{"saved_states=breaks"}},
				{subject: "rule Held × Resume", what: "now to Connected, was to Connected.history (shallow)", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name: "a done transition added", old: without, new: done, breaks: 1,
			want: []want{
				{subject: "state Over", what: "added"},
				{subject: "rule Muted × Dial", what: "now to Over, was ignored", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name: "a history made deep", old: holdSpec, new: deep, breaks: 2,
			want: []want{
				{subject: "state Connected", what: "history made deep (was shallow)", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Held × Resume", what: "now to Connected.history (deep), was to Connected.history (shallow)", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name: "no longer remembered", old: leaves, new: stays, breaks: 2,
			want: []want{
				{subject: "state Connected", what: "history no longer remembers Pick", verdicts: []string{"saved_states=breaks"}},
				choice("Talking", "Held"),
			},
		},
		{
			name: "remembered now", old: stays, new: leaves, breaks: 1,
			want: []want{choice("Held", "Talking")},
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
