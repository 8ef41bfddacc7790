// Package fsmtest holds the drivers of the tests fsmgen generates beside
// every machine: the generated test file declares its machine's tables
// (the ways through its rules, the witness paths, its states and events)
// and a Subject that makes the machine, and calls these drivers, which
// hold the logic once for every machine. The drivers run the generated
// Machine itself, the code production runs, with a scripted Behavior and
// a Recorder as its Handler.
//
// The package is for generated code: it may change with fsmgen's
// generated code, which checks its version through package fsmrt.
package fsmtest

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// Value is what a generated state, event or action is: a value that knows
// its kind.
type Value[K fsmrt.Kind] interface {
	Kind() K
}

// Machine is the view the drivers have of a generated Machine.
type Machine[St, Ev any, S, E fsmrt.Kind] interface {
	HandleEvent(ev Ev) error
	Kind() S
	State() St
	SetObserver(o func(fsmrt.Step[S, E]))
	Save() ([]byte, error)
}

// Subject is a generated machine as the drivers make and watch it: its
// tables and how to make it. St, Ev and Ac are the package's State, Event
// and Action interfaces; S, E and A its kinds.
type Subject[St Value[S], Ev Value[E], Ac Value[A], S, E, A fsmrt.Kind] struct {
	// Rules is the rule table.
	Rules []fsmrt.Rule[S, E, A]
	// States are the states at rest (every state but the transient ones),
	// and Transient the transient states, as zero values.
	States, Transient []St
	// Events are the events, as zero values.
	Events []Ev
	// Terminal are the terminal states.
	Terminal []S
	// Guards are the names of the guards the machine tests.
	Guards []string
	// NilEvents are the states whose rules read an event's fields, each
	// with a nil pointer of that event: the machine must refuse it.
	NilEvents []NilEvent[St, Ev]
	// Zero returns a Machine not made by New or Restore.
	Zero func() Machine[St, Ev, S, E]
	// New makes the machine with New, Restore with Restore in state s,
	// and Load with Load from data Save saved; its guards and effects
	// follow script, and its Handler is a Recorder, whose actions they
	// return (nil for a machine without actions).
	New     func(script *Script) (Machine[St, Ev, S, E], *[]Ac, error)
	Restore func(s St, script *Script) (Machine[St, Ev, S, E], *[]Ac, error)
	Load    func(data []byte, script *Script) (Machine[St, Ev, S, E], *[]Ac, error)
	// Rearm loads with LoadWith, told to re-arm the timers with the
	// delays of this revision (LoadOptions.Rearm); nil for a machine
	// without timers.
	Rearm func(data []byte, script *Script) (Machine[St, Ev, S, E], *[]Ac, error)
	// Timers returns a machine's running timers, each with its deadline
	// (Timers and Deadline of the generated package); nil for a machine
	// without timers.
	Timers func(m Machine[St, Ev, S, E]) []fsmrt.Timer
	// Deferred returns the kinds of the events a machine holds deferred,
	// oldest first (Deferred of the generated package); nil for a
	// machine whose states defer no event.
	Deferred func(m Machine[St, Ev, S, E]) []E
}

// NilEvent is a state and a nil event its rules would read.
type NilEvent[St, Ev any] struct {
	State St
	Event Ev
}

// Script is the behaviour of a machine under test: the generated test's
// fake Behavior asks it how each guard answers, and tells it which
// effects ran. A script either answers the guards in the order a test
// expects them to be tested ("g": g holds, "!g": it does not), noting a
// guard tested out of that order, or answers each guard from a table.
type Script struct {
	ordered bool
	steps   []string
	answers map[string]bool
	wrong   []string
	ran     []string
}

// Guard answers for the guard name.
func (s *Script) Guard(name string) bool {
	if !s.ordered {
		return s.answers[name]
	}
	if len(s.steps) == 0 || strings.TrimPrefix(s.steps[0], "!") != name {
		s.wrong = append(s.wrong, name)
		return false
	}
	holds := !strings.HasPrefix(s.steps[0], "!")
	s.steps = s.steps[1:]
	return holds
}

// Effect notes that the effect name ran.
func (s *Script) Effect(name string) { s.ran = append(s.ran, name) }

// check checks that the guards were tested as the script said and that the
// effects ran are want.
func (s *Script) check(t *testing.T, want []string) {
	t.Helper()
	assert.Equal(t, want, s.ran, "effects run")
	assert.Empty(t, s.wrong, "guards tested out of the expected order")
	assert.Empty(t, s.steps, "guards expected but not tested")
}

// trace makes m record the steps it takes in the returned slice.
func trace[St, Ev any, S, E fsmrt.Kind](m Machine[St, Ev, S, E]) *[]fsmrt.Step[S, E] {
	steps := &[]fsmrt.Step[S, E]{}
	m.SetObserver(func(s fsmrt.Step[S, E]) { *steps = append(*steps, s) })
	return steps
}

// kinds returns the kinds of the actions in *acts from the index from on;
// nil when there is no Recorder.
func kinds[Ac Value[A], A fsmrt.Kind](acts *[]Ac, from int) []A {
	if acts == nil {
		return nil
	}
	var out []A
	for _, a := range (*acts)[from:] {
		out = append(out, a.Kind())
	}
	return out
}

// Way is one way through a cell of the rule table: event sent to a machine
// restored in state From, the guards answering as Tests says in the order
// the machine must test them, the rules that then fire, the state the
// machine rests in, the actions it hands out and the effects it runs. A
// Restore starts every timer of From afresh, numbered from 1 outermost
// first, and a TimerFired event names the one that fires.
type Way[St, Ev any, S, A fsmrt.Kind] struct {
	From    St
	Event   Ev
	Tests   []string
	Rules   []int
	To      S
	Actions []A
	Effects []string
	// After, when not nil, is the state the machine rests in after the
	// way, fields included: a way through rules that set constants
	// (set:) gives it. From's fields are zero, and the fake behaviour's
	// effects return zero values, so the state's fields are zero but for
	// the constants.
	After St
}

// Rules takes every way through the rule table and checks the rules fired,
// the resulting state (unchanged after an ignored or rejected event, and
// whole where the way gives After), the error, the actions handed out and
// the effects run.
func Rules[St Value[S], Ev Value[E], Ac Value[A], S, E, A fsmrt.Kind](t *testing.T, subj *Subject[St, Ev, Ac, S, E, A], ways []Way[St, Ev, S, A]) {
	for _, w := range ways {
		var labels []string
		for _, r := range w.Rules {
			labels = append(labels, subj.Rules[r].Label)
		}
		t.Run(strings.Join(labels, ", then "), func(t *testing.T) {
			script := &Script{ordered: true, steps: slices.Clone(w.Tests)}
			m, acts, err := subj.Restore(w.From, script)
			require.NoError(t, err)
			script.ran = nil // the delays Restore computed
			steps := trace(m)
			err = m.HandleEvent(w.Event)
			var fired []int
			for _, s := range *steps {
				fired = append(fired, s.Rule)
			}
			assert.Equal(t, w.Rules, fired, "rules fired")
			assert.Equal(t, w.To, m.Kind(), "state after the event")
			switch kind := subj.Rules[w.Rules[len(w.Rules)-1]].Kind; {
			case kind == fsmrt.RuleReject:
				assert.ErrorIs(t, err, fsmrt.ErrRejected)
				assert.Equal(t, w.From, m.State(), "a rejected event changes nothing")
			case !slices.ContainsFunc(w.Rules, func(r int) bool { return subj.Rules[r].Kind != fsmrt.RuleIgnore }):
				// (the regions of a parallel state may each ignore it)
				assert.NoError(t, err)
				assert.Equal(t, w.From, m.State(), "an ignored event changes nothing")
			default:
				require.NoError(t, err)
			}
			assert.Equal(t, w.Actions, kinds(acts, 0), "actions handed to the Handler")
			script.check(t, w.Effects)
			if any(w.After) != nil {
				sameState(t, w.After, m.State(), "the state after the way, with the constants its rules set")
			}
		})
	}
}

// Node is one node of the prefix tree of the rules' witness paths: Event,
// sent after the events of the nodes above it (Up; -1 for a first event),
// with the guards answering as Tests says; the rules the machine then
// fires, the actions it hands out and the effects it runs. A first node
// without an Event is New's own step: the eventless rules of an initial
// state that waits, which New tests once it has entered it.
type Node[Ev any, A fsmrt.Kind] struct {
	Up      int
	Event   Ev
	Tests   []string
	Rules   []int
	Actions []A
	Effects []string
}

// Paths drives a machine made by New along the witness path of every rule:
// ends[i] is the last node of rule i's path in nodes, or -1 for a rule no
// path from New fires (a parallel state's rule for the configurations of
// its regions that New never leads to but Restore accepts: Rules takes
// it). After every step it saves the machine and goes on with the machine
// Load makes of it, as a program restarted between two events would: its
// timers keep their ids. It checks every step the machines take, the
// actions they hand out and the effects they run, and that together the
// paths fire every rule that has one.
func Paths[St Value[S], Ev Value[E], Ac Value[A], S, E, A fsmrt.Kind](t *testing.T, subj *Subject[St, Ev, Ac, S, E, A], nodes []Node[Ev, A], ends []int) {
	cov := fsmrt.NewCoverage(subj.Rules)
	for rule, end := range ends {
		if end < 0 {
			cov.Observe(fsmrt.Step[S, E]{Rule: rule}) // no path to fire it
			continue
		}
		t.Run(subj.Rules[rule].Label, func(t *testing.T) {
			var path []int
			for i := end; i >= 0; i = nodes[i].Up {
				path = append(path, i)
			}
			slices.Reverse(path)
			script := &Script{ordered: true}
			born := newStep(nodes, path)
			if born != nil {
				script.steps = slices.Clone(born.Tests)
				path = path[1:]
			}
			m, acts, err := subj.New(script)
			require.NoError(t, err)
			start, at := 0, m.Kind()
			if acts != nil {
				start = len(*acts) // New's entries are not the path's
			}
			fired := checkNew(t, born, subj.Rules, at, acts)
			script.ran = nil
			steps := trace(m)
			var gotActions []A
			var wantSteps []fsmrt.Step[S, E]
			var wantActions []A
			var wantEffects []string
			for k, i := range path {
				n := nodes[i]
				script.steps = append(script.steps, n.Tests...)
				if err := m.HandleEvent(n.Event); err != nil {
					require.ErrorIs(t, err, fsmrt.ErrRejected, "step %d", k)
				}
				for _, r := range n.Rules {
					to := subj.Rules[r].To
					if to == 0 {
						to = at
					}
					wantSteps = append(wantSteps, fsmrt.Step[S, E]{From: at, Event: subj.Rules[r].Event, Rule: r, To: to})
					at = to
				}
				wantActions = append(wantActions, n.Actions...)
				wantEffects = append(wantEffects, n.Effects...)
				// Restart between two events.
				gotActions = append(gotActions, kinds(acts, start)...)
				data, err := m.Save()
				require.NoError(t, err, "step %d: save", k)
				before, beforeTimers := m.State(), subj.timers(m)
				m, acts, err = subj.Load(data, script)
				require.NoError(t, err, "step %d: load %s", k, data)
				sameState(t, before, m.State(), "step %d: the loaded state", k)
				sameTimers(t, beforeTimers, subj.timers(m), "step %d: the loaded timers", k)
				again, err := m.Save()
				require.NoError(t, err)
				require.JSONEq(t, string(data), string(again), "step %d: the loaded machine saves as it was saved", k)
				start = 0
				m.SetObserver(func(s fsmrt.Step[S, E]) { *steps = append(*steps, s) })
			}
			if len(wantSteps)+len(*steps) > 0 { // (none on a path New's own step ends)
				assert.Equal(t, wantSteps, *steps, "steps taken")
			}
			assert.True(t, slices.Contains(fired, rule) || slices.ContainsFunc(*steps, func(s fsmrt.Step[S, E]) bool { return s.Rule == rule }), "the path fires its rule")
			if acts != nil {
				assert.Equal(t, wantActions, gotActions, "actions handed to the Handler")
			}
			script.check(t, wantEffects)
			for _, s := range *steps {
				cov.Observe(s)
			}
			for _, r := range fired {
				cov.Observe(fsmrt.Step[S, E]{Rule: r})
			}
		})
	}
	t.Log("rule coverage of the paths: ", cov)
	assert.Empty(t, cov.Missed(), "rules no path fired")
	assert.Len(t, ends, len(subj.Rules), "a path for every rule")
}

// EveryPair sends every event to every state at rest, with every guard
// false, and checks that a rule of that state, or one it shares, resolves
// the pair.
func EveryPair[St Value[S], Ev Value[E], Ac Value[A], S, E, A fsmrt.Kind](t *testing.T, subj *Subject[St, Ev, Ac, S, E, A]) {
	for _, s := range subj.States {
		for _, ev := range subj.Events {
			m, _, err := subj.Restore(s, &Script{})
			require.NoError(t, err)
			steps := trace(m)
			if err := m.HandleEvent(ev); err != nil {
				require.ErrorIs(t, err, fsmrt.ErrRejected, "%s × %s", s.Kind(), ev.Kind())
			}
			require.NotEmpty(t, *steps, "%s × %s: no rule fired", s.Kind(), ev.Kind())
			first := (*steps)[0]
			rule := subj.Rules[first.Rule]
			assert.Equal(t, ev.Kind(), rule.Event, "%s × %s: rule %d", s.Kind(), ev.Kind(), first.Rule)
			assert.Contains(t, []S{s.Kind(), 0}, rule.From, "%s × %s: rule %d", s.Kind(), ev.Kind(), first.Rule)
		}
	}
}

// Random sends random events to machines made by New, with random guard
// answers, and checks after every step that the machine rests in a state
// at rest, never leaves a terminal state, and that a rejected event
// changes nothing.
func Random[St Value[S], Ev Value[E], Ac Value[A], S, E, A fsmrt.Kind](t *testing.T, subj *Subject[St, Ev, Ac, S, E, A]) {
	r := rand.New(rand.NewPCG(1, 2))
	var transient []S
	for _, s := range subj.Transient {
		transient = append(transient, s.Kind())
	}
	for run := range 200 {
		script := &Script{answers: map[string]bool{}}
		m, _, err := subj.New(script)
		require.NoError(t, err)
		for i := range 50 {
			for _, g := range subj.Guards {
				script.answers[g] = r.IntN(2) == 0
			}
			before := m.State()
			err := m.HandleEvent(subj.Events[r.IntN(len(subj.Events))])
			after := m.Kind()
			require.NotZero(t, after, "run %d step %d: no state", run, i)
			require.NotContains(t, transient, after, "run %d step %d: stopped in a transient state", run, i)
			if slices.Contains(subj.Terminal, before.Kind()) {
				require.Equal(t, before.Kind(), after, "run %d step %d: left a terminal state", run, i)
			}
			switch {
			case err == nil, errors.Is(err, fsmrt.ErrRecalled):
				// Taken; a deferred event recalled after it may have failed.
			case errors.Is(err, fsmrt.ErrDeferLimit):
				require.Equal(t, before, m.State(), "run %d step %d: an event the machine could not defer changed the state", run, i)
			default:
				require.ErrorIs(t, err, fsmrt.ErrRejected)
				require.Equal(t, before, m.State(), "run %d step %d: a rejected event changed the state", run, i)
			}
		}
	}
}

// Errors checks the errors of the machine that do not depend on its
// spec: a Machine not made by New or Restore, an event of no kind, a nil
// or transient state restored, a nil event a rule would read, and
// HandleEvent called from the observer.
func Errors[St Value[S], Ev Value[E], Ac Value[A], S, E, A fsmrt.Kind](t *testing.T, subj *Subject[St, Ev, Ac, S, E, A]) {
	var none St
	var noEvent Ev
	zero := subj.Zero()
	assert.ErrorContains(t, zero.HandleEvent(subj.Events[0]), "not initialised")
	assert.Equal(t, none, zero.State())
	m, _, err := subj.Restore(subj.States[0], &Script{})
	require.NoError(t, err)
	assert.ErrorContains(t, m.HandleEvent(noEvent), "not an event")
	_, _, err = subj.Restore(none, &Script{})
	assert.ErrorContains(t, err, "cannot restore", "a nil state")
	for _, s := range subj.Transient {
		_, _, err = subj.Restore(s, &Script{})
		assert.ErrorContains(t, err, "transient")
	}
	for _, p := range subj.NilEvents {
		m, _, err := subj.Restore(p.State, &Script{})
		require.NoError(t, err)
		assert.ErrorContains(t, m.HandleEvent(p.Event), "nil")
		assert.Equal(t, p.State, m.State(), "a nil event changes nothing")
	}
	m, _, err = subj.Restore(subj.States[0], &Script{})
	require.NoError(t, err)
	var inner error
	m.SetObserver(func(fsmrt.Step[S, E]) { inner = m.HandleEvent(subj.Events[0]) })
	_ = m.HandleEvent(subj.Events[0])
	assert.ErrorIs(t, inner, fsmrt.ErrReentrant)
}

// Recorded checks that a Recorder holds want, the actions handed to it.
func Recorded[Ac any](t *testing.T, want, got []Ac) {
	t.Helper()
	assert.Equal(t, want, got, "the Recorder keeps every action with its values")
}

// Missing checks the error of New or Restore given a Config whose field
// is nil.
func Missing(t *testing.T, err error, field string) {
	t.Helper()
	assert.ErrorContains(t, err, "Config."+field+" is nil")
}

// Example is one example of the spec: a state at rest and an event, as
// the JSON its package reads, and the rule the spec says the machine
// takes.
type Example struct {
	Name         string
	Rule         int
	State, Event string
}

// Examples runs each example through a machine made by restore, with the
// real Behavior: it restores the example's state, sends its event (read
// by event), and checks that the machine takes the rule the spec gives the
// example, so that a guard written by hand cannot contradict the spec
// unnoticed.
func Examples[St, Ev any, S, E, A fsmrt.Kind](t *testing.T, rules []fsmrt.Rule[S, E, A], restore func(state []byte) (Machine[St, Ev, S, E], error), event func([]byte) (Ev, error), examples []Example) {
	for _, ex := range examples {
		want := rules[ex.Rule].Label
		t.Run(want+": "+ex.Name, func(t *testing.T) {
			m, err := restore([]byte(ex.State))
			require.NoError(t, err, "the example's state")
			ev, err := event([]byte(ex.Event))
			require.NoError(t, err, "the example's event")
			var fired []string
			m.SetObserver(func(s fsmrt.Step[S, E]) { fired = append(fired, rules[s.Rule].Label) })
			if err := m.HandleEvent(ev); err != nil {
				require.ErrorIs(t, err, fsmrt.ErrRejected)
			}
			assert.Contains(t, fired, want, "the spec says this example takes %s; the behaviour made the machine take %q", want, fired)
		})
	}
}
