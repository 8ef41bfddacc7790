package fsmtest_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
	"github.com/fsmgen/fsmgen/runtime/fsmrt/fsmtest"
)

// A lamp written by hand the way fsmgen generates machines, so that the
// drivers can be run against it, and against broken copies of it.

type (
	stateKind  uint8
	eventKind  uint8
	actionKind uint8
)

func (k stateKind) String() string  { return fsmrt.KindName(k, "stateKind", []string{"Off", "On"}) }
func (k eventKind) String() string  { return fsmrt.KindName(k, "eventKind", []string{"Toggle", "Poke"}) }
func (k actionKind) String() string { return fsmrt.KindName(k, "actionKind", []string{"Beep"}) }

type (
	state  interface{ Kind() stateKind }
	event  interface{ Kind() eventKind }
	action interface{ Kind() actionKind }
	off    struct{}
	on     struct {
		Level int `json:"level"`
	}
	toggle struct{ Loud bool }
	poke   struct{}
	beep   struct{}
)

func (off) Kind() stateKind              { return 1 }
func (on) Kind() stateKind               { return 2 }
func (*toggle) Kind() eventKind          { return 1 }
func (*poke) Kind() eventKind            { return 2 }
func (*beep) Kind() actionKind           { return 1 }
func (off) MarshalJSON() ([]byte, error) { return []byte(`{"kind":"off"}`), nil }
func (s on) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf(`{"kind":"on","level":%d}`, s.Level)), nil
}

var desc = fsmrt.Desc[stateKind, eventKind, actionKind]{Package: "lamp", Machine: "Lamp", Rules: []fsmrt.Rule[stateKind, eventKind, actionKind]{
	{Kind: fsmrt.RuleTransition, From: 1, Event: 1, Guard: "loud", To: 2, Actions: []actionKind{1}, Label: "Off --Toggle [loud]--> On {level=3} / Beep"},
	{Kind: fsmrt.RuleTransition, From: 1, Event: 1, Guard: "else", To: 2, Label: "Off --Toggle [else]--> On"},
	{Kind: fsmrt.RuleReject, From: 1, Event: 2, Reason: "it is off", Label: "Off --Poke--> rejected: it is off"},
	{Kind: fsmrt.RuleTransition, From: 2, Event: 1, To: 1, Effect: "dim", Label: "On --Toggle--> Off {dim}"},
	{Kind: fsmrt.RuleIgnore, From: 2, Event: 2, Label: "On --Poke--> ignored"},
}}

// lamp is the machine; broken names what is wrong with it, if anything.
type lamp struct {
	core   fsmrt.Core[stateKind, eventKind, actionKind]
	script *fsmtest.Script
	acts   *[]action
	level  int // On's
	broken string
}

func (m *lamp) Kind() stateKind { return m.core.State }
func (m *lamp) State() state {
	switch m.core.State {
	case 1:
		return off{}
	case 2:
		return on{Level: m.level}
	}
	return nil
}
func (m *lamp) SetObserver(o func(fsmrt.Step[stateKind, eventKind])) { m.core.SetObserver(o) }
func (m *lamp) Save() ([]byte, error)                                { return desc.Save(m.State(), nil, 0) }

// unmarshalState reads a state of the lamp, strictly.
func unmarshalState(data []byte) (state, error) {
	return fsmrt.Unmarshal(&desc, "state", data, map[string]fsmrt.Decoder[state]{
		"off": fsmrt.Value[off, state](&desc, "state off"),
		"on":  fsmrt.Value[on, state](&desc, "state on"),
	})
}

func (m *lamp) HandleEvent(ev event) error {
	if m.core.Busy {
		return m.core.Reentrant()
	}
	switch m.core.State {
	case 1:
		switch ev.(type) {
		case *toggle:
			m.core.State = 2
			if m.script.Guard("loud") {
				m.level = 3
				if m.broken == "constant" {
					m.level = 2
				}
				m.core.Start(0, 1)
				*m.acts = append(*m.acts, &beep{})
			} else {
				m.core.Start(1, 1)
				if m.broken == "actions" {
					*m.acts = append(*m.acts, &beep{})
				}
			}
			return m.core.Finish()
		case *poke:
			if m.broken == "rejection" {
				return m.core.Ignore(2)
			}
			return m.core.Reject(2)
		}
	case 2:
		switch ev.(type) {
		case *toggle:
			if m.broken != "effect" {
				m.script.Effect("dim")
			}
			m.core.State, m.level = 1, 0
			m.core.Start(3, 2)
			return m.core.Finish()
		case *poke:
			return m.core.Ignore(4)
		}
	}
	return m.core.Unhandled(ev)
}

func subject(broken string) *fsmtest.Subject[state, event, action, stateKind, eventKind, actionKind] {
	restore := func(s state, script *fsmtest.Script) (fsmtest.Machine[state, event, stateKind, eventKind], *[]action, error) {
		if s == nil {
			return nil, nil, errors.New("lamp: cannot restore <nil>")
		}
		m := &lamp{core: fsmrt.NewCore(&desc, s.Kind()), script: script, acts: &[]action{}, broken: broken}
		if s, ok := s.(on); ok {
			m.level = s.Level
		}
		return m, m.acts, nil
	}
	load := func(data []byte, script *fsmtest.Script) (fsmtest.Machine[state, event, stateKind, eventKind], *[]action, error) {
		s, err := fsmrt.LoadState(&desc, data, nil, nil, unmarshalState)
		if err != nil {
			return nil, nil, err
		}
		return restore(s, script)
	}
	return &fsmtest.Subject[state, event, action, stateKind, eventKind, actionKind]{
		Rules:     desc.Rules,
		States:    []state{off{}, on{}},
		Events:    []event{&toggle{}, &poke{}},
		Guards:    []string{"loud"},
		NilEvents: nil,
		Zero:      func() fsmtest.Machine[state, event, stateKind, eventKind] { return &lamp{} },
		New: func(script *fsmtest.Script) (fsmtest.Machine[state, event, stateKind, eventKind], *[]action, error) {
			return restore(off{}, script)
		},
		Restore: restore,
		Load:    load,
	}
}

var ways = []fsmtest.Way[state, event, stateKind, actionKind]{
	{From: off{}, Event: &toggle{}, Tests: []string{"loud"}, Rules: []int{0}, To: 2, Actions: []actionKind{1}, After: on{Level: 3}},
	{From: off{}, Event: &toggle{}, Tests: []string{"!loud"}, Rules: []int{1}, To: 2},
	{From: off{}, Event: &poke{}, Rules: []int{2}, To: 1},
	{From: on{}, Event: &toggle{}, Rules: []int{3}, To: 1, Effects: []string{"dim"}},
	{From: on{}, Event: &poke{}, Rules: []int{4}, To: 2},
}

var nodes = []fsmtest.Node[event, actionKind]{
	{Up: -1, Event: &toggle{}, Tests: []string{"loud"}, Rules: []int{0}, Actions: []actionKind{1}},
	{Up: -1, Event: &toggle{}, Tests: []string{"!loud"}, Rules: []int{1}},
	{Up: -1, Event: &poke{}, Rules: []int{2}},
	{Up: 0, Event: &toggle{}, Rules: []int{3}, Effects: []string{"dim"}},
	{Up: 0, Event: &poke{}, Rules: []int{4}},
}

// TestDrivers runs every driver on the lamp, or, in the child process of
// TestDriversFail, on the broken lamp its environment names.
func TestDrivers(t *testing.T) {
	s := subject(os.Getenv("FSMTEST_BROKEN"))
	fsmtest.Rules(t, s, ways)
	fsmtest.Paths(t, s, nodes, []int{0, 1, 2, 3, 4})
	// A rule with no path from New (-1) is left to Rules.
	fsmtest.Paths(t, s, nodes[:4], []int{0, 1, 2, 3, -1})
	fsmtest.EveryPair(t, s)
	fsmtest.Random(t, s)
	fsmtest.Errors(t, s)
	fsmtest.JSON(t, []state{off{}, on{}}, unmarshalState)
	fsmtest.Saved(t, s)
	fsmtest.Recorded(t, []action{&beep{}}, []action{&beep{}})
}

// TestDriversFail runs TestDrivers in a child process on broken lamps and
// checks that the drivers fail, saying what is wrong.
func TestDriversFail(t *testing.T) {
	if os.Getenv("FSMTEST_BROKEN") != "" {
		t.Skip("the child process")
	}
	tests := []struct {
		broken string
		want   []string
	}{
		{"actions", []string{"actions handed to the Handler", "--- FAIL: TestDrivers/Off_--Toggle_[else]-->_On"}},
		{"rejection", []string{"--- FAIL: TestDrivers/Off_--Poke-->_rejected:_it_is_off", "Expected error with \"event rejected\" in chain but got nil"}},
		{"effect", []string{"effects run"}},
		{"constant", []string{"the state after the way, with the constants its rules set", `"level":2`}},
	}
	for _, tt := range tests {
		t.Run(tt.broken, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestDrivers$", "-test.count=1")
			cmd.Env = append(os.Environ(), "FSMTEST_BROKEN="+tt.broken)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "the drivers pass a broken machine:\n%s", out)
			for _, w := range tt.want {
				assert.Contains(t, string(out), w)
			}
		})
	}
}

// TestScript checks the fake behaviour's answers: in a test's order, with
// the guards tested out of order noted, or from a table.
func TestScript(t *testing.T) {
	s := subject("")
	m, acts, err := s.Restore(off{}, &fsmtest.Script{})
	require.NoError(t, err)
	require.NoError(t, m.HandleEvent(&toggle{}))
	assert.Empty(t, *acts, "a script without answers: every guard is false")
}
