package generate_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// finalResumeTest is a hand-written test of the till chart's generated
// machine: Tally's done transition leaves Shift with both regions final,
// which Shift's deep history remembers; saved and loaded, the memory
// resumes both final states, and Tally's done transition follows in that
// step, with its guard asked after the entries. Desk's own deep history
// resumes Desk so after its done transition. A memory of one region only
// final resumes the regions and rests there.
const finalResumeTest = `package till

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type till struct{ balanced bool }

func (b *till) Balanced() bool { return b.balanced }

func TestResumeFinalAfterLoad(t *testing.T) {
	b, rec := &till{balanced: true}, &Recorder{}
	m, err := New(Config{Behavior: b, Handler: rec})
	require.NoError(t, err)
	for _, ev := range []Event{&Power{}, &Count{}, &Print{}} {
		require.NoError(t, m.HandleEvent(ev))
	}
	require.Equal(t, Off{}, m.State())
	data, err := m.Save()
	require.NoError(t, err)
	require.Contains(t, string(data), ` + "`" + `{"state":"shift","leaf":"tally"},{"state":"shift","region":"drawer","leaf":"d2"},{"state":"shift","region":"printer","leaf":"p2"}` + "`" + `)

	b.balanced = false
	rec = &Recorder{}
	m, err = Load(Config{Behavior: b, Handler: rec}, data)
	require.NoError(t, err)
	require.NoError(t, m.HandleEvent(&Power{}))
	require.Equal(t, Audit{}, m.State())
	require.Equal(t, []Action{&ShiftIn{}, &TallyIn{}, &D2In{}, &P2In{}, &TallyOut{}, &Flag{}, &AuditIn{}}, rec.Actions)

	// Desk's own deep history, after its done transition.
	rec.Actions = nil
	for _, ev := range []Event{&Power{}, &Open{}, &Count{}, &Print{}} {
		require.NoError(t, m.HandleEvent(ev))
	}
	require.Equal(t, Off{}, m.State())
	rec.Actions = nil
	require.NoError(t, m.HandleEvent(&Open{}))
	require.Equal(t, Off{}, m.State())
	require.Equal(t, []Action{&DeskIn{}, &C2In{}, &S2In{}, &DeskOut{}, &Done{}}, rec.Actions)

	// One region final: the regions rest where they are resumed.
	data, err = m.Save()
	require.NoError(t, err)
	one := strings.Replace(string(data), ` + "`" + `{"state":"desk","region":"slip","leaf":"s2"}` + "`" + `, ` + "`" + `{"state":"desk","region":"slip","leaf":"s1"}` + "`" + `, 1)
	require.NotEqual(t, string(data), one)
	m, err = Load(Config{Behavior: b, Handler: &Recorder{}}, []byte(one))
	require.NoError(t, err)
	require.NoError(t, m.HandleEvent(&Open{}))
	require.Equal(t, Desk{Cash: StateC2, Slip: StateS1}, m.State())
}
`

// TestDeepHistoryResumesFinal generates the till chart of the export's
// differential test (a deep history that may remember every region of a
// parallel state final) into a module of its own and runs a hand-written
// test there: the memory is saved, loaded and resumed, and the done
// transition follows.
func TestDeepHistoryResumesFinal(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	src, err := os.ReadFile(filepath.Join("..", "export", "testdata", "refused", "till", "till.yaml"))
	require.NoError(t, err)
	dir := tempModule(t)
	generateIn(t, dir, "till", src, map[string]string{"till/resume_test.go": finalResumeTest})
	out := goIn(t, dir, "test", "-count=1", "-v", "./till/")
	assert.Contains(t, out, "--- PASS: TestResumeFinalAfterLoad")
	assert.Contains(t, out, "--- PASS: TestSaved")
}

// nestedResumeTest is a hand-written test of the vault chart's generated
// machine: Live is left from On with Audio in A2, Video in V2b and Net in
// N2, saved, loaded into a new machine and switched on again, which
// enters Media before Audio and resumes every region's leaf; a saved
// memory naming a leaf of another region is refused.
const nestedResumeTest = `package vault

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestResumeNestedAfterLoad(t *testing.T) {
	rec := &Recorder{}
	m, err := New(Config{Handler: rec})
	require.NoError(t, err)
	for _, ev := range []Event{&Power{}, &Swap{}, &Next{}, &Flip{}, &Flip{}, &Power{}} {
		require.NoError(t, m.HandleEvent(ev))
	}
	data, err := m.Save()
	require.NoError(t, err)
	require.Contains(t, string(data), ` + "`" + `{"state":"live","region":"audio","leaf":"a2"},{"state":"live","region":"video","leaf":"v2b"},{"state":"live","region":"net","leaf":"n2"}` + "`" + `)
	rec = &Recorder{}
	m, err = Load(Config{Handler: rec}, data)
	require.NoError(t, err)
	require.NoError(t, m.HandleEvent(&Power{}))
	require.Equal(t, On{Audio: StateA2, Video: StateV2b, Net: StateN2}, m.State())
	require.Equal(t, []Action{&LiveIn{}, &OnIn{}, &MediaIn{}, &A2In{}, &V2In{}, &V2bIn{}, &N2In{}}, rec.Actions)

	bad := strings.Replace(string(data), ` + "`" + `"region":"audio","leaf":"a2"` + "`" + `, ` + "`" + `"region":"audio","leaf":"v1"` + "`" + `, 1)
	_, err = Load(Config{Handler: &Recorder{}}, []byte(bad))
	require.Error(t, err)
}
`

// TestDeepHistoryOverNestedSaved generates the vault chart of the
// export's differential test (deep histories over parallel states nested
// as regions) into a module of its own and runs a hand-written test
// there: what the history remembers of the nested regions is saved,
// loaded strictly and resumed.
func TestDeepHistoryOverNestedSaved(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	dir := tempModule(t)
	generateIn(t, dir, "vault", chartSpec(t, "vault"), map[string]string{"vault/resume_test.go": nestedResumeTest})
	out := goIn(t, dir, "test", "-count=1", "-v", "./vault/")
	assert.Contains(t, out, "--- PASS: TestResumeNestedAfterLoad")
	assert.Contains(t, out, "--- PASS: TestSaved")
}

// regionFinalTest is a hand-written test of the spool chart's generated
// machine: Running's done transition leaves it from Ended, which its
// history inside region Tape remembers; saved and loaded, a row into the
// history resumes Ended and the done transition follows in that step.
const regionFinalTest = `package spool

import (
	"testing"

	"github.com/stretchr/testify/require"
)

type spool struct{}

func (spool) Strong() bool { return true }

func TestResumeRegionFinalAfterLoad(t *testing.T) {
	m, err := New(Config{Behavior: spool{}, Handler: &Recorder{}})
	require.NoError(t, err)
	for _, ev := range []Event{&Power{}, &Play{}, &Stop{}} {
		require.NoError(t, m.HandleEvent(ev))
	}
	require.Equal(t, Deck{Tape: StateStopped, Radio: StateSilent}, m.State())
	data, err := m.Save()
	require.NoError(t, err)
	require.Contains(t, string(data), ` + "`" + `{"state":"running","leaf":"ended"}` + "`" + `)
	rec := &Recorder{}
	m, err = Load(Config{Behavior: spool{}, Handler: rec}, data)
	require.NoError(t, err)
	require.NoError(t, m.HandleEvent(&Play{}))
	require.Equal(t, Deck{Tape: StateStopped, Radio: StateSilent}, m.State())
	require.Equal(t, []Action{&RunIn{}, &RunOut{}, &Rewind{}}, rec.Actions)
}
`

// TestRegionHistoryResumesFinal generates the spool chart of the export's
// differential test (histories beside done transitions inside regions)
// into a module of its own and runs a hand-written test there: the final
// state remembered is saved, loaded and resumed, and the done follows.
func TestRegionHistoryResumesFinal(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	dir := tempModule(t)
	generateIn(t, dir, "spool", chartSpec(t, "spool"), map[string]string{"spool/resume_test.go": regionFinalTest})
	out := goIn(t, dir, "test", "-count=1", "-v", "./spool/")
	assert.Contains(t, out, "--- PASS: TestResumeRegionFinalAfterLoad")
	assert.Contains(t, out, "--- PASS: TestSaved")
}
