package fsmrt_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// timed is the toy machine of fsmrt_test.go with a timer on Busy (kind 2).
var timed = func() fsmrt.Desc[stateKind, eventKind, actionKind] {
	d := desc
	d.Shape = "sha256:toy"
	d.Timers = []fsmrt.TimerOf[stateKind]{{State: "busy", First: 2, Last: 2, Was: []string{"working"}}}
	d.Renamed = map[string]map[string]string{"state busy": {"old_n": "N"}}
	return d
}()

// busy is a state of the toy machine, with a field.
type busy struct {
	N int
}

func (busy) MarshalJSON() ([]byte, error) { return []byte(`{"kind":"busy","N":7}`), nil }

func TestSaveLoad(t *testing.T) {
	deadline := time.Date(2026, 11, 26, 3, 30, 0, 0, time.FixedZone("CET", 3600))
	data, err := timed.Save(busy{N: 7}, []fsmrt.Timer{{ID: 3, Delay: 30 * time.Minute, Deadline: deadline}}, 4)
	require.NoError(t, err)
	assert.JSONEq(t, `{"format":1,"machine":"Toy","shape":"sha256:toy","state":{"kind":"busy","N":7},
		"timers":[{"state":"busy","id":3,"delay":"30m0s","deadline":"2026-11-26T02:30:00Z"}],"last_timer":4}`, string(data))

	timers := make([]fsmrt.Timer, 1)
	var last fsmrt.TimerID
	state, err := load(&timed, data, timers, &last)
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"busy","N":7}`, string(state))
	assert.Equal(t, fsmrt.TimerID(4), last)
	assert.Equal(t, fsmrt.TimerID(3), timers[0].ID)
	assert.Equal(t, 30*time.Minute, timers[0].Delay)
	assert.True(t, timers[0].Deadline.Equal(deadline))
	assert.Equal(t, time.UTC, timers[0].Deadline.Location())
	require.NoError(t, timed.CheckTimers(2, timers))
	assert.ErrorIs(t, timed.CheckTimers(1, timers), fsmrt.ErrTimerNotRunning)

	// A timer without a deadline (its state put with Restore) saves none.
	data, err = timed.Save(busy{N: 7}, []fsmrt.Timer{{ID: 1, Delay: time.Second}}, 1)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "deadline")
	timers = make([]fsmrt.Timer, 1)
	_, err = load(&timed, data, timers, &last)
	require.NoError(t, err)
	assert.True(t, timers[0].Deadline.IsZero())

	// The timer of a state saved under its old name (renamed_from) loads.
	timers = make([]fsmrt.Timer, 1)
	_, err = load(&timed, []byte(`{"format":1,"machine":"Toy","shape":"sha256:old","state":{"kind":"working"},
		"timers":[{"state":"working","id":2,"delay":"1s","deadline":"2026-11-26T02:30:00Z"}],"last_timer":2}`), timers, &last)
	require.NoError(t, err)
	assert.Equal(t, fsmrt.TimerID(2), timers[0].ID)
}

// twoTimers is the toy machine with two timers on Busy, the second with
// an id.
var twoTimers = func() fsmrt.Desc[stateKind, eventKind, actionKind] {
	d := timed
	d.Timers = []fsmrt.TimerOf[stateKind]{{State: "busy", First: 2, Last: 2}, {State: "busy", Timer: "reminder", First: 2, Last: 2}}
	return d
}()

// TestSaveLoadTimers checks that each of a state's timers saves under its
// state and id, and loads into its own slot with its own deadline.
func TestSaveLoadTimers(t *testing.T) {
	first := time.Date(2026, 11, 26, 3, 30, 0, 0, time.UTC)
	second := first.Add(-20 * time.Minute)
	data, err := twoTimers.Save(busy{N: 7}, []fsmrt.Timer{{ID: 3, Delay: 30 * time.Minute, Deadline: first}, {ID: 4, Delay: 10 * time.Minute, Deadline: second}}, 4)
	require.NoError(t, err)
	assert.JSONEq(t, `{"format":1,"machine":"Toy","shape":"sha256:toy","state":{"kind":"busy","N":7},
		"timers":[{"state":"busy","id":3,"delay":"30m0s","deadline":"2026-11-26T03:30:00Z"},
			{"state":"busy","timer":"reminder","id":4,"delay":"10m0s","deadline":"2026-11-26T03:10:00Z"}],"last_timer":4}`, string(data))

	// Saved in the other order, each timer still finds its slot.
	timers := make([]fsmrt.Timer, 2)
	var last fsmrt.TimerID
	_, err = load(&twoTimers, []byte(`{"format":1,"machine":"Toy","shape":"sha256:toy","state":{"kind":"busy","N":7},
		"timers":[{"state":"busy","timer":"reminder","id":4,"delay":"10m0s","deadline":"2026-11-26T03:10:00Z"},
			{"state":"busy","id":3,"delay":"30m0s","deadline":"2026-11-26T03:30:00Z"}],"last_timer":4}`), timers, &last)
	require.NoError(t, err)
	assert.Equal(t, []fsmrt.Timer{{ID: 3, Delay: 30 * time.Minute, Deadline: first}, {ID: 4, Delay: 10 * time.Minute, Deadline: second}}, timers)

	for name, tt := range map[string]struct{ data, want string }{
		"an id the state has not": {`[{"state":"busy","timer":"nudge","id":1,"delay":"1s"}]`, `timer "nudge" of state "busy", which is no timer of a state in this revision`},
		"one timer twice":         {`[{"state":"busy","timer":"reminder","id":1,"delay":"1s"},{"state":"busy","timer":"reminder","id":2,"delay":"1s"}]`, `two timers of state "busy" (timer "reminder")`},
	} {
		_, err := load(&twoTimers, []byte(`{"format":1,"machine":"Toy","shape":"sha256:toy","state":{"kind":"busy","N":7},"timers":`+tt.data+`,"last_timer":2}`), make([]fsmrt.Timer, 2), &last)
		assert.ErrorContains(t, err, tt.want, name)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"not JSON", `[`, "load a saved machine"},
		{"not an object", `[1]`, "want a JSON object, found an array"},
		{"two values", `{"format":1} {}`, "more than one JSON value"},
		{"no format", `{"machine":"Toy","shape":"x","state":{"kind":"idle"}}`, `no "format": this is not what Save saves`},
		{"a state alone", `{"kind":"idle"}`, `unknown field "kind": this is a state alone ("idle"), as MarshalJSON writes it, not what Save saves; restore it with UnmarshalState and Restore`},
		{"another format", `{"format":2,"machine":"Toy","shape":"x","state":{"kind":"idle"}}`, "format 2, but this version of fsmgen reads format 1"},
		{"another machine", `{"format":1,"machine":"Door","shape":"x","state":{"kind":"idle"}}`, `it is a "Door" machine, not a "Toy" one`},
		{"no state", `{"format":1,"machine":"Toy","shape":"x"}`, "no state"},
		{"unknown member", `{"format":1,"machine":"Toy","shape":"x","state":{"kind":"idle"},"regions":[]}`, `unknown field "regions"`},
		{"member in another case", `{"format":1,"Machine":"Toy","shape":"x","state":{"kind":"idle"}}`, `unknown field "Machine": "Machine" is not "machine": strict reading takes a member by its name in its exact case`},
		{"a misspelled member", `{"format":1,"machin":"Toy","shape":"x","state":{"kind":"idle"}}`, `unknown field "machin" (did you mean "machine"?)`},
		{"member twice", `{"format":1,"machine":"Toy","machine":"Toy","shape":"x","state":{"kind":"idle"}}`, `duplicate field "machine"`},
		{"a timer of a state without one", `{"format":1,"machine":"Toy","shape":"x","state":{"kind":"busy"},"timers":[{"state":"idle","id":1,"delay":"1s"}],"last_timer":1}`, `a timer of state "idle", which is no state with a timer in this revision`},
		{"two timers of a state", `{"format":1,"machine":"Toy","shape":"x","state":{"kind":"busy"},"timers":[{"state":"busy","id":1,"delay":"1s"},{"state":"busy","id":2,"delay":"1s"}],"last_timer":2}`, `two timers of state "busy"`},
		{"a timer not started", `{"format":1,"machine":"Toy","shape":"x","state":{"kind":"busy"},"timers":[{"state":"busy","id":5,"delay":"1s"}],"last_timer":2}`, "timer 5 of state \"busy\" is not one the machine started (the last was 2)"},
		{"a timer with the zero id", `{"format":1,"machine":"Toy","shape":"x","state":{"kind":"busy"},"timers":[{"state":"busy","id":0,"delay":"1s"}],"last_timer":2}`, "is not one the machine started"},
		{"a bad delay", `{"format":1,"machine":"Toy","shape":"x","state":{"kind":"busy"},"timers":[{"state":"busy","id":1,"delay":"soon"}],"last_timer":1}`, `timer 1: time: invalid duration "soon"`},
		{"a timer member unknown", `{"format":1,"machine":"Toy","shape":"x","state":{"kind":"busy"},"timers":[{"state":"busy","id":1,"delay":"1s","at":"x"}],"last_timer":1}`, `timer 1: unknown field "at"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var last fsmrt.TimerID
			_, err := load(&timed, []byte(tt.data), make([]fsmrt.Timer, 1), &last)
			require.Error(t, err)
			assert.ErrorContains(t, err, tt.want)
			assert.ErrorContains(t, err, "toy: load a saved machine")
		})
	}
	_, err := load(&desc, []byte(`{"format":1,"machine":"Toy","shape":"x","state":{"kind":"idle"},"last_timer":3}`), nil, nil)
	assert.ErrorContains(t, err, "it has timers, and this machine none")
}

// TestLoadStateErrors checks the errors of a saved state that does not
// load: they name the state, or the member, before any timer.
func TestLoadStateErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, data, want string
	}{
		{
			"a state removed since, with its timer running",
			`{"format":1,"machine":"Toy","shape":"sha256:old","state":{"kind":"paused"},"timers":[{"state":"paused","id":1,"delay":"1s"}],"last_timer":1}`,
			`toy: load a saved machine: state "paused" is no longer a state of machine Toy: it was removed in this revision, or renamed without its old name in renamed_from (saved with shape sha256:old; this revision's is sha256:toy: fsmgen diff says what changed)`,
		},
		{
			"a state that never was",
			`{"format":1,"machine":"Toy","shape":"sha256:toy","state":{"kind":"paused"}}`,
			`toy: load a saved machine: state "paused" is not a state of machine Toy`,
		},
		{
			"the kind in another case",
			`{"format":1,"machine":"Toy","shape":"sha256:toy","state":{"Kind":"busy"},"timers":[{"state":"busy","id":1,"delay":"1s"}],"last_timer":1}`,
			`toy: decode state: no "kind": "Kind" is not "kind": strict reading takes a member by its name in its exact case`,
		},
		{
			"a field in another case",
			`{"format":1,"machine":"Toy","shape":"sha256:old","state":{"kind":"busy","n":1}}`,
			`toy: decode state busy: unknown field "n": "n" is not "N": strict reading takes a member by its name in its exact case (saved with shape sha256:old;`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := load(&timed, []byte(tt.data), make([]fsmrt.Timer, 1), new(fsmrt.TimerID))
			require.Error(t, err)
			if strings.HasSuffix(tt.want, ";") {
				assert.ErrorContains(t, err, tt.want)
			} else {
				assert.EqualError(t, err, tt.want)
			}
		})
	}
	_, err := load(&timed, []byte(tests[0].data), make([]fsmrt.Timer, 1), new(fsmrt.TimerID))
	assert.ErrorIs(t, err, fsmrt.ErrUnknownKind)
}

// idle is the other state of the toy machine.
type idle struct{}

// toyStates decode the toy machine's states, Busy under its old name too.
var toyStates = map[string]fsmrt.Decoder[any]{
	"idle":    fsmrt.Value[idle, any](&timed, "state idle"),
	"busy":    fsmrt.Value[busy, any](&timed, "state busy"),
	"working": fsmrt.Value[busy, any](&timed, "state busy"),
}

// load reads a saved machine with LoadState, its state decoded strictly
// as the toy machine's, and returns its state's JSON.
func load(d *fsmrt.Desc[stateKind, eventKind, actionKind], data []byte, timers []fsmrt.Timer, last *fsmrt.TimerID) (json.RawMessage, error) {
	return fsmrt.LoadState(d, data, timers, last, func(raw []byte) (json.RawMessage, error) {
		_, err := fsmrt.Unmarshal(d, "state", raw, toyStates)
		return raw, err
	})
}

func TestReshaped(t *testing.T) {
	cause := errors.New("decode state busy: unknown field \"n2\"")
	same := []byte(`{"format":1,"machine":"Toy","shape":"sha256:toy","state":{}}`)
	other := []byte(`{"format":1,"machine":"Toy","shape":"sha256:old","state":{}}`)
	fail := func([]byte) (json.RawMessage, error) { return nil, cause }
	_, err := fsmrt.LoadState(&timed, same, make([]fsmrt.Timer, 1), new(fsmrt.TimerID), fail)
	assert.Equal(t, cause, err, "the same shape: the error as it is")
	_, err = fsmrt.LoadState(&timed, other, make([]fsmrt.Timer, 1), new(fsmrt.TimerID), fail)
	assert.ErrorIs(t, err, cause)
	assert.ErrorContains(t, err, "saved with shape sha256:old; this revision's is sha256:toy: fsmgen diff says what changed")
}

func TestStrictDecoding(t *testing.T) {
	tests := []struct {
		name, data, want string
		n                int
	}{
		{"the fields", `{"kind":"busy","N":3}`, "", 3},
		{"a missing field is zero", `{"kind":"busy"}`, "", 0},
		{"a renamed field", `{"kind":"busy","old_n":4}`, "", 4},
		{"the old and the new name", `{"kind":"busy","old_n":4,"N":5}`, `field "N" is given twice, once under its old name`, 0},
		{"an unknown field", `{"kind":"busy","M":3}`, `toy: decode state busy: unknown field "M"`, 0},
		{"a field in another case", `{"kind":"busy","n":3}`, `unknown field "n": "n" is not "N": strict reading takes a member by its name in its exact case`, 0},
		{"a misspelled field", `{"kind":"busy","M":3}`, `unknown field "M" (did you mean "N"?)`, 0},
		{"a field twice", `{"kind":"busy","N":3,"N":4}`, `duplicate field "N"`, 0},
		{"kind twice", `{"kind":"busy","kind":"busy"}`, `duplicate field "kind"`, 0},
		{"a field of the wrong type", `{"kind":"busy","N":"three"}`, `field "N": json: cannot unmarshal string`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := fsmrt.Unmarshal(&timed, "state", []byte(tt.data), map[string]fsmrt.Decoder[any]{"busy": fsmrt.Value[busy, any](&timed, "state busy")})
			if tt.want != "" {
				assert.ErrorContains(t, err, tt.want)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, busy{N: tt.n}, v)
		})
	}
	_, err := fsmrt.Unmarshal(&timed, "state", []byte(`{"Kind":"busy"}`), map[string]fsmrt.Decoder[any]{"busy": fsmrt.Value[busy, any](&timed, "state busy")})
	assert.ErrorContains(t, err, `toy: decode state: no "kind": "Kind" is not "kind"`, "the kind's name is read in its case only, and the error names the member")
	_, err = fsmrt.Unmarshal(&timed, "state", []byte(`{"kind":"busy","KIND":"busy"}`), map[string]fsmrt.Decoder[any]{"busy": fsmrt.Value[busy, any](&timed, "state busy")})
	assert.ErrorContains(t, err, `unknown field "KIND": "KIND" is not "kind"`)
	_, err = fsmrt.Unmarshal(&timed, "state", []byte(`{"kind":"idle"}`), map[string]fsmrt.Decoder[any]{"busy": fsmrt.Value[busy, any](&timed, "state busy")})
	assert.ErrorIs(t, err, fsmrt.ErrUnknownKind)
	assert.EqualError(t, err, `toy: decode state: unknown kind "idle"`)
}

// BenchmarkLoad measures LoadState on a saved machine with a running
// timer and a state with a field, decoded strictly through its kind's
// decoder, as a generated package's Load reads it.
func BenchmarkLoad(b *testing.B) {
	deadline := time.Date(2026, 11, 26, 3, 30, 0, 0, time.UTC)
	data, err := timed.Save(busy{N: 7}, []fsmrt.Timer{{ID: 3, Delay: 30 * time.Minute, Deadline: deadline}}, 4)
	require.NoError(b, err)
	decoders := map[string]fsmrt.Decoder[any]{"busy": fsmrt.Value[busy, any](&timed, "state busy")}
	decode := func(raw []byte) (any, error) { return fsmrt.Unmarshal(&timed, "state", raw, decoders) }
	timers := make([]fsmrt.Timer, 1)
	b.ReportAllocs()
	for b.Loop() {
		var last fsmrt.TimerID
		timers[0] = fsmrt.Timer{}
		if _, err := fsmrt.LoadState(&timed, data, timers, &last, decode); err != nil {
			b.Fatal(err)
		}
	}
}

func TestTimerRearm(t *testing.T) {
	t.Parallel()
	deadline := time.Date(2026, 11, 26, 3, 30, 0, 0, time.UTC) // started at 03:00
	tests := []struct {
		name  string
		timer fsmrt.Timer
		delay time.Duration
		want  fsmrt.Timer
	}{
		{"shorter", fsmrt.Timer{ID: 3, Delay: 30 * time.Minute, Deadline: deadline}, 10 * time.Minute,
			fsmrt.Timer{ID: 3, Delay: 10 * time.Minute, Deadline: deadline.Add(-20 * time.Minute)}},
		{"longer", fsmrt.Timer{ID: 3, Delay: 30 * time.Minute, Deadline: deadline}, 2 * time.Hour,
			fsmrt.Timer{ID: 3, Delay: 2 * time.Hour, Deadline: deadline.Add(90 * time.Minute)}},
		{"the same", fsmrt.Timer{ID: 3, Delay: 30 * time.Minute, Deadline: deadline}, 30 * time.Minute,
			fsmrt.Timer{ID: 3, Delay: 30 * time.Minute, Deadline: deadline}},
		{"no deadline known", fsmrt.Timer{ID: 1, Delay: time.Minute}, time.Second,
			fsmrt.Timer{ID: 1, Delay: time.Second}},
		{"not running", fsmrt.Timer{}, time.Second, fsmrt.Timer{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.timer
			got.Rearm(tt.delay)
			assert.Equal(t, tt.want, got)
		})
	}
}

// waiting is a state like a server's job or monitor: settings (a nested
// struct), times and counts.
type waiting struct {
	Settings struct {
		Schedule struct {
			Type       string `json:"type"`
			Expression string `json:"expression,omitempty"`
		} `json:"schedule"`
		Timezone string        `json:"timezone"`
		Timeout  time.Duration `json:"timeout"`
		Retries  int           `json:"retries"`
	} `json:"settings"`
	At       time.Time `json:"at"`
	Failures int       `json:"failures"`
	NextRun  time.Time `json:"next_run"`
}

func (w waiting) MarshalJSON() ([]byte, error) {
	type fields waiting
	return fsmrt.MarshalKind("busy", fields(w))
}

// newWaiting returns a waiting state and its timer.
func newWaiting() (waiting, []fsmrt.Timer) {
	var w waiting
	w.Settings.Schedule.Type, w.Settings.Schedule.Expression = "cron", "0 3 1 1 *"
	w.Settings.Timezone, w.Settings.Timeout, w.Settings.Retries = "UTC", time.Hour, 3
	w.At = time.Date(2026, 12, 2, 3, 14, 22, 777874721, time.UTC)
	w.NextRun = time.Date(2027, 1, 1, 3, 0, 0, 0, time.UTC)
	return w, []fsmrt.Timer{{ID: 1, Delay: w.NextRun.Sub(w.At), Deadline: w.NextRun}}
}

// BenchmarkSave saves a machine as a server saves each job's and
// monitor's (each new one at a first start, each one a round changes).
func BenchmarkSave(b *testing.B) {
	w, timers := newWaiting()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := timed.Save(w, timers, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadWaiting reads a saved machine as a server's start-up reads
// each job's and monitor's: the saved form, its timer, its state (settings
// in a nested struct, times, counts).
func BenchmarkLoadWaiting(b *testing.B) {
	w, saved := newWaiting()
	data, err := timed.Save(w, saved, 1)
	require.NoError(b, err)
	decoders := map[string]fsmrt.Decoder[any]{"busy": fsmrt.Value[waiting, any](&timed, "state busy")}
	decode := func(raw []byte) (any, error) { return fsmrt.Unmarshal(&timed, "state", raw, decoders) }
	timers := make([]fsmrt.Timer, 1)
	var last fsmrt.TimerID
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		timers[0] = fsmrt.Timer{}
		if _, err := fsmrt.LoadState(&timed, data, timers, &last, decode); err != nil {
			b.Fatal(err)
		}
	}
}
