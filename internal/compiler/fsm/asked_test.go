package fsm_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/testspecs"
)

// answers returns, by guard, the answers way w's tests give it.
func answers(w *fsm.Way) map[string]map[bool]bool {
	out := map[string]map[bool]bool{}
	for _, tt := range w.Tests {
		if out[tt.Guard.Name] == nil {
			out[tt.Guard.Name] = map[bool]bool{}
		}
		out[tt.Guard.Name][tt.Holds] = true
	}
	return out
}

// TestWaitingRegionsAskOnce checks that the ways of a step through the
// microsteps of states that wait in n regions give each guard one answer:
// a pure guard asked again with the same values answers as before, so the
// step that enters Run takes one way per set of guards that hold (2^n),
// not one per order in which they could come to hold.
func TestWaitingRegionsAskOnce(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 3, 4, 6} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			m, diags := fsm.Build(parsed(t, "probes.yaml", testspecs.WaitingRegions(n)), fsm.Env{})
			require.False(t, diags.HasErrors(), "%s", diags)
			entering := 0
			for _, w := range m.Ways {
				for g, got := range answers(w) {
					assert.Len(t, got, 1, "%s: %s answers both ways", labels(w), g)
				}
				if w.From.Name == "Off" && w.Event != nil && w.Event.Name == "Go" {
					entering++
				}
			}
			assert.Equal(t, 1<<n, entering, "ways of Off --Go--> Run")
		})
	}
}

// rewritten is a machine whose region A waits in A1 on full, which reads
// Run's level, and whose region B's transient state B1 fills it: full,
// false when Run is entered, is asked again once level was written, and
// may hold then.
const rewritten = `version: 2
machine: Tank
package: tank
states:
  Off: {initial: true}
  Run:
    parallel: true
    fields: {level: int}
    states:
      A:
        states:
          A1: {initial: true, ignore: [Go]}
          A2: {ignore: [Go]}
      B:
        states:
          B1: {initial: true, transient: true}
          B2: {ignore: [Go]}
events: {Go: {}, Stop: {}}
guards:
  full:
    reads: {level: int}
effects:
  fill:
    reads: {level: int}
    sets: {level: int}
transitions:
  - {from: Off, on: Go, to: Run, set: {level: 0}}
  - {from: Off, on: Stop, ignore: true}
  - {from: Run, on: Stop, to: Off}
  - from: A1
    guards: [{if: full, to: A2}]
  - {from: B1, to: B2, effect: fill}
`

// TestRewrittenGuardAsksAnew checks that a guard whose values a rule of
// the step wrote since it was asked may answer anew.
func TestRewrittenGuardAsksAnew(t *testing.T) {
	t.Parallel()
	m, diags := fsm.Build(parsed(t, "tank.yaml", []byte(rewritten)), fsm.Env{})
	require.False(t, diags.HasErrors(), "%s", diags)
	var seen []string
	for _, w := range m.Ways {
		if w.From.Name != "Off" || w.Event == nil || w.Event.Name != "Go" {
			continue
		}
		var tests []string
		for _, tt := range w.Tests {
			tests = append(tests, fmt.Sprintf("%s=%t", tt.Guard.Name, tt.Holds))
		}
		seen = append(seen, strings.Join(tests, " "))
	}
	assert.Contains(t, seen, "full=false full=true", "full, false before B1 filled level, holds after")
}
