package player_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/examples/player"
)

// send feeds the events to m, failing the test on an error.
func send(t *testing.T, m *player.Machine, evs ...player.Event) {
	t.Helper()
	for _, ev := range evs {
		require.NoError(t, m.HandleEvent(ev), "%T", ev)
	}
}

// TestDeepHistorySurvivesLoad switches the player off while it plays fast,
// saves it, loads it in a new machine (a restart), and switches it on: it
// resumes Fast, entering On and Playing on the way (UML deep history).
func TestDeepHistorySurvivesLoad(t *testing.T) {
	t.Parallel()
	rec := &player.Recorder{}
	m, err := player.New(player.Config{Handler: rec})
	require.NoError(t, err)
	send(t, m, &player.Power{}, &player.Next{}, &player.Next{}, &player.Power{})
	require.Equal(t, player.StateOff, m.Kind())
	data, err := m.Save()
	require.NoError(t, err)
	assert.Contains(t, string(data), `"history":[{"state":"on","leaf":"fast"}]`)

	rec2 := &player.Recorder{}
	m2, err := player.Load(player.Config{Handler: rec2}, data)
	require.NoError(t, err)
	send(t, m2, &player.Power{})
	assert.Equal(t, player.StateFast, m2.Kind())
	assert.Equal(t, []player.Action{&player.PowerOn{}, &player.Spin{}}, rec2.Actions)

	// A machine made by New remembers nothing: On is entered through its
	// initial child.
	m3, err := player.New(player.Config{Handler: &player.Recorder{}})
	require.NoError(t, err)
	send(t, m3, &player.Power{})
	assert.Equal(t, player.StateStopped, m3.Kind())
}

// TestShallowHistory leaves the menu on its second page, deep inside it,
// and opens it again: it shows that page from its start (UML shallow
// history), and remembers that across a save.
func TestShallowHistory(t *testing.T) {
	t.Parallel()
	m, err := player.New(player.Config{Handler: &player.Recorder{}})
	require.NoError(t, err)
	send(t, m, &player.Power{}, &player.Open{}, &player.Next{}, &player.Next{})
	require.Equal(t, player.StateColour, m.Kind())
	send(t, m, &player.Back{})
	require.Equal(t, player.StateStopped, m.Kind())
	data, err := m.Save()
	require.NoError(t, err)
	m, err = player.Load(player.Config{Handler: &player.Recorder{}}, data)
	require.NoError(t, err)
	send(t, m, &player.Open{})
	assert.Equal(t, player.StateSize, m.Kind(), "Video is resumed through its initial child")
}

// TestLoadHistoryStrictly feeds Load saved machines whose history is
// wrong: each is refused, naming what is wrong; one saved before the
// history existed loads, remembering nothing.
func TestLoadHistoryStrictly(t *testing.T) {
	t.Parallel()
	m, err := player.New(player.Config{Handler: &player.Recorder{}})
	require.NoError(t, err)
	data, err := m.Save()
	require.NoError(t, err)
	base := strings.TrimSuffix(string(data), "}")
	for _, tc := range []struct {
		name, history, want string
	}{
		{"unknown state", `[{"state":"off","leaf":"off"}]`, `a history of state "off", which is no state with a history`},
		{"leaf outside", `[{"state":"menu","leaf":"fast"}]`, `remembers "fast", which is no state inside it`},
		{"twice", `[{"state":"on","leaf":"fast"},{"state":"on","leaf":"normal"}]`, `two histories of state "on"`},
		{"unknown member", `[{"state":"on","leaf":"fast","when":1}]`, `unknown field "when"`},
		{"member case", `[{"State":"on","leaf":"fast"}]`, `"State" is not "state"`},
		// Playing's done transition leaves Ended in the step that enters
		// it, and stays inside On: On's history never remembers it.
		{"never at rest", `[{"state":"on","leaf":"ended"}]`, `remembers "ended", a state the machine never rests in`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := player.Load(player.Config{Handler: &player.Recorder{}}, []byte(base+`,"history":`+tc.history+`}`))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	old, err := player.Load(player.Config{Handler: &player.Recorder{}}, data)
	require.NoError(t, err)
	send(t, old, &player.Power{})
	assert.Equal(t, player.StateStopped, old.Kind())
}

// TestDoneTransition ends a track: Playing's final state is entered and,
// in the same step, Playing's done transition leaves it for Stopped, with
// the exits, the transition's action and the entries in UML's order.
func TestDoneTransition(t *testing.T) {
	t.Parallel()
	rec := &player.Recorder{}
	m, err := player.New(player.Config{Handler: rec})
	require.NoError(t, err)
	var steps []string
	m.SetObserver(func(s player.Step) { steps = append(steps, s.From.String()+" -> "+s.To.String()) })
	send(t, m, &player.Power{}, &player.Next{})
	rec.Actions = nil
	steps = nil
	send(t, m, &player.End{})
	assert.Equal(t, player.StateStopped, m.Kind())
	// End is Playing's rule into its own substate: Playing is left and
	// entered again (Brake, Spin); done then leaves it (Brake) and rewinds.
	assert.Equal(t, []player.Action{&player.Brake{}, &player.Spin{}, &player.Brake{}, &player.Rewind{}}, rec.Actions)
	assert.Equal(t, []string{"Normal -> Ended", "Ended -> Stopped"}, steps, "two steps observed, one HandleEvent")
}
