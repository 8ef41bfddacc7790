package fsmrt_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// deferring is the toy machine with deferred events: Idle (1) defers
// Stop (2), Busy (2) defers Go (1); it holds two at most.
var deferring = func() fsmrt.Desc[stateKind, eventKind, actionKind] {
	d := desc
	d.Shape = "sha256:toy-deferred"
	d.DeferLimit = 2
	d.Rules = append(d.Rules, fsmrt.Rule[stateKind, eventKind, actionKind]{Kind: fsmrt.RuleDefer, From: 1, Event: 2, Label: "Idle --Stop--> deferred"})
	return d
}()

// toyDefers says what the toy machine's states defer.
func toyDefers(s stateKind, e eventKind) bool { return s == 1 && e == 2 || s == 2 && e == 1 }

// toyEvent is an event of the toy machine: Go or Stop, numbered.
type toyEvent struct {
	K eventKind `json:"-"`
	N int       `json:"n"`
}

func (e *toyEvent) Kind() eventKind { return e.K }

func (e toyEvent) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, `{"kind":%q,"n":%d}`, strings.ToLower(e.K.String()), e.N), nil
}

// decodeToyEvent reads a toy event strictly.
func decodeToyEvent(raw []byte) (*toyEvent, error) {
	ev, err := fsmrt.Unmarshal(&deferring, "event", raw, map[string]fsmrt.Decoder[*toyEvent]{
		"go":   fsmrt.Pointer[toyEvent, *toyEvent](&deferring, "event go"),
		"stop": fsmrt.Pointer[toyEvent, *toyEvent](&deferring, "event stop"),
	})
	if err != nil {
		return nil, err
	}
	if strings.Contains(string(raw), `"stop"`) {
		ev.K = 2
	} else {
		ev.K = 1
	}
	return ev, nil
}

// TestRecall recalls the events the state does not defer, oldest first,
// looks again from the oldest after a change of state, and reports and
// drops the events that fail.
func TestRecall(t *testing.T) {
	t.Parallel()
	c := fsmrt.NewCore(&deferring, stateKind(2))
	var handled []int
	dispatch := func(ev *toyEvent) error {
		handled = append(handled, ev.N)
		if ev.N == 99 {
			return &fsmrt.RejectedError[stateKind, eventKind]{State: c.State, Event: ev.K}
		}
		c.State = 3 - c.State // Go and Stop both switch Idle and Busy
		return nil
	}
	// In Busy: Go 1 waits; Stop 2 is handled and moves to Idle, where Go
	// 1 is handled (moving to Busy), and Stop 3 no longer waits.
	queue := []*toyEvent{{K: 1, N: 1}, {K: 2, N: 2}, {K: 1, N: 4}, {K: 2, N: 3}}
	require.NoError(t, fsmrt.Recall(&c, &queue, toyDefers, dispatch))
	assert.Equal(t, []int{2, 1, 3, 4}, handled)
	assert.Empty(t, queue)

	// An event that fails is dropped and reported, as recalled.
	handled = nil
	queue = []*toyEvent{{K: 2, N: 99}, {K: 1, N: 5}}
	err := fsmrt.Recall(&c, &queue, toyDefers, dispatch)
	require.ErrorIs(t, err, fsmrt.ErrRecalled)
	assert.NotErrorIs(t, err, fsmrt.ErrRejected, "the event HandleEvent was given was taken")
	var recalled *fsmrt.RecalledError[stateKind, eventKind]
	require.ErrorAs(t, err, &recalled)
	assert.Equal(t, eventKind(2), recalled.Event)
	assert.ErrorContains(t, err, "the deferred event Stop, recalled in state Busy, failed")
	assert.Equal(t, []int{99}, handled, "Go 5 stays deferred in Busy")
	assert.Len(t, queue, 1)
}

// TestSaveLoadDeferred saves the events a machine holds and loads them
// back, strictly.
func TestSaveLoadDeferred(t *testing.T) {
	t.Parallel()
	saved, err := deferring.Save(idle{}, nil, 0)
	require.NoError(t, err)
	same, err := fsmrt.SaveDeferred(&deferring, saved, []*toyEvent(nil))
	require.NoError(t, err)
	assert.Equal(t, string(saved), string(same), "nothing held, nothing saved")
	data, err := fsmrt.SaveDeferred(&deferring, saved, []*toyEvent{{K: 2, N: 1}, {K: 2, N: 2}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"format":1,"machine":"Toy","shape":"sha256:toy-deferred","state":{},
		"deferred":[{"kind":"stop","n":1},{"kind":"stop","n":2}]}`, string(data))
	q, err := fsmrt.LoadDeferred(&deferring, data, decodeToyEvent)
	require.NoError(t, err)
	assert.Equal(t, []*toyEvent{{K: 2, N: 1}, {K: 2, N: 2}}, q)

	for _, tc := range []struct{ name, deferred, want string }{
		{"an unknown kind", `[{"kind":"jump"}]`, "deferred event 1"},
		{"an unknown member", `[{"kind":"stop","n":1,"m":2}]`, `"m"`},
		{"beyond the limit", `[{"kind":"stop"},{"kind":"stop"},{"kind":"stop"}]`, "it holds 3 deferred events, more than this revision's defer_limit of 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data := `{"format":1,"machine":"Toy","shape":"sha256:toy-deferred","state":{},"deferred":` + tc.deferred + `}`
			_, err := fsmrt.LoadDeferred(&deferring, []byte(data), decodeToyEvent)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	// A machine that defers nothing refuses saved deferred events.
	_, err = load(&desc, data, nil, nil)
	assert.ErrorContains(t, err, "it holds deferred events, and no state of this machine defers one")
	assert.EqualError(t, deferring.NotDeferred(2, 2), "toy: load a saved machine: it holds a deferred Stop, which state Busy does not defer in this revision (a deferral removed breaks the machines saved with the event waiting: fsmgen diff says so)")
}

// TestCopyEvent copies an event through its JSON, and refuses a nil one.
func TestCopyEvent(t *testing.T) {
	t.Parallel()
	ev := &toyEvent{K: 2, N: 7}
	c, err := fsmrt.CopyEvent(&deferring, ev, decodeToyEvent)
	require.NoError(t, err)
	assert.Equal(t, ev, c)
	assert.NotSame(t, ev, c)
	_, err = fsmrt.CopyEvent(&deferring, (*toyEvent)(nil), decodeToyEvent)
	assert.ErrorContains(t, err, "defer a nil *fsmrt_test.toyEvent")
	full := fsmrt.NewCore(&deferring, stateKind(1))
	err = full.Full(3)
	assert.True(t, errors.Is(err, fsmrt.ErrDeferLimit))
	assert.EqualError(t, err, "toy: Idle defers Stop, and the machine holds 2 deferred events, its limit (defer_limit): handle fewer events ahead of the state that takes them, or raise defer_limit: too many deferred events")
}
