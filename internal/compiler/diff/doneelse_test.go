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

	// The resting final state takes events: a rule for one changed is a
	// change of what it does there.
	finish := strings.NewReplacer(
		"    ignore: [Start, Finish]\n", "    ignore: [Start]\n",
		"  - {from: Work, on: Finish, to: Over}\n", "  - {from: Work, on: Finish, to: Over}\n  - {from: Run, on: Finish, to: Idle}\n",
	).Replace(without)
	taken := diff.Compare(machine(t, "old.yaml", without), machine(t, "new.yaml", finish))
	assert.Equal(t, []want{{subject: "rule Over × Finish", what: "now to Idle, was ignored", verdicts: []string{"behaviour=breaks"}}}, changes(taken))
}

// shipSpec is a parallel Proc whose done transition has a guard and, with
// %ELSE%, an else: without it, the machine rests with every region final
// when Ok does not hold.
const shipSpec = `version: 2
machine: Ship
package: ship
states:
  Idle:
    initial: true
    ignore: [Pay, Send]
  Proc:
    parallel: true
    ignore: [Go, Pay, Send]
    done:
      guards:
        - if: Ok
          to: Idle
%ELSE%    states:
      Payment:
        states:
          Unpaid: {initial: true}
          Paid: {final: true}
      Shipping:
        states:
          Packing: {initial: true}
          Sent: {final: true}
events:
  Go: {}
  Pay: {}
  Send: {}
guards:
  Ok: {}
transitions:
  - {from: Idle, on: Go, to: Proc}
  - {from: Unpaid, on: Pay, to: Paid}
  - {from: Packing, on: Send, to: Sent}
`

// TestCompareParallelDoneElse checks how fsmgen diff classifies a
// parallel state's done transition losing its else (the machine may now
// rest with every region final: every saved machine loads) and gaining
// it (one saved so no longer loads).
func TestCompareParallelDoneElse(t *testing.T) {
	t.Parallel()
	withElse := strings.ReplaceAll(shipSpec, "%ELSE%", "        - else: true\n          to: Idle\n")
	without := strings.ReplaceAll(shipSpec, "%ELSE%", "")

	lost := diff.Compare(machine(t, "old.yaml", withElse), machine(t, "new.yaml", without))
	got := changes(lost)
	assert.Contains(t, got, want{subject: "state Proc", what: "may rest with every region final now: its done transition may be refused by every guard"}, fmt.Sprint(got))

	gained := diff.Compare(machine(t, "old.yaml", without), machine(t, "new.yaml", withElse))
	got = changes(gained)
	assert.Contains(t, got, want{subject: "state Proc", what: "no longer rests with every region final: its done transition now has an else", verdicts: []string{"saved_states=breaks"}}, fmt.Sprint(got))
	assert.Positive(t, gained.Breaks(), "breaking changes")

	noDone := strings.NewReplacer("    done:\n      guards:\n        - if: Ok\n          to: Idle\n", "", "    ignore: [Go, Pay, Send]", "    ignore: [Pay, Send]", "  - {from: Idle, on: Go, to: Proc}", "  - {from: Idle, on: Go, to: Proc}\n  - {from: Proc, on: Go, guards: [{if: Ok, to: Idle}, {else: true, to: Proc}]}").Replace(without)
	added := diff.Compare(machine(t, "old.yaml", noDone), machine(t, "new.yaml", without))
	got = changes(added)
	assert.Contains(t, got, want{subject: "state Proc", what: "gained a done transition that every guard may refuse"}, fmt.Sprint(got))
	for _, c := range got {
		assert.NotEqual(t, "gained a done transition", c.what, "no saved machine breaks")
	}
}

// regionRestSpec is restSpec's Run inside region Left of parallel state
// On: without %ELSE%'s else, region Left rests in Over when Ok does not
// hold.
const regionRestSpec = `version: 2
machine: Rest
package: rest
states:
  Idle:
    initial: true
    ignore: [Finish, Stop]
  On:
    parallel: true
    ignore: [Start, Finish]
    states:
      Left:
        states:
          Run:
            initial: true
            done:
              guards:
                - if: Ok
                  to: Done
%ELSE%            states:
              Work: {initial: true}
              Over: {final: true}
          Done: {}
      Right:
        states:
          R1: {initial: true}
events:
  Start: {}
  Finish: {}
  Stop: {}
guards:
  Ok: {}
transitions:
  - {from: Idle, on: Start, to: On}
  - {from: Work, on: Finish, to: Over}
  - {from: On, on: Stop, to: Idle}
`

// TestCompareRegionDoneElse is TestCompareDoneElse inside a region: the
// final state the region may now rest in loads every saved machine; one
// that gained the else no longer loads a machine saved with the region
// resting there.
func TestCompareRegionDoneElse(t *testing.T) {
	t.Parallel()
	withElse := strings.ReplaceAll(regionRestSpec, "%ELSE%", "                - else: true\n                  to: Done\n")
	without := strings.ReplaceAll(regionRestSpec, "%ELSE%", "")

	lost := diff.Compare(machine(t, "old.yaml", withElse), machine(t, "new.yaml", without))
	got := changes(lost)
	assert.Contains(t, got, want{subject: "state Over", what: "may rest now: the done transition of Run may be refused by every guard"}, fmt.Sprint(got))
	for _, c := range lost.Changes {
		if c.Subject == "state Over" {
			assert.Equal(t, diff.OK, c.Verdicts[diff.SavedStates], "no machine was saved with region Left in Over")
		}
	}

	gained := diff.Compare(machine(t, "old.yaml", without), machine(t, "new.yaml", withElse))
	got = changes(gained)
	assert.Contains(t, got, want{subject: "state Over", what: "left at once: the done transition of Run now has an else", verdicts: []string{"saved_states=breaks"}}, fmt.Sprint(got))
	assert.Positive(t, gained.Breaks(), "breaking changes")
}

// TestCompareRegionDoneElseDeep is TestCompareRegionDoneElse under the
// parallel state's own deep history, which may remember region Left
// resting in Over: gaining the else breaks such a memory too, and the
// reason says so.
func TestCompareRegionDoneElseDeep(t *testing.T) {
	t.Parallel()
	deep := strings.NewReplacer("    parallel: true\n", "    parallel: true\n    history: deep\n", "{from: Idle, on: Start, to: On}", "{from: Idle, on: Start, to: On.history}").Replace(regionRestSpec)
	withElse := strings.ReplaceAll(deep, "%ELSE%", "                - else: true\n                  to: Done\n")
	without := strings.ReplaceAll(deep, "%ELSE%", "")

	gained := diff.Compare(machine(t, "old.yaml", without), machine(t, "new.yaml", withElse))
	got := changes(gained)
	assert.Contains(t, got, want{subject: "state Over", what: "left at once: the done transition of Run now has an else", verdicts: []string{"saved_states=breaks"}}, fmt.Sprint(got))
	for _, c := range gained.Changes {
		if c.Subject == "state Over" {
			assert.Contains(t, c.Why[diff.SavedStates], "or whose deep history of On remembers it there", "the memory breaks too")
		}
	}
}
