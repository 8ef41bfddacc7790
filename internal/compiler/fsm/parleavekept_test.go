package fsm_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keptSpec is a parallel state On of regions First, Mid and Last, whose
// state M leaves On on Go (M2 does not); the other regions' rows are
// inserted where %ROWS% stands and their lists where %F%, %F2% and %L%
// stand.
const keptSpec = `version: 2
machine: Kept
package: kept
states:
  Off:
    initial: true
    ignore: [Go, A, B, C]
  On:
    parallel: true
    ignore: [Go, A, B, C]
    states:
      First:
        states:
          F: {initial: true%F%}
          F2: {%F2%}
          F3: {}
      Mid:
        states:
          M: {initial: true}
          M2: {}
      Last:
        states:
          L: {initial: true%L%}
          L2: {}
          L3: {}
events: {Go: {}, Start: {}, A: {}, B: {}, C: {}}
transitions:
  - {from: Off, on: Start, to: On}
  - {from: On, on: Start, to: Off}
  - {from: F, on: A, to: F2}
  - {from: M, on: B, to: M2}
  - {from: L, on: C, to: L2}
  - {from: F2, on: A, to: F3}
  - {from: L2, on: C, to: L3}
  - {from: M, on: Go, to: Off}
%ROWS%
`

// TestKeptRows checks where region Mid keeps its row that leaves On
// (its chain then holds a branch that leaves, Rule.Leaves) and where the
// row is On's alone, tried once no region took Go: On's only where the
// other regions with a rule for Go come before Mid's and move within
// themselves (SCXML 1.0 §3.13, removeConflictingTransitions).
func TestKeptRows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		rows, f, f2, l string
		kept           bool
	}{
		{name: "no other region", kept: false},
		{name: "an earlier region moves", rows: "  - {from: F, on: Go, to: F2}", kept: false},
		{name: "an earlier region ignores", f: ", ignore: [Go]", kept: true},
		{name: "a later region moves", rows: "  - {from: L, on: Go, to: L2}", kept: true},
		{name: "a later region ignores", l: ", ignore: [Go]", kept: true},
		{name: "a later region leaves too", rows: "  - {from: L, on: Go, to: Off}", kept: false},
		{name: "a later region leaves too and moves in its other state", rows: "  - {from: L, on: Go, to: Off}\n  - {from: L2, on: Go, to: L}", kept: true},
		{name: "an earlier region leaves too and ignores in its other state", rows: "  - {from: F, on: Go, to: Off}", f2: "ignore: [Go]", kept: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := strings.NewReplacer("%ROWS%", tc.rows, "%F%", tc.f, "%F2%", tc.f2, "%L%", tc.l).Replace(keptSpec)
			m, diags := built(t, "kept.yaml", src)
			require.False(t, diags.HasErrors(), "%s", diags)
			var chain []string
			for _, reg := range m.Regions {
				for _, s := range reg.Leaves {
					if c := s.Cell(m.Events[0]); s.Name == "M" && c != nil {
						for _, r := range c.Rules {
							if r.Leaves != nil {
								chain = append(chain, r.Leaves.Label)
							}
						}
					}
				}
			}
			if !tc.kept {
				assert.Empty(t, chain, "the row is On's alone")
				return
			}
			assert.Equal(t, []string{"M --Go--> Off"}, chain)
		})
	}
}
