package fsm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// deskSpec holds parallel state Busy inside region Side of Work: Busy's
// own rule for Flip has a guard, as has a rule of its region Lamp.
const deskSpec = `version: 2
machine: Desk
package: desk
states:
  Idle:
    initial: true
    ignore: [Flip]
  Work:
    parallel: true
    ignore: [Flip]
    states:
      Side:
        states:
          Calm: {initial: true}
          Busy:
            parallel: true
            states:
              Pen:
                states:
                  Capped: {initial: true}
                  Open: {}
              Lamp:
                states:
                  Off: {initial: true}
                  On: {}
      Clock:
        states:
          Tick: {initial: true}
events:
  Go: {}
  Flip: {}
guards:
  bright: {}
  tired: {}
transitions:
  - {from: Idle, on: Go, to: Work}
  - {from: Work, on: Go, to: Idle}
  - {from: Calm, on: Flip, to: Busy}
  - {from: Capped, on: Flip, to: Open}
  - from: Off
    on: Flip
    guards:
      - {if: bright, to: On}
  - from: Busy
    on: Flip
    guards:
      - {if: tired, to: Calm}
`

// TestPathsPickOrder: the witness paths answer the guards of a parallel
// state inside a region as the generated code asks them (fsm.PickOrder):
// its regions' first, then its own rule's, and those not at all when one
// of its regions takes the event (a descendant's transition preempts
// its ancestor's). The paths answered Busy's guard first, and also when
// region Pen's rule preempted it, so the generated TestRules failed.
func TestPathsPickOrder(t *testing.T) {
	t.Parallel()
	sf, diags := spec.Parse("desk.yaml", []byte(deskSpec))
	require.False(t, diags.HasErrors(), diags.Error())
	m, diags := fsm.Build(sf, fsm.Env{})
	require.NotNil(t, m, diags.Error())
	tests := map[string]string{}
	for _, p := range m.Paths {
		var got string
		for _, tt := range p.Steps[len(p.Steps)-1].Tests {
			got += tt.String() + " "
		}
		tests[p.Rule.Label] = got
	}
	for _, tt := range []struct{ rule, tests string }{
		{rule: "Capped --Flip--> Open", tests: "!bright "},
		{rule: "Off --Flip [bright]--> On", tests: "bright "},
		{rule: "Busy --Flip [tired]--> Calm", tests: "!bright tired "},
	} {
		assert.Equal(t, tt.tests, tests[tt.rule], "the guards answered on the last step of the path of %s", tt.rule)
	}
}
