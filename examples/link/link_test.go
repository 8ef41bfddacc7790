package link_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/examples/link"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// send feeds the events to m, failing the test on an error.
func send(t *testing.T, m *link.Machine, evs ...link.Event) {
	t.Helper()
	for _, ev := range evs {
		require.NoError(t, m.HandleEvent(ev), "%T", ev)
	}
}

// TestSendWaitsUntilOnline sends messages before the link is up: Offline
// defers them, in order, and the step into Online hands them to Transmit,
// oldest first, after its own actions (UML: recalled on leaving the state
// that defers them).
func TestSendWaitsUntilOnline(t *testing.T) {
	t.Parallel()
	rec := &link.Recorder{}
	m, err := link.New(link.Config{Handler: rec})
	require.NoError(t, err)
	var steps []link.Step
	m.SetObserver(func(s link.Step) { steps = append(steps, s) })

	send(t, m, &link.Send{Payload: "a"}, &link.Open{}, &link.Send{Payload: "b"})
	assert.Equal(t, link.StateConnecting, m.Kind())
	assert.Equal(t, []link.EventKind{link.EventSend, link.EventSend}, m.Deferred())
	assert.Equal(t, []link.Action{&link.Dial{}}, rec.Actions, "deferring hands out nothing")

	rec.Actions, steps = nil, nil
	send(t, m, &link.Up{})
	assert.Equal(t, link.StateOnline, m.Kind())
	assert.Empty(t, m.Deferred())
	assert.Equal(t, []link.Action{&link.Transmit{Payload: "a"}, &link.Transmit{Payload: "b"}}, rec.Actions)
	var events []link.EventKind
	for _, s := range steps {
		events = append(events, s.Event)
	}
	assert.Equal(t, []link.EventKind{link.EventUp, link.EventSend, link.EventSend}, events, "the observer sees Up, then each recalled Send")

	// Online takes Send at once.
	rec.Actions = nil
	send(t, m, &link.Send{Payload: "c"})
	assert.Equal(t, []link.Action{&link.Transmit{Payload: "c"}}, rec.Actions)
}

// TestDeferredKeepsACopy changes an event after handing it to the
// machine: the machine deferred a copy.
func TestDeferredKeepsACopy(t *testing.T) {
	t.Parallel()
	rec := &link.Recorder{}
	m, err := link.New(link.Config{Handler: rec})
	require.NoError(t, err)
	ev := &link.Send{Payload: "first"}
	send(t, m, ev)
	ev.Payload = "changed"
	send(t, m, &link.Open{}, &link.Up{})
	assert.Equal(t, []link.Action{&link.Dial{}, &link.Transmit{Payload: "first"}}, rec.Actions)
}

// TestDeferredSurviveLoad saves a link with messages waiting, loads it in a
// new machine (a restart) and brings it up: the messages go out, in order.
func TestDeferredSurviveLoad(t *testing.T) {
	t.Parallel()
	m, err := link.New(link.Config{Handler: &link.Recorder{}})
	require.NoError(t, err)
	send(t, m, &link.Open{}, &link.Send{Payload: "a"}, &link.Send{Payload: "b"})
	data, err := m.Save()
	require.NoError(t, err)
	assert.Contains(t, string(data), `"deferred":[{"kind":"send","payload":"a"},{"kind":"send","payload":"b"}]`)

	rec := &link.Recorder{}
	m2, err := link.Load(link.Config{Handler: rec}, data)
	require.NoError(t, err)
	assert.Empty(t, rec.Actions, "Load hands out nothing")
	send(t, m2, &link.Up{})
	assert.Equal(t, []link.Action{&link.Transmit{Payload: "a"}, &link.Transmit{Payload: "b"}}, rec.Actions)
}

// TestLoadDeferredIsStrict loads saved links whose deferred events are
// wrong: each is refused, naming what is wrong.
func TestLoadDeferredIsStrict(t *testing.T) {
	t.Parallel()
	const head = `{"format":1,"machine":"Link","shape":"sha256:x","state":`
	for _, tc := range []struct {
		name, data, want string
	}{
		{"an event its state does not defer", head + `{"kind":"online"},"deferred":[{"kind":"send","payload":"a"}]}`, "it holds a deferred Send, which state Online does not defer"},
		{"an event Offline does not defer", head + `{"kind":"idle"},"deferred":[{"kind":"up"}]}`, "it holds a deferred Up, which state Idle does not defer"},
		{"an unknown event", head + `{"kind":"idle"},"deferred":[{"kind":"ping"}]}`, "deferred event 1"},
		{"an unknown field", head + `{"kind":"idle"},"deferred":[{"kind":"send","payload":"a","urgent":true}]}`, "urgent"},
		{"not a list", head + `{"kind":"idle"},"deferred":{"kind":"send"}}`, "deferred"},
		{"beyond the limit", head + `{"kind":"idle"},"deferred":[` + strings.TrimSuffix(strings.Repeat(`{"kind":"send","payload":"a"},`, 17), ",") + `]}`, "more than this revision's defer_limit of 16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := link.Load(link.Config{Handler: &link.Recorder{}}, []byte(tc.data))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestDeferLimit fills the queue: the seventeenth message is refused, with
// an error that says so, and changes nothing.
func TestDeferLimit(t *testing.T) {
	t.Parallel()
	m, err := link.New(link.Config{Handler: &link.Recorder{}})
	require.NoError(t, err)
	for range 16 {
		send(t, m, &link.Send{Payload: "x"})
	}
	err = m.HandleEvent(&link.Send{Payload: "y"})
	require.ErrorIs(t, err, fsmrt.ErrDeferLimit)
	assert.Contains(t, err.Error(), "Idle defers Send, and the machine holds 16 deferred events, its limit (defer_limit)")
	assert.Len(t, m.Deferred(), 16)
	assert.Equal(t, link.StateIdle, m.Kind())
}

// TestRecalledAndRejected closes a link with messages waiting: Close is
// taken (Hangup), and the messages, recalled in Closed, which rejects
// Send, are dropped and reported as recalled, not as Close's rejection.
func TestRecalledAndRejected(t *testing.T) {
	t.Parallel()
	rec := &link.Recorder{}
	m, err := link.New(link.Config{Handler: rec})
	require.NoError(t, err)
	send(t, m, &link.Send{Payload: "a"}, &link.Send{Payload: "b"})
	err = m.HandleEvent(&link.Close{})
	require.ErrorIs(t, err, fsmrt.ErrRecalled)
	assert.NotErrorIs(t, err, fsmrt.ErrRejected, "Close itself was taken")
	var recalled *fsmrt.RecalledError[link.StateKind, link.EventKind]
	require.True(t, errors.As(err, &recalled))
	assert.Equal(t, link.EventSend, recalled.Event)
	assert.Equal(t, link.StateClosed, recalled.State)
	require.ErrorIs(t, recalled.Err, fsmrt.ErrRejected)
	assert.Equal(t, 2, strings.Count(err.Error(), "the deferred event Send, recalled in state Closed, failed"))
	assert.Equal(t, link.StateClosed, m.Kind())
	assert.Empty(t, m.Deferred())
	assert.Equal(t, []link.Action{&link.Hangup{}}, rec.Actions)
}
