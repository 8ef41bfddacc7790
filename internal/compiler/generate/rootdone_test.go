package generate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// rootFinalTest is a hand-written test of the kiln chart's generated
// machine: the histories of its regions' own states Heat and Vent
// remember the final states Job is left from, by its Abort or its done
// transition (SCXML 1.0 §3.10); saved and loaded, the memory resumes
// them, and with Fan ended in the same step (after its transient state's
// eventless row), Job's done transition follows, its guard asked then
// (§3.13).
const rootFinalTest = `package kiln

import (
	"testing"

	"github.com/stretchr/testify/require"
)

type kiln struct{ cool bool }

func (k *kiln) Cool() bool { return k.cool }

func TestResumeRootFinalAfterLoad(t *testing.T) {
	k, rec := &kiln{cool: true}, &Recorder{}
	m, err := New(Config{Behavior: k, Handler: rec})
	require.NoError(t, err)
	for _, ev := range []Event{&Power{}, &Go{}, &Go{}, &Abort{}, &Power{}, &Fin{}} {
		require.NoError(t, m.HandleEvent(ev))
	}
	require.Equal(t, Job{Heat: StateCold, Vent: StateOpen, Fan: StateStill}, m.State())
	data, err := m.Save()
	require.NoError(t, err)
	require.Contains(t, string(data), ` + "`" + `"history":[{"state":"heat","leaf":"hot"},{"state":"vent","leaf":"shut"}]` + "`" + `)

	// Heat resumes its final state, Fan ends: every region is final.
	rec = &Recorder{}
	m, err = Load(Config{Behavior: k, Handler: rec}, data)
	require.NoError(t, err)
	require.NoError(t, m.HandleEvent(&Back{}))
	require.Equal(t, Idle{}, m.State())
	require.Equal(t, []Action{&HotIn{}, &Spun{}, &HotOut{}, &HeatOut{}, &JobOut{}, &Bye{}}, rec.Actions)

	// The done transition left Heat and Vent from their final states.
	data, err = m.Save()
	require.NoError(t, err)
	require.Contains(t, string(data), ` + "`" + `"history":[{"state":"heat","leaf":"hot"},{"state":"vent","leaf":"open"}]` + "`" + `)
	k.cool = false
	rec = &Recorder{}
	m, err = Load(Config{Behavior: k, Handler: rec}, data)
	require.NoError(t, err)
	require.NoError(t, m.HandleEvent(&Power{}))
	require.Equal(t, Job{Heat: StateCold, Vent: StateShut, Fan: StateStill}, m.State())
	rec.Actions = nil
	require.NoError(t, m.HandleEvent(&Back{}))
	require.Equal(t, Cooling{}, m.State())
	require.Equal(t, []Action{&HotIn{}, &OpenIn{}, &Spun{}, &HotOut{}, &HeatOut{}, &JobOut{}}, rec.Actions)
}
`

// TestRootHistoryResumesFinal generates the kiln chart of the export's
// differential test (histories of regions' own states beside the
// parallel state's done transition) into a module of its own and runs a
// hand-written test there, with the generated ones: the final states
// remembered are saved, loaded and resumed, and the done follows.
func TestRootHistoryResumesFinal(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	dir := tempModule(t)
	generateIn(t, dir, "kiln", chartSpec(t, "kiln"), map[string]string{"kiln/resume_test.go": rootFinalTest})
	out := goIn(t, dir, "test", "-count=1", "-v", "./kiln/")
	assert.Contains(t, out, "--- PASS: TestResumeRootFinalAfterLoad")
	assert.Contains(t, out, "--- PASS: TestPaths")
	assert.Contains(t, out, "--- PASS: TestSaved")
}

// TestRootHistoryResumesHostedFinal generates the forge chart of the
// export's differential test (the history of a region's own state beside
// the done transition of a parallel state inside a region) into a module
// of its own and runs its generated tests: the witness path of Anvil's
// done transition resumes Tongs' final state, with Lamp's rule in the
// same step, and the done follows.
func TestRootHistoryResumesHostedFinal(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	dir := tempModule(t)
	generateIn(t, dir, "forge", chartSpec(t, "forge"), nil)
	out := goIn(t, dir, "test", "-count=1", "-v", "./forge/")
	assert.Contains(t, out, "--- PASS: TestPaths")
	assert.Contains(t, out, "--- PASS: TestSaved")
}
