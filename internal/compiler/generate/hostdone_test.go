package generate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// draftTest is a hand-written test of the draft chart's generated machine:
// Editing, a parallel state inside region Work, takes its done transition
// in the step that puts the last of its regions in a final state, after
// that step's exits, actions and entries, and Load refuses Editing with
// every region final.
const draftTest = `package draft

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDraftDone(t *testing.T) {
	rec := &Recorder{}
	m, err := New(Config{Handler: rec})
	require.NoError(t, err)
	for _, ev := range []Event{&Go{}, &Edit{}, &Save{}} {
		require.NoError(t, m.HandleEvent(ev))
	}
	require.Equal(t, On{Work: StateEditing, Text: StateSaved, Preview: StateHidden, Net: StateOffline}, m.State())
	saved, err := m.Save()
	require.NoError(t, err)

	// Show, then Approve ends Preview, the last region of Editing: the
	// done transition follows in that step, offline to Browse.
	require.NoError(t, m.HandleEvent(&Show{}))
	rec.Actions = nil
	require.NoError(t, m.HandleEvent(&Approve{}))
	require.Equal(t, On{Work: StateBrowse, Net: StateOffline}, m.State())
	require.Equal(t, []Action{&CancelTimer{Timer: 1}, &ShowOut{}, &Approving{}, &EditOut{}, &DeskOut{}, &Shelve{}, &BrowseIn{}}, rec.Actions)

	// Finish ends both regions at once; online, the done transition ends
	// Work in Published, and Quit then ends Net: On's done follows.
	for _, ev := range []Event{&Edit{}, &Show{}, &Link{}} {
		require.NoError(t, m.HandleEvent(ev))
	}
	rec.Actions = nil
	require.NoError(t, m.HandleEvent(&Finish{}))
	require.Equal(t, On{Work: StatePublished, Net: StateOnline}, m.State())
	require.Equal(t, []Action{&CancelTimer{Timer: 2}, &ShowOut{}, &TypeOut{}, &EditOut{}, &DeskOut{}, &Publish{}}, rec.Actions)
	rec.Actions = nil
	require.NoError(t, m.HandleEvent(&Quit{}))
	require.Equal(t, Off{}, m.State())
	require.Equal(t, []Action{&OnlineOut{}, &OnOut{}, &Closed{}}, rec.Actions)

	_, err = Load(Config{Handler: &Recorder{}}, []byte(strings.Replace(string(saved), ` + "`" + `"preview":"hidden"` + "`" + `, ` + "`" + `"preview":"approved"` + "`" + `, 1)))
	require.ErrorContains(t, err, "cannot restore On: every region of Editing is in a final state, in which Editing takes its done transition at once")
}
`

// TestHostedDoneRuns generates the draft chart of the export's
// differential test (a parallel state inside a region's state, with a
// done transition) into a module of its own and runs a hand-written test
// there, beside the generated ones.
func TestHostedDoneRuns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	dir := tempModule(t)
	generateIn(t, dir, "draft", chartSpec(t, "draft"), map[string]string{"draft/draft_done_test.go": draftTest})
	out := goIn(t, dir, "test", "-count=1", "-v", "./draft/")
	assert.Contains(t, out, "--- PASS: TestDraftDone")
	assert.Contains(t, out, "--- PASS: TestRules")
	assert.Contains(t, out, "--- PASS: TestSaved")
}
