package generate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// docketTest is a hand-written test of the docket chart's generated
// machine: one Tick ends Pre's Pc, the last region of Editing (a parallel
// state inside region Work) and Net's Conn at once, and their done
// transitions follow in the order SCXML raises their done events
// (SCXML 1.0 §3.13): Pc's, Editing's, Conn's (through Check, transient),
// then Desk's, which Editing's done raised, and On's.
const docketTest = `package docket

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDocketOrder(t *testing.T) {
	rec := &Recorder{}
	m, err := New(Config{Handler: rec})
	require.NoError(t, err)
	for _, ev := range []Event{&Go{}, &Fill{}, &Dial{}, &Edit{}, &Show{}} {
		require.NoError(t, m.HandleEvent(ev))
	}
	require.Equal(t, On{Pre: StatePa, Work: StateEditing, Text: StateTyping, Preview: StateShown, Net: StateC1}, m.State())
	rec.Actions = nil
	require.NoError(t, m.HandleEvent(&Tick{}))
	require.Equal(t, Off{}, m.State())
	require.Equal(t, []Action{&SavedIn{}, &PreFirst{}, &EditOut{}, &Edited{}, &NetAfterEdit{}, &Checked{}, &DeskOut{}, &DeskAfterNet{}, &OnOut{}, &AllDone{}}, rec.Actions)
}
`

// TestHostedDoneOrder generates the docket chart of the export's
// differential test into a module of its own and runs a hand-written
// test there: the done transition of a parallel state inside a region
// is taken among the other regions' in the order their done events were
// raised.
func TestHostedDoneOrder(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	dir := tempModule(t)
	generateIn(t, dir, "docket", chartSpec(t, "docket"), map[string]string{"docket/docket_order_test.go": docketTest})
	out := goIn(t, dir, "test", "-count=1", "-v", "./docket/")
	assert.Contains(t, out, "--- PASS: TestDocketOrder")
	assert.Contains(t, out, "--- PASS: TestRules")
}
