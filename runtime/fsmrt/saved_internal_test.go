package fsmrt

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kind is a kind of the test machine.
type kind uint8

func (k kind) String() string { return KindName(k, "kind", []string{"Busy"}) }

// referenceSave is Save as it was: the saved form through json.Marshal.
func referenceSave(d *Desc[kind, kind, kind], state any, timers []Timer, last TimerID) ([]byte, error) {
	st, err := json.Marshal(state)
	if err != nil {
		return nil, err
	}
	return d.saveSlow(st, timers, last)
}

// kinded is a state that marshals itself as generated states do.
type kinded struct {
	Name  string    `json:"name"`
	At    time.Time `json:"at"`
	Count int       `json:"count"`
}

func (k kinded) MarshalJSON() ([]byte, error) {
	type fields kinded
	return MarshalKind("busy", fields(k))
}

// raw is a state whose MarshalJSON returns its bytes as they are.
type raw string

func (r raw) MarshalJSON() ([]byte, error) {
	if r == "fail" {
		return nil, errors.New("no JSON")
	}
	return []byte(r), nil
}

// ptrState marshals itself through a pointer.
type ptrState struct{ N int }

func (p *ptrState) MarshalJSON() ([]byte, error) { return []byte(`{"kind":"p","n":1}`), nil }

// TestSaveAsMarshal checks that Save writes what json.Marshal of the saved
// form writes, byte for byte, and fails where it fails.
func TestSaveAsMarshal(t *testing.T) {
	d := &Desc[kind, kind, kind]{Package: "toy", Machine: "Toy", Shape: "sha256:abc",
		Timers: []TimerOf[kind]{{State: "busy"}, {State: "odd <state>", Timer: "re\"minder"}}}
	at := time.Date(2026, 11, 26, 3, 30, 0, 123456789, time.FixedZone("CET", 3600))
	states := []any{
		kinded{Name: "plain", At: at, Count: 3},
		kinded{Name: "<html> & \"quotes\" \\ tab\t caf\u00e9 \u2028 \xff", At: at},
		kinded{Name: "0 3 1 1 *"},
		raw(`{"kind":"x","a":[1, 2]}`), raw(`{"kind":"x"}`), raw(` {"kind":"x"}`), raw(`{"kind":"<"}`),
		raw(`{"kind":"\u2028"}`), raw("{\"kind\":\"\xe2\x80\xa9\"}"), raw(`{"kind":"x"`), raw("fail"), raw(`"s"`),
		raw(`{"kind":"a\"b c"}`), raw(`{"kind":"a\\"}`),
		struct{ A, B int }{1, 2}, map[string]any{"kind": "m", "x": []int{1}}, (*ptrState)(nil), &ptrState{}, ptrState{},
		nil, make(chan int),
	}
	timerSets := [][]Timer{
		nil,
		{{}, {}},
		{{ID: 3, Delay: 30 * time.Minute, Deadline: at}, {}},
		{{ID: 1, Delay: time.Second}, {ID: 2, Delay: 90 * time.Hour, Deadline: at.Add(-time.Hour)}},
		{{ID: 1, Delay: time.Second, Deadline: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, {}},
	}
	for _, state := range states {
		for _, timers := range timerSets {
			for _, last := range []TimerID{0, 4} {
				want, wantErr := referenceSave(d, state, timers, last)
				got, err := d.Save(state, timers, last)
				if wantErr != nil {
					require.Error(t, err, "%#v %v", state, timers)
					assert.Contains(t, err.Error(), wantErr.Error())
					continue
				}
				require.NoError(t, err, "%#v %v", state, timers)
				assert.Equal(t, string(want), string(got), "%#v %v", state, timers)
			}
		}
	}
}

func TestCompactJSON(t *testing.T) {
	for in, want := range map[string]bool{
		`{"a":1}`: true, `{"a": 1}`: false, `{"a":"x y"}`: true, `{"a":"\" "}`: true, `{"a":"\\"}`: true,
		`{"a":"<"}`: false, `{"a":"\u003c"}`: true, "{\"a\":\"\xe2\x80\xa8\"}": false, `[1,2]`: true, ` 1`: false,
		`{"a":1}x`: false, `{"a"`: false, "\"\xe2\x80\xa7\"": true,
	} {
		assert.Equal(t, want, compactJSON([]byte(in)), in)
	}
}

var loadSeeds = []string{
	`{"format":1,"machine":"Toy","shape":"sha256:abc","state":{"kind":"busy","n":1},"timers":[{"state":"busy","id":3,"delay":"30m0s","deadline":"2026-11-26T02:30:00Z"}],"last_timer":4}`,
	`{"format":1,"machine":"Toy","shape":"sha256:abc","state":{"kind":"idle"}}`,
	`{"format":1,"machine":"Toy","shape":"x","state":{"kind":"busy"},"timers":[{"state":"busy","id":1,"delay":"1s"},{"state":"odd","id":2,"delay":"2s","deadline":"2026-11-26T03:30:00+01:00"}],"last_timer":2}`,
	`{"format":1,"machine":"Toy","shape":"x","state":{"kind":"busy"},"timers":[{"state":"working","id":1,"delay":"1s"}],"last_timer":1}`,
	`{"format":1,"machine":"Toy","shape":"x","state":{"kind":"busy"},"timers":[{"state":"busy","id":1}],"last_timer":1}`,
	`{"format":1,"machine":"Toy","shape":"x","state":{"kind":"busy"},"timers":[{"state":"busy","id":1,"delay":"1s"},{"state":"busy","id":2,"delay":"1s"}],"last_timer":2}`,
	`{"format":1,"machine":"Toy","shape":"x","state":{"kind":"busy"},"timers":[{"state":"busy","id":5,"delay":"1s"}],"last_timer":2}`,
	`{"format":1,"machine":"Toy","shape":"x","state":{"kind":"busy"},"timers":[{"state":"busy","id":1,"delay":"1\u0073"}],"last_timer":1}`,
	`{"format":1,"machine":"T\u006fy","shape":null,"state":{"kind":"busy"},"timers":null,"last_timer":0}`,
	`{"format":1.0,"machine":"Toy","shape":"x","state":{"kind":"busy"}}`, `{"format":2,"machine":"Toy","shape":"x","state":{}}`,
	`{"format":1,"machine":"Toy","shape":"x","state":null}`, `{"format":1,"machine":"Door","shape":"x","state":{}}`,
	`{"format":1,"machine":"Toy","shape":"x","state":{},"last_timer":-1}`, `{"format":1,"machine":"Toy","state":{},"Shape":"x"}`,
	`{"format":1,"machine":"Toy","shape":"x","state":{},"timers":[{"state":"busy","id":1,"delay":"1s","deadline":null}],"last_timer":1}`,
	`{"format":1,"machine":"Toy","shape":"x","state":{},"timers":[{"state":"busy","id":1,"delay":"1s","deadline":"soon"}],"last_timer":1}`,
	`{"format":1,"machine":"Toy","shape":"x","state":{},"timers":[1],"last_timer":1}`, `{"kind":"busy"}`, `[`, ``,
	// Several timers of one state, named by their ids in the spec.
	`{"format":1,"machine":"Toy","shape":"x","state":{"kind":"busy"},"timers":[{"state":"busy","id":1,"delay":"1s"},{"state":"busy","timer":"reminder","id":2,"delay":"2s","deadline":"2026-11-26T03:30:00Z"}],"last_timer":2}`,
	`{"format":1,"machine":"Toy","shape":"x","state":{"kind":"busy"},"timers":[{"state":"busy","timer":"nudge","id":1,"delay":"1s"}],"last_timer":1}`,
	`{"format":1,"machine":"Toy","shape":"x","state":{"kind":"busy"},"timers":[{"state":"working","timer":"reminder","id":1,"delay":"1s"}],"last_timer":1}`,
	`{"format":1,"machine":"Toy","shape":"x","state":{"kind":"busy"},"timers":[{"state":"busy","timer":"remind\u0065r","id":1,"delay":"1s"}],"last_timer":1}`,
	`{"format":1,"machine":"Toy","shape":"x","state":{"kind":"busy"},"timers":[{"state":"busy","timer":7,"id":1,"delay":"1s"}],"last_timer":1}`,
}

// FuzzLoad checks that whatever loadFast takes, loadSlow (the strict
// decoding it stands in for) reads the same.
func FuzzLoad(f *testing.F) {
	for _, s := range loadSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkLoad(t, data) })
}

func TestLoadFast(t *testing.T) {
	fast := 0
	for _, s := range loadSeeds {
		if checkLoad(t, []byte(s)) {
			fast++
		}
	}
	assert.Equal(t, 4, fast, "the seeds loadFast takes")
}

// checkLoad compares load with loadSlow on data; it reports whether
// loadFast took it.
func checkLoad(t *testing.T, data []byte) bool {
	t.Helper()
	d := &Desc[kind, kind, kind]{Package: "toy", Machine: "Toy", Shape: "sha256:abc",
		Timers: []TimerOf[kind]{{State: "busy", Was: []string{"working"}}, {State: "odd"}, {State: "busy", Timer: "reminder", Was: []string{"working"}}}}
	fastTimers, slowTimers := make([]Timer, 3), make([]Timer, 3)
	var fastLast, slowLast TimerID
	state, ok := d.loadFast(data, fastTimers, &fastLast)
	want, err := d.loadSlow(data, slowTimers, &slowLast)
	if !ok {
		assert.Equal(t, make([]Timer, 3), fastTimers, "%s: loadFast changed nothing", data)
		return false
	}
	require.NoError(t, err, "%s: loadFast took it", data)
	assert.Equal(t, string(want), string(state), "%s", data)
	assert.Equal(t, slowTimers, fastTimers, "%s", data)
	assert.Equal(t, slowLast, fastLast, "%s", data)
	return true
}
