package fsmrt_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// remembering is the toy machine with a composite state "work" around
// both its leaves (kinds 1 and 2), which has a history.
var remembering = func() fsmrt.Desc[stateKind, eventKind, actionKind] {
	d := desc
	d.Shape = "sha256:toy-history"
	d.History = []fsmrt.HistoryOf[stateKind]{{State: "work", First: 1, Leaves: []string{"idle", "busy"}}}
	return d
}()

// loadHistory loads data with the toy machine d, returning its state and
// what it remembers.
func loadHistory(d *fsmrt.Desc[stateKind, eventKind, actionKind], data []byte) (json.RawMessage, []stateKind, error) {
	hist := make([]stateKind, len(d.History))
	state, err := fsmrt.LoadStateHistory(d, data, nil, nil, hist, func(raw []byte) (json.RawMessage, error) {
		_, err := fsmrt.Unmarshal(d, "state", raw, toyStates)
		return raw, err
	})
	return state, hist, err
}

// TestSaveLoadHistory saves what a machine remembers and loads it back,
// and saves nothing when it remembers nothing.
func TestSaveLoadHistory(t *testing.T) {
	t.Parallel()
	data, err := remembering.SaveHistory(busy{N: 7}, nil, 0, []stateKind{2})
	require.NoError(t, err)
	assert.JSONEq(t, `{"format":1,"machine":"Toy","shape":"sha256:toy-history","state":{"kind":"busy","N":7},
		"history":[{"state":"work","leaf":"busy"}]}`, string(data))
	state, hist, err := loadHistory(&remembering, data)
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"busy","N":7}`, string(state))
	assert.Equal(t, []stateKind{2}, hist)

	data, err = remembering.SaveHistory(busy{N: 7}, nil, 0, []stateKind{0})
	require.NoError(t, err)
	assert.NotContains(t, string(data), `"history":`)
	_, hist, err = loadHistory(&remembering, data)
	require.NoError(t, err)
	assert.Equal(t, []stateKind{0}, hist, "nothing remembered")

	_, err = remembering.SaveHistory(busy{N: 7}, nil, 0, []stateKind{5})
	assert.ErrorContains(t, err, "leaf 5 is not inside it")
}

// TestLoadHistoryStrictly refuses what a saved machine remembers when it
// is not what this revision's machine can remember, naming it.
func TestLoadHistoryStrictly(t *testing.T) {
	t.Parallel()
	const base = `{"format":1,"machine":"Toy","shape":"sha256:toy-history","state":{"kind":"idle"}`
	for _, tc := range []struct {
		name, history, want string
	}{
		{"a state without history", `[{"state":"rest","leaf":"idle"}]`, `a history of state "rest", which is no state with a history in this revision`},
		{"a leaf not inside it", `[{"state":"work","leaf":"gone"}]`, `the history of state "work" remembers "gone", which is no state inside it`},
		{"twice", `[{"state":"work","leaf":"idle"},{"state":"work","leaf":"busy"}]`, `two histories of state "work"`},
		{"an unknown member", `[{"state":"work","leaf":"idle","at":1}]`, `unknown field "at"`},
		{"a member in another case", `[{"state":"work","Leaf":"idle"}]`, `"Leaf" is not "leaf"`},
		{"not a list", `{"state":"work"}`, `history`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := loadHistory(&remembering, []byte(base+`,"history":`+tc.history+`}`))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// A machine without history refuses data that remembers one, rather
	// than drop it.
	_, err := load(&desc, []byte(base+`,"history":[{"state":"work","leaf":"idle"}]}`), nil, nil)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "it remembers a history, and no state of this machine has one"), err.Error())
}

// TestLoadHistoryRenamed loads what a machine saved before its composite
// state and a leaf inside it were renamed (renamed_from) remembers.
func TestLoadHistoryRenamed(t *testing.T) {
	t.Parallel()
	d := remembering
	d.History = []fsmrt.HistoryOf[stateKind]{{State: "work", First: 1, Leaves: []string{"idle", "busy"}, Was: []string{"job"}, LeavesWas: map[string]string{"working": "busy"}}}
	_, hist, err := loadHistory(&d, []byte(`{"format":1,"machine":"Toy","shape":"sha256:old","state":{"kind":"idle"},"history":[{"state":"job","leaf":"working"}]}`))
	require.NoError(t, err)
	assert.Equal(t, []stateKind{2}, hist)
}

// deepRemembering is the toy machine whose "work" keeps a deep history
// over a parallel state, busy (kind 2), of whose region "lane" it
// remembers a leaf too (the toy's leaves stand for the region's).
var deepRemembering = func() fsmrt.Desc[stateKind, eventKind, actionKind] {
	d := remembering
	d.History = []fsmrt.HistoryOf[stateKind]{
		{State: "work", First: 1, Leaves: []string{"idle", "busy"}},
		{State: "work", First: 1, Leaves: []string{"idle", "busy"}, Region: "lane", RegionWas: []string{"track"}, Parallel: 2, Of: 0, Restless: []string{"busy"}},
	}
	return d
}()

// TestSaveLoadRegionHistory saves the leaf a deep history remembers of a
// region, with the parallel state it remembers, and loads it back; a
// region's leaf remembered from an earlier visit, when the history now
// remembers another leaf, is not saved.
func TestSaveLoadRegionHistory(t *testing.T) {
	t.Parallel()
	data, err := deepRemembering.SaveHistory(busy{N: 7}, nil, 0, []stateKind{2, 1})
	require.NoError(t, err)
	assert.JSONEq(t, `{"format":1,"machine":"Toy","shape":"sha256:toy-history","state":{"kind":"busy","N":7},
		"history":[{"state":"work","leaf":"busy"},{"state":"work","region":"lane","leaf":"idle"}]}`, string(data))
	_, hist, err := loadHistory(&deepRemembering, data)
	require.NoError(t, err)
	assert.Equal(t, []stateKind{2, 1}, hist)

	data, err = deepRemembering.SaveHistory(busy{N: 7}, nil, 0, []stateKind{1, 2})
	require.NoError(t, err)
	assert.JSONEq(t, `{"format":1,"machine":"Toy","shape":"sha256:toy-history","state":{"kind":"busy","N":7},
		"history":[{"state":"work","leaf":"idle"}]}`, string(data), "the region's leaf is forgotten")

	_, hist, err = loadHistory(&deepRemembering, []byte(`{"format":1,"machine":"Toy","shape":"sha256:old","state":{"kind":"idle"},
		"history":[{"state":"work","leaf":"busy"},{"state":"work","region":"track","leaf":"idle"}]}`))
	require.NoError(t, err, "a region renamed")
	assert.Equal(t, []stateKind{2, 1}, hist)
}

// TestLoadRegionHistoryStrictly refuses what a saved machine remembers of
// a region when this revision's deep history cannot remember it.
func TestLoadRegionHistoryStrictly(t *testing.T) {
	t.Parallel()
	const base = `{"format":1,"machine":"Toy","shape":"sha256:toy-history","state":{"kind":"idle"}`
	for _, tc := range []struct {
		name, history, want string
	}{
		{"an unknown region", `[{"state":"work","leaf":"busy"},{"state":"work","region":"road","leaf":"idle"}]`, `remembers region "road", which is no region of a parallel state its deep history holds`},
		{"a region twice", `[{"state":"work","leaf":"busy"},{"state":"work","region":"lane","leaf":"idle"},{"state":"work","region":"lane","leaf":"busy"}]`, `two histories of region "lane" of state "work"`},
		{"without its parallel state", `[{"state":"work","leaf":"idle"},{"state":"work","region":"lane","leaf":"idle"}]`, `remembers region "lane", but not the parallel state the region is in`},
		{"alone", `[{"state":"work","region":"lane","leaf":"idle"}]`, `remembers region "lane", but not the parallel state`},
		{"a leaf not inside it", `[{"state":"work","leaf":"busy"},{"state":"work","region":"lane","leaf":"gone"}]`, `remembers "gone", which is no state inside it`},
		{"a leaf never rested in", `[{"state":"work","leaf":"busy"},{"state":"work","region":"lane","leaf":"busy"}]`, `remembers "busy", a state the machine never rests in`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := loadHistory(&deepRemembering, []byte(base+`,"history":`+tc.history+`}`))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// A machine whose history remembers no region refuses one.
	_, _, err := loadHistory(&remembering, []byte(base+`,"history":[{"state":"work","leaf":"busy"},{"state":"work","region":"lane","leaf":"idle"}]}`))
	assert.ErrorContains(t, err, `remembers region "lane", which is no region`)
}

// TestLoadRegionHistoryAllFinal refuses a memory that holds every region
// of a parallel state with a done transition in a final leaf, and loads
// one that holds some of them so.
func TestLoadRegionHistoryAllFinal(t *testing.T) {
	t.Parallel()
	d := remembering
	d.History = []fsmrt.HistoryOf[stateKind]{
		{State: "work", First: 1, Leaves: []string{"idle", "busy"}},
		{State: "work", First: 1, Leaves: []string{"idle", "busy"}, Region: "lane", Parallel: 2, Of: 0, Finals: []string{"busy"}},
		{State: "work", First: 1, Leaves: []string{"idle", "busy"}, Region: "road", Parallel: 2, Of: 0, Finals: []string{"busy"}},
	}
	const base = `{"format":1,"machine":"Toy","shape":"sha256:toy-history","state":{"kind":"idle"},"history":[{"state":"work","leaf":"busy"}`
	for _, tc := range []struct {
		name, regions, want string
	}{
		{"one final", `,{"state":"work","region":"lane","leaf":"busy"},{"state":"work","region":"road","leaf":"idle"}`, ""},
		{"every region final", `,{"state":"work","region":"lane","leaf":"busy"},{"state":"work","region":"road","leaf":"busy"}`, `remembers every region of a parallel state in a final state`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := loadHistory(&d, []byte(base+tc.regions+`]}`))
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
