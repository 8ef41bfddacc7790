package export_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/export"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// compareStep compares one step of both sides, and reports whether they
// agree.
//
// In a parallel state the leaf is the set of its regions' leaves (each
// side's, sorted), and the Go machine's exits and entries are worked out
// from the configuration it was in before the step (prev, its leaf).
func compareStep(t *testing.T, tg target, m *fsm.Machine, name, prev string, g goResult, js jsResult) bool {
	t.Helper()
	ok := assert.Empty(t, js.Error, "%s: the target failed", name)
	ok = assert.Equal(t, leafSet(g.Leaf), leafSet(js.Leaf), "%s: the leaf (the regions' leaves in a parallel state)", name) && ok
	full := goTrace(t, m, prev, g)
	trace, reordered := observable(t, nil, m, full), false
	if tg.format == export.SCXML {
		// SCION orders a microstep's exits by depth first (see
		// scionOrder): the Go machine's, in SCXML's order, are compared
		// in SCION's, and the actions and effects of such a step as sets. The whole
		// trace is reordered, before the states with nothing to run are
		// left out, so that each microstep's exits still part its entries
		// from the next one's (a done transition's, say).
		sorted, _ := scionOrder(t, m, full)
		sorted = observable(t, nil, m, sorted)
		trace, reordered = sorted, !slices.Equal(sorted, trace)
	}
	ok = assert.Equal(t, trace, observable(t, &tg, m, js.Trace), "%s: the states exited and entered", name) && ok
	var guards []string
	for _, a := range g.Guards {
		guards = append(guards, a.Guard)
	}
	ok = assert.Equal(t, nonNil(guards), nonNil(js.Guards), "%s: the guards asked", name) && ok
	ok = extraGuards(t, tg, m, name, js.Extra) && ok
	ok = earlyGuards(t, tg, m, name, js.Early) && ok
	effects := map[string]bool{}
	for _, fn := range m.Effects {
		effects[fn.Name] = true
	}
	var jsEffects, jsActions []string
	for _, c := range js.Calls {
		if effects[c] {
			jsEffects = append(jsEffects, c)
		} else {
			jsActions = append(jsActions, c)
		}
	}
	// same compares the Go machine's list with the JS one's, as a set when
	// the target reordered them (the effects of entries and exits inside
	// regions run in SCION's order too, as the actions do).
	same := func(goList, jsList []string, what string) bool {
		if reordered {
			slices.Sort(goList)
			slices.Sort(jsList)
		}
		return assert.Equal(t, nonNil(goList), nonNil(jsList), "%s: %s", name, what)
	}
	ok = same(slices.Clone(g.Effects), jsEffects, "the effects run") && ok
	var actions []string
	for _, a := range g.Actions {
		act := actionOf(t, m, a.Kind)
		if !act.Builtin {
			actions = append(actions, act.Name)
		}
	}
	ok = same(actions, jsActions, "the actions") && ok
	var timers []string
	for _, tm := range g.Timers {
		timers = append(timers, tg.timerName(m, timerOf(t, m, tm.State, tm.Timer)))
	}
	slices.Sort(timers)
	ok = assert.Equal(t, nonNil(timers), nonNil(js.Timers), "%s: the timers running", name) && ok
	return ok
}

// observable keeps, of the exits and entries of a target (nil: of the Go
// machine), those the Go machine runs code for: the exits of states with an exit or a timer, the entries
// of states with an entry or a timer (the generated code does nothing,
// and the model has no run, for the others).
func observable(t *testing.T, tg *target, m *fsm.Machine, trace []string) []string {
	t.Helper()
	out := []string{}
	for _, e := range trace {
		if e == microstep {
			continue
		}
		what, name, _ := strings.Cut(e, " ")
		if tg != nil && tg.intermediate(m, name) {
			continue
		}
		s := anyStateNamed(t, m, name)
		if len(s.Timers) > 0 || what == "exit" && s.Exit != nil || what == "entry" && s.Entry != nil {
			out = append(out, e)
		}
	}
	return out
}

// afterEvent is the event XState's after sends for a timer:
// xstate.after.DELAY.ID, DELAY in milliseconds or the name of the delay's
// effect, ID the id of the state whose node has it.
func afterEvent(m *fsm.Machine, tm *fsm.Timer) string {
	delay := strconv.FormatInt(tm.Delay/int64(time.Millisecond), 10)
	if tm.DelayFunc != nil {
		delay = tm.DelayFunc.Name
	}
	// A nested parallel state's timer is on that state's node.
	return "xstate.after." + delay + "." + m.Name + "." + strings.Join(chartPath(tm.Owner()), ".")
}

// chartPath returns the names of state s and the states around it in the
// exported chart, outermost first.
func chartPath(s *fsm.State) []string {
	var path []string
	switch reg := s.Region; {
	case reg != nil && reg.Within != nil:
		// A region of a parallel state inside another region: its id
		// goes through that parallel state.
		path = chartPath(reg.Within)
	case reg != nil:
		// A state inside a region: its id goes through its parallel state.
		for _, s := range reg.Parallel.Path() {
			path = append(path, s.Name)
		}
		for _, g := range reg.Groups {
			// A region of parallel states nested in another.
			path = append(path, g.Name)
		}
	}
	for _, a := range s.Path() {
		path = append(path, a.Name)
	}
	return path
}

// sendID is the id of the <send> that runs a timer in the SCXML export:
// STATE.timer, or STATE.timer.ID.
func sendID(_ *fsm.Machine, tm *fsm.Timer) string {
	if tm.ID == "" {
		return tm.State.Name + ".timer"
	}
	return tm.State.Name + ".timer." + tm.ID
}

func timerOf(t *testing.T, m *fsm.Machine, state, id string) *fsm.Timer {
	t.Helper()
	for _, tm := range m.Timers {
		if tm.State.Snake == state && tm.ID == id {
			return tm
		}
	}
	require.Failf(t, "no such timer", "%s has no timer %q of state %s", m.Name, id, state)
	return nil
}

func eventOf(t *testing.T, m *fsm.Machine, kind string) *fsm.Event {
	t.Helper()
	i := slices.IndexFunc(m.Events, func(e *fsm.Event) bool { return e.Snake == kind })
	require.GreaterOrEqual(t, i, 0, "%s has no event of kind %s", m.Name, kind)
	return m.Events[i]
}

func actionOf(t *testing.T, m *fsm.Machine, kind string) *fsm.Action {
	t.Helper()
	i := slices.IndexFunc(m.Actions, func(a *fsm.Action) bool { return a.Snake == kind })
	require.GreaterOrEqual(t, i, 0, "%s has no action of kind %s", m.Name, kind)
	return m.Actions[i]
}

func stateNamed(t *testing.T, m *fsm.Machine, name string) *fsm.State {
	t.Helper()
	i := slices.IndexFunc(m.States, func(s *fsm.State) bool { return s.Name == name })
	require.GreaterOrEqual(t, i, 0, "%s has no state %s", m.Name, name)
	return m.States[i]
}

func anyStateNamed(t *testing.T, m *fsm.Machine, name string) *fsm.State {
	t.Helper()
	all := slices.Concat(m.States, m.Composites, m.RegionLeaves())
	for _, reg := range m.Regions {
		all = append(all, reg.Composites...)
	}
	all = append(all, m.Groups()...) // parallel states nested as regions
	i := slices.IndexFunc(all, func(s *fsm.State) bool { return s.Name == name })
	require.GreaterOrEqual(t, i, 0, "%s has no state %s", m.Name, name)
	return all[i]
}

func inputText(in goInput) string {
	switch {
	case in.Fire && in.Timer != "":
		return "timer " + in.Timer + " of " + in.State + " fires"
	case in.Fire:
		return "the timer of " + in.State + " fires"
	case in.Event != "":
		return "send " + in.Event
	}
	return "New"
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
