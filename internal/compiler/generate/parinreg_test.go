package generate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// hostedTest is a hand-written test of the hosted chart's generated
// machine: Work enters Editing, a parallel state inside it, whose regions
// join On's value while Work is in it; Save writes them, and Load reads
// them strictly, refusing a region of Editing in no state while Work is
// in Editing and one in a state while Work is not.
const hostedTest = `package hosted

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHostedSaved(t *testing.T) {
	rec := &Recorder{}
	m, err := New(Config{Handler: rec})
	require.NoError(t, err)
	require.NoError(t, m.HandleEvent(&Go{}))
	require.Equal(t, On{Work: StateBrowse, Net: StateOffline}, m.State())
	browsing, err := m.Save()
	require.NoError(t, err)
	require.NotContains(t, string(browsing), "text", "a region of Editing is not saved while Work is not in it")

	rec.Actions = nil
	require.NoError(t, m.HandleEvent(&Edit{}))
	require.Equal(t, On{Work: StateEditing, Text: StateTyping, Preview: StateHidden, Net: StateOffline}, m.State())
	// Editing's timer starts after its entry, before its regions'.
	require.Equal(t, []Action{&BrowseOut{}, &DeskIn{}, &EditIn{}, &StartTimer{Timer: 1, Delay: 30 * time.Second}, &TypeIn{}}, rec.Actions)
	editing, err := m.Save()
	require.NoError(t, err)
	require.Contains(t, string(editing), ` + "`" + `"work":"editing","text":"typing","preview":"hidden"` + "`" + `)
	m, err = Load(Config{Handler: &Recorder{}}, editing)
	require.NoError(t, err)
	require.Equal(t, On{Work: StateEditing, Text: StateTyping, Preview: StateHidden, Net: StateOffline}, m.State())

	rec = &Recorder{}
	m, err = Load(Config{Handler: rec}, editing)
	require.NoError(t, err)
	require.NoError(t, m.HandleEvent(&Close{}))
	require.Equal(t, On{Work: StateBrowse, Net: StateOffline}, m.State())
	// Editing's regions are left first, then its timer is cancelled
	// before its exit.
	require.Equal(t, []Action{&TypeOut{}, &CancelTimer{Timer: 1}, &EditOut{}, &DeskOut{}, &BrowseIn{}}, rec.Actions)

	for _, tt := range []struct {
		name, data, want string
	}{
		{"a region of Editing in a state while Work is not in it", strings.Replace(string(browsing), ` + "`" + `"work":"browse"` + "`" + `, ` + "`" + `"work":"browse","text":"saved"` + "`" + `, 1), "region Text of Editing is in Saved, but region Work is not in Editing: give it no state"},
		{"a region of Editing in no state while Work is in it", strings.Replace(string(editing), ` + "`" + `"text":"typing",` + "`" + `, "", 1), "region Text of Editing is in no state, not one of Typing and Saved"},
		{"a region of Editing in a state of another region", strings.Replace(string(editing), ` + "`" + `"text":"typing"` + "`" + `, ` + "`" + `"text":"hidden"` + "`" + `, 1), "region Text of Editing is in Hidden, not one of Typing and Saved"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(Config{Handler: &Recorder{}}, []byte(tt.data))
			require.ErrorContains(t, err, tt.want)
		})
	}
}
`

// TestHostedParallelSaved generates the hosted chart of the export's
// differential test (a parallel state inside a region's state) into a
// module of its own and runs a hand-written test there: its regions are
// saved while their host region is in it, and loaded strictly.
func TestHostedParallelSaved(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	dir := tempModule(t)
	generateIn(t, dir, "hosted", chartSpec(t, "hosted"), map[string]string{"hosted/hosted_saved_test.go": hostedTest})
	out := goIn(t, dir, "test", "-count=1", "-v", "./hosted/")
	assert.Contains(t, out, "--- PASS: TestHostedSaved")
	assert.Contains(t, out, "--- PASS: TestRules")
	assert.Contains(t, out, "--- PASS: TestSaved")
}
