package fsm_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
	"github.com/fsmgen/fsmgen/internal/compiler/testspecs"
)

// TestPathsShortest checks the witness path of every rule of every valid
// spec in the repository (the real specs, the examples, the golden specs
// and the conformance corpus): it starts in the initial state, each step
// starts where the last ended, its last step fires the rule, and it is as
// short as a breadth-first search of its own, over the states at rest,
// says it can be.
func TestPathsShortest(t *testing.T) {
	specs, err := testspecs.Valid("../../..")
	require.NoError(t, err)
	corpus, err := filepath.Glob("../conformance/testdata/*.txtar")
	require.NoError(t, err)
	specs = append(specs, testspecs.FromArchives(t, corpus)...)
	checked := 0
	for _, s := range specs {
		sf, diags := spec.Parse(s.Name, s.Src)
		if sf == nil || diags.HasErrors() {
			continue
		}
		m, _ := fsm.Build(sf, fsm.Env{})
		if m == nil {
			continue // a spec that must fail, or one whose types need its module
		}
		checked++
		dist := distances(m)
		require.Len(t, m.Paths, len(m.AllRules()), "%s: a path for every rule", s.Name)
		for _, p := range m.Paths {
			if len(p.Steps) == 0 {
				// A parallel state's rule for configurations New never
				// leads to (see restoredOnly): its rule decides always.
				require.NotNil(t, p.Rule.From.Regions, "%s: %s has no path", s.Name, p.Rule.Label)
				require.Nil(t, p.Rule.Guard, "%s: %s has no path", s.Name, p.Rule.Label)
				continue
			}
			at := m.Initial
			for i, w := range p.Steps {
				require.Equal(t, at, w.From, "%s: %s: step %d starts where the last ended", s.Name, p.Rule.Label, i)
				at = w.To
			}
			assert.Contains(t, p.Steps[len(p.Steps)-1].Rules, p.Rule, "%s: %s: the last step fires the rule", s.Name, p.Rule.Label)
			if p.Rule.History != nil || m.Regional() {
				// A rule into a history fires as one of its variants by
				// what the machine remembers, which the search below,
				// over the states at rest alone, does not know: the
				// generated TestPaths runs these paths.
				continue
			}
			events := len(p.Steps)
			if p.Steps[0].Event == nil {
				// New's own step, the eventless rules of an initial state
				// that waits or is transient: no event.
				events--
			}
			best := -1
			if newTakes(m, p.Rule) {
				best = 0
			}
			for _, leaf := range m.States {
				if d, ok := dist[leaf]; ok && takes(m, leaf, p.Rule) && (best < 0 || d+1 < best) {
					best = d + 1
				}
			}
			assert.Equal(t, best, events, "%s: %s: the shortest path", s.Name, p.Rule.Label)
		}
	}
	assert.Greater(t, checked, 30, "specs checked")
}

// distances returns how many events it takes at least to rest in each
// state from the initial one: a breadth-first search over every rule's
// target, through transient states.
func distances(m *fsm.Machine) map[*fsm.State]int {
	dist := map[*fsm.State]int{}
	var queue []*fsm.State
	for _, s := range rests(m.Initial) {
		// (New tests the eventless rules of an initial state that waits)
		if _, ok := dist[s]; !ok {
			dist[s] = 0
			queue = append(queue, s)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, r := range m.Rules {
			if r.Kind != fsm.Transition || r.To == nil || !takes(m, s, r) {
				continue
			}
			for _, to := range rests(r.To) {
				if _, ok := dist[to]; !ok {
					dist[to] = dist[s] + 1
					queue = append(queue, to)
				}
			}
		}
	}
	return dist
}

// newTakes reports whether New's own step can fire rule r: an eventless
// rule of an initial state that waits or is transient, or of a state that
// waits or is transient which those lead to.
func newTakes(m *fsm.Machine, r *fsm.Rule) bool {
	seen := map[*fsm.State]bool{}
	var reach func(s *fsm.State) bool
	reach = func(s *fsm.State) bool {
		if s.Choice == nil || seen[s] {
			return false
		}
		seen[s] = true
		for _, q := range s.Choice.Rules {
			if q == r || q.To != nil && reach(q.To) {
				return true
			}
		}
		return false
	}
	return (m.Initial.Waits || m.Initial.Transient) && reach(m.Initial)
}

// rests returns the states at rest a move into s can end in: s, or for a
// transient state those its eventless rules lead to (and s too, for a
// final state whose done transition every guard may refuse).
func rests(s *fsm.State) []*fsm.State {
	if s.Choice == nil {
		return []*fsm.State{s}
	}
	var out []*fsm.State
	if !s.Transient {
		out = append(out, s)
	}
	for _, r := range s.Choice.Rules {
		out = append(out, rests(r.To)...)
	}
	return out
}

// takes reports whether an event sent in state s (at rest) can fire rule
// r in its step: a rule of s's own cells or of their fallbacks, of a
// shared cell s leaves an event to, of a timer of s's, the stale-timer rule, or a rule of a
// transient state one of those leads to.
func takes(m *fsm.Machine, s *fsm.State, r *fsm.Rule) bool {
	if s.Transient {
		return false
	}
	var cells []*fsm.Cell
	cells = append(append(append(cells, s.Handles...), s.Refuses...), s.Inherited...)
	for _, a := range s.Path() {
		for _, t := range a.Timers {
			cells = append(cells, t.Cell)
		}
	}
	if r == m.Stale {
		return true
	}
	var reach func(c *fsm.Cell, depth int) bool
	reach = func(c *fsm.Cell, depth int) bool {
		if c.Fallback != nil && reach(c.Fallback, depth) {
			return true // when none of c's guards holds
		}
		for _, q := range c.Rules {
			if q == r {
				return true
			}
			if depth < 16 && q.Kind == fsm.Transition && q.To != nil && q.To.Choice != nil && reach(q.To.Choice, depth+1) {
				return true
			}
			if depth < 16 && q.Kind != fsm.Reject && q.To == nil && s.Waits && c != s.Choice && reach(s.Choice, depth+1) {
				return true // a rule that keeps a state that waits: its eventless rules follow
			}
		}
		return false
	}
	for _, c := range cells {
		if reach(c, 0) {
			return true
		}
	}
	return false
}

// TestUnreachableRulesReported checks that a spec edit that cuts a state
// off reports it with the reason and the rules that can then never fire.
func TestUnreachableRulesReported(t *testing.T) {
	const src = `version: 2
machine: Lamp
package: lamp
states:
  Off:
    initial: true
  On:
    ignore: [Kick]
  Broken:
    ignore: [Flip]
events:
  Flip: {}
  Kick: {}
transitions:
  - from: Off
    on: Flip
    to: On
  - from: Off
    on: Kick
    ignore: true
  - from: On
    on: Flip
    to: Off
  - from: Broken
    on: Kick
    to: Off
`
	tests := []struct {
		name      string
		edit      func(string) string
		wantNotes []string
	}{
		{"nothing leads to it", func(s string) string { return s }, []string{
			"no rule leads to Broken",
			"so these rules never fire from Broken: Broken --Flip--> ignored; Broken --Kick--> Off",
		}},
		{"only an unreachable state leads to it", func(s string) string {
			return strings.Replace(s, "  On:\n    ignore: [Kick]\n", "  On:\n    ignore: [Kick]\n  Gone:\n    ignore: [Flip]\n", 1) +
				"  - from: Gone\n    on: Kick\n    to: Broken\n"
		}, []string{
			"the rules that lead to Broken start only in states that are unreachable too: Gone",
			"so these rules never fire from Broken",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sf, diags := spec.Parse("lamp.yaml", []byte(tt.edit(src)))
			require.False(t, diags.HasErrors(), "%s", diags)
			m, diags := fsm.Build(sf, fsm.Env{})
			require.Nil(t, m)
			var notes []string
			for _, d := range diags {
				if strings.Contains(d.Msg, "state Broken is unreachable") {
					notes = d.Notes
				}
			}
			require.Len(t, notes, len(tt.wantNotes), "%s", diags)
			for i, w := range tt.wantNotes {
				assert.Contains(t, notes[i], w)
			}
		})
	}
}
