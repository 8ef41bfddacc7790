package fsmtest

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// deferTable probes which events each state at rest defers, by its
// index in subj.States (a parallel state is there in several
// configurations, which may defer different events): the rule an event
// fires in a restored machine is a RuleDefer.
func deferTable[St Value[S], Ev Value[E], Ac Value[A], S, E, A fsmrt.Kind](t *testing.T, subj *Subject[St, Ev, Ac, S, E, A]) []map[E]bool {
	defers := make([]map[E]bool, len(subj.States))
	for i, s := range subj.States {
		defers[i] = map[E]bool{}
		for _, ev := range subj.Events {
			m, _, err := subj.Restore(s, &Script{})
			require.NoError(t, err)
			steps := trace(m)
			_ = m.HandleEvent(ev)
			if len(*steps) == 1 && subj.Rules[(*steps)[0].Rule].Kind == fsmrt.RuleDefer {
				defers[i][ev.Kind()] = true
			}
		}
	}
	return defers
}

// Deferral checks the deferred events of a machine whose states defer
// some: in every state at rest, an event it defers changes nothing, hands
// out nothing and is held; the machine holds no more than its limit and
// refuses one more (fsmrt.ErrDeferLimit) without a change; Save and Load
// keep what it holds, and Load refuses a saved machine holding an event
// its state does not defer. Then random events drive machines holding
// deferred events, checking after every step that each event held is one
// the current state defers (the others were recalled), in arrival order.
func Deferral[St Value[S], Ev Value[E], Ac Value[A], S, E, A fsmrt.Kind](t *testing.T, subj *Subject[St, Ev, Ac, S, E, A]) {
	require.NotNil(t, subj.Deferred, "a machine with deferred events lists them")
	defers := deferTable(t, subj)
	found := 0
	for i, s := range subj.States {
		for _, ev := range subj.Events {
			if !defers[i][ev.Kind()] {
				continue
			}
			found++
			m, acts, err := subj.Restore(s, &Script{})
			require.NoError(t, err)
			before := m.State()
			n := 0
			for ; n <= 1<<16; n++ {
				err = m.HandleEvent(ev)
				if err != nil {
					break
				}
			}
			require.ErrorIs(t, err, fsmrt.ErrDeferLimit, "%s × %s: a full queue refuses the event", s.Kind(), ev.Kind())
			assert.Equal(t, before, m.State(), "%s × %s: deferring changed the state", s.Kind(), ev.Kind())
			assert.Empty(t, kinds(acts, 0), "%s × %s: deferring handed out actions", s.Kind(), ev.Kind())
			held := subj.Deferred(m)
			require.Len(t, held, n, "%s × %s: the events held", s.Kind(), ev.Kind())
			data, err := m.Save()
			require.NoError(t, err)
			loaded, _, err := subj.Load(data, &Script{})
			require.NoError(t, err, "%s × %s: load what Save saved", s.Kind(), ev.Kind())
			assert.Equal(t, held, subj.Deferred(loaded), "%s × %s: the events held after Load", s.Kind(), ev.Kind())
			again, err := loaded.Save()
			require.NoError(t, err)
			assert.JSONEq(t, string(data), string(again), "%s × %s: saved again", s.Kind(), ev.Kind())
			for j, o := range subj.States {
				if defers[j][ev.Kind()] {
					continue
				}
				_, _, err := subj.Load(withState(t, data, o), &Script{})
				assert.ErrorContains(t, err, "does not defer", "%s × %s: Load in %s, which does not defer it", s.Kind(), ev.Kind(), o.Kind())
			}
		}
	}
	require.NotZero(t, found, "no state defers an event")
	recalls(t, subj)
}

// withState returns saved data with its state replaced by s.
func withState[St any](t *testing.T, data []byte, s St) []byte {
	var obj map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &obj))
	st, err := json.Marshal(s)
	require.NoError(t, err)
	obj["state"] = st
	out, err := json.Marshal(obj)
	require.NoError(t, err)
	return out
}

// recalls drives machines made by New with random events and guard
// answers, checking that the machine holds only events its configuration
// defers (see defersNow), and that the events it recalls are the oldest
// of their kind, each handled by a step: the events it holds are the
// ones it deferred, less those it recalled, in arrival order.
func recalls[St Value[S], Ev Value[E], Ac Value[A], S, E, A fsmrt.Kind](t *testing.T, subj *Subject[St, Ev, Ac, S, E, A]) {
	r := rand.New(rand.NewPCG(3, 4))
	recalled := 0
	for run := range 200 {
		script := &Script{answers: map[string]bool{}}
		m, _, err := subj.New(script)
		require.NoError(t, err)
		steps := trace(m)
		for i := range 50 {
			for _, g := range subj.Guards {
				script.answers[g] = r.IntN(2) == 0
			}
			held := subj.Deferred(m)
			*steps = (*steps)[:0]
			err := m.HandleEvent(subj.Events[r.IntN(len(subj.Events))])
			if err != nil && !errors.Is(err, fsmrt.ErrRecalled) && !errors.Is(err, fsmrt.ErrRejected) && !errors.Is(err, fsmrt.ErrDeferLimit) {
				require.NoError(t, err, "run %d step %d", run, i)
			}
			now := subj.Deferred(m)
			for _, e := range now {
				require.True(t, defersNow(t, subj, m, e), "run %d step %d: %s holds %s, which it does not defer", run, i, m.Kind(), e)
			}
			// The events recalled are those held before and not now, each
			// the oldest of its kind then held: recall skips an event only
			// when the configuration defers its kind, so the events of a
			// kind it leaves are the newest. Those left keep their order,
			// followed by the event this step deferred, if any.
			drop := map[E]int{}
			for _, e := range held {
				drop[e]++
			}
			for _, e := range now {
				drop[e]--
			}
			var gone, kept []E
			for _, e := range held {
				if drop[e] > 0 {
					drop[e]--
					gone = append(gone, e)
					continue
				}
				kept = append(kept, e)
			}
			require.LessOrEqual(t, len(kept), len(now), "run %d step %d: the events still held", run, i)
			require.True(t, slices.Equal(kept, now[:len(kept)]), "run %d step %d: the events still held, in arrival order: %v, then %v", run, i, kept, now)
			// Each event recalled is the event of a step after the first.
			// Recall offers the events oldest first, and looks again from
			// the oldest after a step that changes the configuration: an
			// event it skipped, deferred, may be recalled after a newer one
			// whose step freed it, so the steps are matched by kind.
			left := map[E]int{}
			for _, e := range gone {
				left[e]++
			}
			var stepped []E
			for _, s := range (*steps)[min(1, len(*steps)):] {
				if left[s.Event] > 0 {
					left[s.Event]--
					stepped = append(stepped, s.Event)
				}
			}
			require.ElementsMatch(t, gone, stepped, "run %d step %d: the recalled events", run, i)
			recalled += len(gone)
		}
	}
	t.Logf("events recalled along random walks: %d", recalled)
}

// defersNow reports whether machine m, in its current configuration (its
// state, and a parallel state's regions' leaves), defers the events of
// kind e: a copy of it, made by Save and Load, takes one by a deferral,
// or refuses it for a full queue. Load refuses a copy holding an event
// its configuration does not defer, which fails the test.
func defersNow[St Value[S], Ev Value[E], Ac Value[A], S, E, A fsmrt.Kind](t *testing.T, subj *Subject[St, Ev, Ac, S, E, A], m Machine[St, Ev, S, E], e E) bool {
	data, err := m.Save()
	require.NoError(t, err)
	c, _, err := subj.Load(data, &Script{})
	require.NoError(t, err, "load a machine holding deferred events")
	steps := trace(c)
	for _, ev := range subj.Events {
		if ev.Kind() != e {
			continue
		}
		if err := c.HandleEvent(ev); errors.Is(err, fsmrt.ErrDeferLimit) {
			return true
		}
		return len(*steps) == 1 && subj.Rules[(*steps)[0].Rule].Kind == fsmrt.RuleDefer
	}
	return false
}
