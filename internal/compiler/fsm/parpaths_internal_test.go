package fsm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// fanSpec is a parallel state whose regions reach their last states only
// after several steps each.
const fanSpec = `version: 2
machine: Fan
package: fan
states:
  Off:
    initial: true
    ignore: [A, B]
  On:
    parallel: true
    ignore: [A, B]
    states:
      Left:
        states:
          L1: {initial: true}
          L2: {}
          L3: {}
      Right:
        states:
          R1: {initial: true}
          R2: {}
          R3: {}
events:
  Power: {}
  A: {}
  B: {}
transitions:
  - {from: Off, on: Power, to: On}
  - {from: On, on: Power, to: Off}
  - {from: L1, on: A, to: L2}
  - {from: L2, on: A, to: L3}
  - {from: R1, on: B, to: R2}
  - {from: R2, on: B, to: R3}
`

// TestPathSearchLimit: a search that reaches its limit before every rule
// has a path reports the rules it did not find as such, not as rules
// that can never fire; under the limit, the same machine checks. Not
// parallel: it sets pathSearchLimit.
func TestPathSearchLimit(t *testing.T) {
	build := func() *Machine {
		m, diags := buildText(t, "fan.yaml", fanSpec)
		if m != nil {
			return m
		}
		var msgs []string
		for _, d := range diags {
			msgs = append(msgs, d.Msg)
		}
		t.Log(msgs)
		assert.Contains(t, diags.Error(), "rule L2 --A--> L3 fires in none of the first 3 configurations the machine reaches")
		assert.NotContains(t, diags.Error(), "can never fire")
		return nil
	}
	require.NotNil(t, build(), "within the limit")
	defer func(limit int) { pathSearchLimit = limit }(pathSearchLimit)
	pathSearchLimit = 3
	require.Nil(t, build(), "past the limit")
}

// waitSpec is a parallel state whose regions' states wait on guarded
// eventless rows: each step that keeps it tests them, one microstep
// after another.
const waitSpec = `version: 2
machine: Wait
package: wait
states:
  Off:
    initial: true
  On:
    parallel: true
    states:
      Left:
        states:
          L1: {initial: true}
          L2: {}
          L3: {}
      Right:
        states:
          R1: {initial: true}
          R2: {}
events:
  Power: {}
guards:
  a: {}
  b: {}
  c: {}
transitions:
  - {from: Off, on: Power, to: On}
  - {from: On, on: Power, to: Off}
  - {from: L1, guards: [{if: a, to: L2}]}
  - {from: L2, guards: [{if: b, to: L3}]}
  - {from: R1, guards: [{if: c, to: R2}]}
`

// TestMicrostepLimit: witness paths that go past the limit of microsteps
// give one error naming the parallel state, not the rules the search did
// not reach as rules that can never fire; under the limit, the same
// machine checks. Not parallel: it sets microstepLimit.
func TestMicrostepLimit(t *testing.T) {
	build := func() (*Machine, string) {
		m, diags := buildText(t, "wait.yaml", waitSpec)
		return m, diags.Error()
	}
	m, msgs := build()
	require.NotNil(t, m, "within the limit: %s", msgs)
	defer func(limit int) { microstepLimit = limit }(microstepLimit)
	microstepLimit = 2
	m, msgs = build()
	require.Nil(t, m, "past the limit")
	assert.Contains(t, msgs, "wait.yaml:7:3: the checker gives up on parallel state On after 2 microsteps of eventless rules")
	assert.NotContains(t, msgs, "can never fire")
	assert.NotContains(t, msgs, "fires in none")
}

// buildText builds the machine of spec src, read as file name.
func buildText(t *testing.T, name, src string) (*Machine, diag.List) {
	t.Helper()
	sf, diags := spec.Parse(name, []byte(src))
	require.False(t, diags.HasErrors(), diags.Error())
	return Build(sf, Env{})
}
