package fsm_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// jobSpec has a shallow history beside a done transition (Batch's, which
// remembers its final state Over) and a deep one around a composite state
// whose done transition leaves it (Session's, which remembers Login's
// final state Signed), and one (Desk's) whose inner done stays inside it.
const jobSpec = `version: 2
machine: Job
package: job
actions:
  Open: {}
  Close: {}
  Reported: {}
  Welcome: {}
guards:
  clean: {}
states:
  Idle:
    initial: true
    ignore: [Finish, Stop, Sign]
  Batch:
    history: shallow
    entry: Open
    exit: Close
    done:
      guards:
        - {if: clean, to: Report, action: Reported}
        - {else: true, to: Idle}
    states:
      Running: {initial: true}
      Over: {final: true}
  Report:
    ignore: [Finish, Sign, Start, Visit, File]
  Session:
    history: deep
    ignore: [Start, Finish, Visit, File]
    states:
      Login:
        initial: true
        done: {to: Idle, action: Welcome}
        states:
          Ask: {initial: true}
          Signed: {final: true}
  Desk:
    history: deep
    ignore: [Start, Finish, Visit, File]
    states:
      Form:
        initial: true
        done: {to: Filed}
        states:
          Fill: {initial: true}
          Sent: {final: true}
      Filed: {}
events:
  Start: {}
  Finish: {}
  Stop: {}
  Sign: {}
  Visit: {}
  File: {}
transitions:
  - {from: Idle, on: Start, to: Batch.history}
  - {from: Idle, on: Visit, to: Session.history}
  - {from: Idle, on: File, to: Desk.history}
  - {from: Running, on: Finish, to: Over}
  - {from: Batch, on: Stop, to: Idle}
  - {from: Batch, on: [Start, Sign, Visit, File], ignore: true}
  - {from: Report, on: Stop, to: Idle}
  - {from: Ask, on: Sign, to: Signed}
  - {from: Session, on: Stop, to: Idle}
  - {from: Fill, on: Sign, to: Sent}
  - {from: Desk, on: Stop, to: Idle}
  - {from: Filed, on: Sign, ignore: true}
`

// TestHistoryBesideDone checks that a history remembers the final state
// a done transition leaves its state from (SCXML 1.0 §3.10): a rule into
// it resumes the final state, and its witness path goes on through the
// done transition, each branch, in that step; a final state whose done
// stays inside the history's state is never remembered.
func TestHistoryBesideDone(t *testing.T) {
	t.Parallel()
	m, paths := witnessPaths(t, "job.yaml", []byte(jobSpec))
	batch := paths["Idle --Start--> Batch.history (was in Over)"]
	require.NotNil(t, batch, "the history resumes the final state")
	last := batch.Steps[len(batch.Steps)-1]
	assert.Equal(t, []string{"Idle --Start--> Batch.history (was in Over)", "Batch --done [clean]--> Report / Reported"}, labels(last))
	assert.Equal(t, "Report", last.To.Name, "the step rests where the done transition leads, not in Over")
	session := paths["Idle --Visit--> Session.history (was in Signed)"]
	require.NotNil(t, session)
	last = session.Steps[len(session.Steps)-1]
	assert.Equal(t, "Idle", last.To.Name, "Login completes again and leaves Session")
	assert.Equal(t, []string{"Idle --Visit--> Session.history (was in Signed)", "Login --done--> Idle / Welcome"}, labels(last))
	for _, r := range m.Rules {
		assert.NotEqual(t, "Idle --File--> Desk.history (was in Sent)", r.Label, "Form's done stays in Desk: Desk never remembers Sent")
	}
}

// TestHistoryDoneLoop checks that a done transition into its own state's
// history, which would resume the final state it leaves and complete
// again, forever, is refused as a loop of transient states.
func TestHistoryDoneLoop(t *testing.T) {
	t.Parallel()
	src := `version: 2
machine: Loop
package: loop
states:
  Idle: {initial: true}
  Job:
    history: shallow
    done: {to: Job.history}
    ignore: [Go]
    states:
      Work: {initial: true}
      Over: {final: true}
events:
  Go: {}
  Stop: {}
transitions:
  - {from: Idle, on: Go, to: Job.history}
  - {from: Idle, on: Stop, ignore: true}
  - {from: Work, on: Stop, to: Over}
`
	sf, diags := spec.Parse("loop.yaml", []byte(src))
	require.False(t, diags.HasErrors(), "%s", diags)
	m, diags := fsm.Build(sf, fsm.Env{})
	require.Nil(t, m)
	assert.Contains(t, diags.Error(), "transient states and done transitions could loop without an event: Over → Over")
}

// TestRegionHistoryBesideDone checks histories beside done transitions
// inside regions (chart spool): the done transition remembers the final
// state it leaves the history's state from, a row of the region into the
// history resumes it, and the witness path of that variant goes on
// through the done transition in the same step, each branch.
func TestRegionHistoryBesideDone(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../export/testdata/charts/spool/spool.yaml")
	require.NoError(t, err)
	_, paths := witnessPaths(t, "spool.yaml", src)
	tape := paths["Stopped --Play--> Running.history (was in Ended)"]
	require.NotNil(t, tape, "Running's history resumes its final state")
	last := tape.Steps[len(tape.Steps)-1]
	assert.Equal(t, []string{"Stopped --Play--> Running.history (was in Ended)", "Running --done--> Stopped / Rewind"}, labels(last))
	radio := paths["Silent --Tune--> Seek.history (was in Found)"]
	require.NotNil(t, radio, "Seek's history resumes its final state")
	last = radio.Steps[len(radio.Steps)-1]
	// Region Tape, before Radio, ignores Tune beside it.
	assert.Equal(t, []string{"Stopped --Tune--> ignored", "Silent --Tune--> Seek.history (was in Found)", "Seek --done [strong]--> Over / Lock"}, labels(last))
}

// TestRootHistoryBesideDone checks the histories of regions' own states
// beside a parallel state's done transition (charts kiln and forge): the
// witness path of the done transition resumes a region's final state, and
// the step goes on, after the eventless rules of the transient states it
// entered, through the done transition, and rests where it leads.
func TestRootHistoryBesideDone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		chart, done string
		last        []string
		to          string
	}{
		{
			chart: "kiln", done: "Job --done [cool]--> Idle / Bye", to: "Idle",
			last: []string{"Cold --Back--> Heat.history (was in Hot)", "Still --Back--> Spin", "Spin ----> Whirl / Spun", "Job --done [cool]--> Idle / Bye"},
		},
		{
			chart: "forge", done: "Anvil --done--> Bench / Forged", to: "On",
			last: []string{"Open --Again--> Tongs.history (was in Held)", "Dim --Again--> Bright", "Anvil --done--> Bench / Forged"},
		},
	} {
		t.Run(tc.chart, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile("../export/testdata/charts/" + tc.chart + "/" + tc.chart + ".yaml")
			require.NoError(t, err)
			_, paths := witnessPaths(t, tc.chart+".yaml", src)
			path := paths[tc.done]
			require.NotNil(t, path, "the done transition has a witness path")
			last := path.Steps[len(path.Steps)-1]
			assert.Equal(t, tc.last, labels(last))
			assert.Equal(t, tc.to, last.To.Name)
		})
	}
}

// witnessPaths builds spec src, which must check, and returns the machine
// and its witness paths by the label of the rule each fires.
func witnessPaths(t *testing.T, name string, src []byte) (*fsm.Machine, map[string]*fsm.Path) {
	t.Helper()
	m, _ := built(t, name, string(src))
	paths := map[string]*fsm.Path{}
	for _, p := range m.Paths {
		paths[p.Rule.Label] = p
	}
	return m, paths
}

// built parses and builds spec src, which must parse and build, and
// returns the machine and what the build reported.
func built(t *testing.T, name, src string) (*fsm.Machine, diag.List) {
	t.Helper()
	m, diags := fsm.Build(parsed(t, name, []byte(src)), fsm.Env{})
	require.NotNil(t, m, "%s", diags)
	return m, diags
}

// parsed parses spec src, which must parse.
func parsed(t *testing.T, name string, src []byte) *spec.File {
	t.Helper()
	sf, diags := spec.Parse(name, src)
	require.False(t, diags.HasErrors(), "%s", diags)
	return sf
}

// labels returns the labels of the rules way w takes, in order.
func labels(w *fsm.Way) []string {
	var out []string
	for _, r := range w.Rules {
		out = append(out, r.Label)
	}
	return out
}
