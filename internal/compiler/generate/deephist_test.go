package generate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// resumeTest is a hand-written test of the console chart's generated
// machine: Live is left from Mix with Audio in Loud and Video in Lit,
// saved, loaded into a new machine, and switched on again, which resumes
// both regions' leaves, Loud's entry and timer included.
const resumeTest = `package console

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestResumeAfterLoad(t *testing.T) {
	rec := &Recorder{}
	m, err := New(Config{Handler: rec})
	require.NoError(t, err)
	for _, ev := range []Event{&Power{}, &TimerFired{Timer: 1}, &Next{}, &Mode{}, &Power{}} {
		require.NoError(t, m.HandleEvent(ev))
	}
	data, err := m.Save()
	require.NoError(t, err)
	require.Contains(t, string(data), ` + "`" + `{"state":"live","region":"audio","leaf":"loud"},{"state":"live","region":"video","leaf":"lit"}` + "`" + `)
	rec = &Recorder{}
	m, err = Load(Config{Handler: rec}, data)
	require.NoError(t, err)
	require.NoError(t, m.HandleEvent(&Power{}))
	require.Equal(t, Mix{Audio: StateLoud, Video: StateLit}, m.State())
	require.Equal(t, []Action{&LiveIn{}, &MixIn{}, &LoudIn{}, &StartTimer{Timer: 3, Delay: 10 * time.Second}, &LitIn{}}, rec.Actions)

	// Restore remembers nothing: Live is entered through Warmup.
	m, err = Restore(Config{Handler: &Recorder{}}, Off{})
	require.NoError(t, err)
	require.NoError(t, m.HandleEvent(&Power{}))
	require.Equal(t, Warmup{}, m.State())
}
`

// TestDeepHistoryOverParallelSaved generates the console chart of the
// export's differential test (a deep history over a parallel state) into
// a module of its own and runs a hand-written test there: what the
// history remembers of each region is saved, loaded and resumed.
func TestDeepHistoryOverParallelSaved(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	dir := tempModule(t)
	generateIn(t, dir, "console", chartSpec(t, "console"), map[string]string{"console/resume_test.go": resumeTest})
	out := goIn(t, dir, "test", "-count=1", "-v", "./console/")
	assert.Contains(t, out, "--- PASS: TestResumeAfterLoad")
	assert.Contains(t, out, "--- PASS: TestPaths")
}
