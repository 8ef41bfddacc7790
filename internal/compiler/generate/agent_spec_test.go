package generate_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// TestAgentSpecForgottenTransition removes each transition of
// spec/agent.yaml in turn and checks that the spec then fails with every
// state × event pair it no longer handles (for a rule of a composite state,
// each of its states), at the state's position; a state that resolves
// every other event with "ignore: *" takes the event that way instead, and
// an event a state around them defers is deferred by them instead, or
// fails as deferred with no transition when the row was its only one.
func TestAgentSpecForgottenTransition(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../../spec/agent.yaml")
	require.NoError(t, err)
	whole, err := generate.Load("../../../spec/agent.yaml")
	require.NoError(t, err)
	require.NotNil(t, whole.Machine, "%s", whole.Diags)
	m := whole.Machine
	lines := strings.SplitAfter(string(src), "\n")
	var starts []int
	for i, l := range lines {
		if strings.HasPrefix(l, "  - from: ") {
			starts = append(starts, i)
		}
	}
	require.NotEmpty(t, starts)
	fromRE := regexp.MustCompile(`^  - from: "?([^"\n]+)"?`)
	onRE := regexp.MustCompile(`^    on: (\w+)`)
	for n, start := range starts {
		end := len(lines)
		if n+1 < len(starts) {
			end = starts[n+1]
		}
		from := fromRE.FindStringSubmatch(lines[start])[1]
		on := onRE.FindStringSubmatch(lines[start+1])
		if on == nil {
			continue // the eventless choice of a transient state: removing it is a different error
		}
		t.Run(from+"×"+on[1], func(t *testing.T) {
			t.Parallel()
			edited := strings.Join(append(append([]string(nil), lines[:start]...), lines[end:]...), "")
			dir := tempModule(t)
			path := filepath.Join(dir, "agent.yaml")
			require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
			res, err := generate.Load(path)
			require.NoError(t, err)
			var leaves []*fsm.State
			for _, s := range m.States {
				for a := s; a != nil; a = a.Parent {
					if a.Name == from && !s.Transient {
						leaves = append(leaves, s)
					}
				}
			}
			require.NotEmpty(t, leaves, "state %s", from)
			if rows := others(m, leaves[0]); len(leaves) == 1 && rows {
				assert.NotContains(t, res.Diags.Error(), "does not handle event "+on[1], "%s resolves every other event with \"*\"", from)
				return
			}
			if res.Machine != nil {
				// A state around the leaves defers the event (Running
				// defers UserInput): without their row, they defer it.
				for _, s := range leaves {
					assert.True(t, defers(res.Machine, s.Name, on[1]), "%s must defer %s, or the spec fail", s.Name, on[1])
				}
				return
			}
			msg := res.Diags.Error()
			if deferred(m, on[1]) && !strings.Contains(msg, "does not handle event "+on[1]) {
				// A state around the leaves defers the event (Running
				// defers UserInput): without their row they defer it, or,
				// the row the event's only transition, the spec fails as
				// deferred with no transition.
				return
			}
			for _, s := range leaves {
				want := regexp.MustCompile(regexp.QuoteMeta(path) + `:\d+:\d+: state ` + s.Name + ` does not handle event ` + on[1])
				assert.Regexp(t, want, msg)
			}
		})
	}
}

// deferred reports whether some state of m defers the event named e.
func deferred(m *fsm.Machine, e string) bool {
	if m.Deferral == nil {
		return false
	}
	for _, de := range m.Deferral.Events {
		if de.Name == e {
			return true
		}
	}
	return false
}

// defers reports whether m's state named s defers the event named e.
func defers(m *fsm.Machine, s, e string) bool {
	if m.Deferral == nil {
		return false
	}
	for _, ds := range m.Deferral.States {
		if ds.State.Name != s {
			continue
		}
		for _, de := range ds.Events {
			if de.Name == e {
				return true
			}
		}
	}
	return false
}

// others reports whether state s resolves every other event with
// "ignore: *" or "reject: *".
func others(m *fsm.Machine, s *fsm.State) bool {
	for _, r := range m.Rules {
		if r.Others && r.From == s {
			return true
		}
	}
	return false
}
