package fsmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// JSON checks that every value survives a JSON round trip with its kind,
// that unmarshal reads strictly (it refuses an unknown member, a member in
// another case and a member given twice, naming it), and that it refuses
// malformed JSON, an unknown or empty kind and each of bad.
func JSON[V Value[K], K fsmrt.Kind](t *testing.T, values []V, unmarshal func([]byte) (V, error), bad ...string) {
	for _, v := range values {
		t.Run(v.Kind().String(), func(t *testing.T) {
			data, err := json.Marshal(v)
			require.NoError(t, err)
			got, err := unmarshal(data)
			require.NoError(t, err)
			assert.Equal(t, v.Kind(), got.Kind())
			again, err := json.Marshal(got)
			require.NoError(t, err)
			assert.JSONEq(t, string(data), string(again))
			strict(t, data, func(data []byte) error { _, err := unmarshal(data); return err })
		})
	}
	for _, data := range append([]string{`{"kind":"no_such_kind"}`, `{"kind":""}`, `[`}, bad...) {
		_, err := unmarshal([]byte(data))
		assert.Error(t, err, data)
	}
}

// strict checks that read refuses data, a JSON object it reads, with a
// member added that it does not know, with a member given twice, and with
// a member but "kind" in another case.
func strict(t *testing.T, data []byte, read func([]byte) error) {
	t.Helper()
	keys, values := members(t, data)
	unknown := object(append([]string{"fsmgen_no_such_field"}, keys...), append([]json.RawMessage{json.RawMessage("1")}, values...))
	assert.ErrorContains(t, read(unknown), `unknown field "fsmgen_no_such_field"`)
	twice := object(append(keys, keys[0]), append(values, values[0]))
	assert.ErrorContains(t, read(twice), fmt.Sprintf("duplicate field %q", keys[0]))
	for i, key := range keys {
		if key == "kind" {
			continue
		}
		recased := slices.Clone(keys)
		recased[i] = strings.ToUpper(key[:1]) + key[1:]
		if recased[i] == key {
			recased[i] = strings.ToLower(key[:1]) + key[1:]
		}
		assert.ErrorContains(t, read(object(recased, values)), fmt.Sprintf("unknown field %q", recased[i]))
		break
	}
}

// withDeadlines returns the saved machine data with deadline as the
// deadline of each of its timers.
func withDeadlines(t *testing.T, data []byte, deadline time.Time) []byte {
	t.Helper()
	keys, values := members(t, data)
	i := slices.Index(keys, "timers")
	require.GreaterOrEqual(t, i, 0, "a machine with timers running: %s", data)
	var timers []map[string]any
	require.NoError(t, json.Unmarshal(values[i], &timers))
	for _, tm := range timers {
		tm["deadline"] = deadline
	}
	raw, err := json.Marshal(timers)
	require.NoError(t, err)
	values = slices.Clone(values)
	values[i] = raw
	return object(keys, values)
}

// members returns the members of the JSON object data, in order.
func members(t *testing.T, data []byte) ([]string, []json.RawMessage) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok, "a JSON object")
	var keys []string
	var values []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		var v json.RawMessage
		require.NoError(t, dec.Decode(&v))
		keys = append(keys, tok.(string))
		values = append(values, v)
	}
	return keys, values
}

// object writes a JSON object of the members, in order, repeats included.
func object(keys []string, values []json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, key := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(values[i])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// sameState checks that a loaded state is the one saved: the same as JSON,
// which is what a saved state holds. (Values may differ where JSON does
// not: a time's location or monotonic reading, an empty json.Number, which
// encodes as 0.)
func sameState(t *testing.T, saved, loaded any, msgAndArgs ...any) {
	t.Helper()
	want, err := json.Marshal(saved)
	require.NoError(t, err, msgAndArgs...)
	got, err := json.Marshal(loaded)
	require.NoError(t, err, msgAndArgs...)
	require.JSONEq(t, string(want), string(got), msgAndArgs...)
}

// timers returns m's running timers, or none for a machine without.
func (subj *Subject[St, Ev, Ac, S, E, A]) timers(m Machine[St, Ev, S, E]) []fsmrt.Timer {
	if subj.Timers == nil {
		return nil
	}
	return subj.Timers(m)
}

// sameTimers checks that a loaded machine runs the timers saved: the same
// ids and delays, and the same deadlines (as instants).
func sameTimers(t *testing.T, saved, loaded []fsmrt.Timer, msgAndArgs ...any) {
	t.Helper()
	require.Len(t, loaded, len(saved), msgAndArgs...)
	for i := range saved {
		assert.Equal(t, saved[i].ID, loaded[i].ID, msgAndArgs...)
		assert.Equal(t, saved[i].Delay, loaded[i].Delay, msgAndArgs...)
		assert.True(t, saved[i].Deadline.Equal(loaded[i].Deadline), "deadline %s, loaded as %s", saved[i].Deadline, loaded[i].Deadline)
	}
}

// Saved checks that every state at rest survives Save and Load, the
// loaded machine saving as it was saved, and that Load reads strictly: it
// refuses malformed data, another machine's, and an unknown, repeated or
// re-cased member, in the saved machine and in its state.
func Saved[St Value[S], Ev Value[E], Ac Value[A], S, E, A fsmrt.Kind](t *testing.T, subj *Subject[St, Ev, Ac, S, E, A]) {
	var first, timed, untimed []byte
	for _, s := range subj.States {
		m, _, err := subj.Restore(s, &Script{})
		require.NoError(t, err)
		data, err := m.Save()
		require.NoError(t, err)
		loaded, _, err := subj.Load(data, &Script{})
		require.NoError(t, err, "load %s", data)
		sameState(t, s, loaded.State(), "state %s", s.Kind())
		sameTimers(t, subj.timers(m), subj.timers(loaded), "state %s", s.Kind())
		if subj.Rearm != nil {
			rearmed, _, err := subj.Rearm(data, &Script{})
			require.NoError(t, err, "load %s, re-arming its timers", data)
			sameState(t, s, rearmed.State(), "state %s, re-armed", s.Kind())
			sameTimers(t, subj.timers(m), subj.timers(rearmed), "state %s: re-armed with the delays it was saved with, its timers are as they were", s.Kind())
		}
		if len(subj.timers(m)) > 0 && timed == nil {
			timed = data
		} else if len(subj.timers(m)) == 0 && untimed == nil {
			untimed = data
		}
		again, err := loaded.Save()
		require.NoError(t, err)
		assert.JSONEq(t, string(data), string(again))
		if first == nil {
			first = data
		}
	}
	load := func(data []byte) error { _, _, err := subj.Load(data, &Script{}); return err }
	if timed != nil && untimed != nil {
		// A timer saved running in a state that does not run it.
		tk, tv := members(t, timed)
		uk, uv := members(t, untimed)
		stray := slices.Clone(tv)
		stray[slices.Index(tk, "state")] = uv[slices.Index(uk, "state")]
		assert.ErrorIs(t, load(object(tk, stray)), fsmrt.ErrTimerNotRunning)
	}
	if timed != nil && subj.Rearm != nil {
		// Deadlines known: re-armed with the same delays, they stay.
		deadline := time.Date(2026, 11, 26, 3, 30, 0, 0, time.UTC)
		data := withDeadlines(t, timed, deadline)
		loaded, _, err := subj.Load(data, &Script{})
		require.NoError(t, err, "load %s", data)
		rearmed, _, err := subj.Rearm(data, &Script{})
		require.NoError(t, err, "load %s, re-arming its timers", data)
		require.NotEmpty(t, subj.timers(loaded))
		for _, tm := range subj.timers(loaded) {
			assert.True(t, tm.Deadline.Equal(deadline), "timer %d: deadline %s, saved as %s", tm.ID, tm.Deadline, deadline)
		}
		sameTimers(t, subj.timers(loaded), subj.timers(rearmed), "re-armed with the delays they were saved with, the deadlines stay")
	}
	assert.Error(t, load([]byte("[")))
	assert.Error(t, load(nil))
	strict(t, first, load)
	keys, values := members(t, first)
	for i, key := range keys {
		switch key {
		case "machine":
			other := slices.Clone(values)
			other[i] = json.RawMessage(`"SomeOtherMachine"`)
			assert.ErrorContains(t, load(object(keys, other)), `it is a "SomeOtherMachine" machine`)
		case "state":
			strict(t, values[i], func(state []byte) error {
				with := slices.Clone(values)
				with[i] = state
				return load(object(keys, with))
			})
		}
	}
}
