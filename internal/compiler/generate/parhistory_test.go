package generate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// deckHistoryTest is a hand-written test of the machine of the golden
// archive parallel_history.txtar: histories inside the regions of its
// parallel state On, written when a region's rule leaves their state and
// when On is left, resumed by a later rule of the region, and saved and
// loaded strictly with the machine.
const deckHistoryTest = `package deck_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"example.com/deck"
)

// clear answers the guard clear: Tune resumes Tuned's history.
type clear struct{}

func (clear) Clear() bool { return true }

func config(rec *deck.Recorder) deck.Config { return deck.Config{Handler: rec, Behavior: clear{}} }

// plain returns the actions but the timers'.
func plain(actions []deck.Action) []deck.Action {
	var out []deck.Action
	for _, a := range actions {
		switch a.(type) {
		case *deck.StartTimer, *deck.CancelTimer:
		default:
			out = append(out, a)
		}
	}
	return out
}

func send(t *testing.T, m *deck.Machine, evs ...deck.Event) {
	t.Helper()
	for _, ev := range evs {
		require.NoError(t, m.HandleEvent(ev))
	}
}

func TestRegionHistoryAcrossOn(t *testing.T) {
	m, err := deck.New(config(&deck.Recorder{}))
	require.NoError(t, err)
	send(t, m, &deck.Power{}, &deck.Play{}, &deck.Speed{}, &deck.Turn{}, &deck.Tune{}, &deck.Flip{})
	require.Equal(t, deck.On{Tape: deck.StateBack, Radio: deck.StateFm}, m.State())
	send(t, m, &deck.Power{})
	data, err := m.Save()
	require.NoError(t, err)
	assert.Contains(t, string(data), ` + "`" + `"history":[{"state":"running","leaf":"back"},{"state":"tuned","leaf":"fm"}]` + "`" + `)

	rec := &deck.Recorder{}
	m, err = deck.Load(config(rec), data)
	require.NoError(t, err)
	send(t, m, &deck.Power{})
	assert.Equal(t, deck.On{Tape: deck.StateStopped, Radio: deck.StateSilent}, m.State(), "On is entered through its regions' initial states")
	rec.Actions = nil
	send(t, m, &deck.Play{})
	assert.Equal(t, deck.On{Tape: deck.StateFwd, Radio: deck.StateSilent}, m.State(), "shallow: Fast entered anew")
	assert.Equal(t, []deck.Action{&deck.RunIn{}}, plain(rec.Actions))
	rec.Actions = nil
	send(t, m, &deck.Tune{})
	assert.Equal(t, deck.On{Tape: deck.StateFwd, Radio: deck.StateFm}, m.State(), "deep: the very leaf")
	assert.Equal(t, []deck.Action{&deck.TunedIn{}, &deck.FmIn{}}, plain(rec.Actions))
}

func TestRegionHistoryWithinRegion(t *testing.T) {
	m, err := deck.New(config(&deck.Recorder{}))
	require.NoError(t, err)
	send(t, m, &deck.Power{}, &deck.Play{}, &deck.Speed{}, &deck.Stop{}, &deck.Tune{}, &deck.Seek{}, &deck.Mute{})
	require.Equal(t, deck.On{Tape: deck.StateStopped, Radio: deck.StateSilent}, m.State())
	send(t, m, &deck.Play{}, &deck.Tune{})
	assert.Equal(t, deck.On{Tape: deck.StateFwd, Radio: deck.StateScan}, m.State())
	// Kick leaves both composite states and resumes each at once.
	send(t, m, &deck.Turn{}, &deck.Kick{})
	assert.Equal(t, deck.On{Tape: deck.StateFwd, Radio: deck.StateScan}, m.State())
}

func TestRegionHistoryLoadsStrictly(t *testing.T) {
	m, err := deck.New(config(&deck.Recorder{}))
	require.NoError(t, err)
	data, err := m.Save()
	require.NoError(t, err)
	base := string(data[:len(data)-1])
	for history, want := range map[string]string{
		` + "`" + `[{"state":"running","leaf":"fm"}]` + "`" + `: ` + "`" + `remembers "fm", which is no state inside it` + "`" + `,
		` + "`" + `[{"state":"tape","leaf":"slow"}]` + "`" + `:  ` + "`" + `a history of state "tape", which is no state with a history` + "`" + `,
		` + "`" + `[{"state":"tuned","leaf":"am"},{"state":"tuned","leaf":"fm"}]` + "`" + `: ` + "`" + `two histories of state "tuned"` + "`" + `,
	} {
		_, err := deck.Load(config(&deck.Recorder{}), []byte(base+` + "`" + `,"history":` + "`" + `+history+"}"))
		require.Error(t, err, history)
		assert.Contains(t, err.Error(), want)
	}
}
`

// TestRegionHistorySaveLoad generates the machine of the golden archive
// parallel_history.txtar into a temporary module and runs a hand-written
// test of its histories inside regions there (deckHistoryTest).
func TestRegionHistorySaveLoad(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	ar, err := txtar.ParseFile("../emit/testdata/golden/parallel_history.txtar")
	require.NoError(t, err)
	dir := t.TempDir()
	requireCheckout(t, dir, "example.com/deck")
	for _, f := range ar.Files {
		if f.Name == "spec.yaml" {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "spec.yaml"), f.Data, 0o644))
		}
	}
	res, err := generate.Load(filepath.Join(dir, "spec.yaml"))
	require.NoError(t, err)
	require.NotNil(t, res.Machine, "%s", res.Diags)
	_, err = generate.Write(res.Outputs)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "deck_history_test.go"), []byte(deckHistoryTest), 0o644))
	out := goIn(t, dir, "test", "-count=1", "-run", "TestRegionHistory", "-v", "./...")
	for _, name := range []string{"TestRegionHistoryAcrossOn", "TestRegionHistoryWithinRegion", "TestRegionHistoryLoadsStrictly"} {
		require.True(t, strings.Contains(out, "--- PASS: "+name), "%s did not pass:\n%s", name, out)
	}
}
