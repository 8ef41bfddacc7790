package diff_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
)

// restSpec is a composite Run whose done transition has a guard and, with
// %ELSE%, an else: without it, the machine rests in the final state Over
// when Ok does not hold.
const restSpec = `version: 2
machine: Rest
package: rest
states:
  Idle:
    initial: true
    ignore: [Finish]
  Run:
    ignore: [Start, Finish]
    done:
      guards:
        - if: Ok
          to: Idle
%ELSE%    states:
      Work: {initial: true}
      Over: {final: true}
events:
  Start: {}
  Finish: {}
guards:
  Ok: {}
transitions:
  - {from: Idle, on: Start, to: Run}
  - {from: Work, on: Finish, to: Over}
`

// TestCompareDoneElse checks how fsmgen diff classifies a done transition
// losing its else (the final state may now rest: every saved machine
// loads) and gaining it (a machine saved resting in the final state no
// longer loads); the branch itself is compared as a rule.
func TestCompareDoneElse(t *testing.T) {
	t.Parallel()
	withElse := strings.ReplaceAll(restSpec, "%ELSE%", "        - else: true\n          to: Work\n")
	without := strings.ReplaceAll(restSpec, "%ELSE%", "")

	lost := diff.Compare(machine(t, "old.yaml", withElse), machine(t, "new.yaml", without))
	got := changes(lost)
	assert.Contains(t, got, want{subject: "state Over", what: "may rest now: the done transition of Run may be refused by every guard"}, fmt.Sprint(got))
	for _, c := range lost.Changes {
		if c.Subject == "state Over" {
			assert.Equal(t, diff.OK, c.Verdicts[diff.SavedStates], "no machine was saved in Over")
		}
	}

	gained := diff.Compare(machine(t, "old.yaml", without), machine(t, "new.yaml", withElse))
	got = changes(gained)
	assert.Contains(t, got, want{subject: "state Over", what: "left at once: the done transition of Run now has an else", verdicts: []string{"saved_states=breaks"}}, fmt.Sprint(got))
	assert.Positive(t, gained.Breaks(), "breaking changes")
}
