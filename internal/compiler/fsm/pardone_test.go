package fsm_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// parDoneSpec is a parallel state whose regions end in final states; done
// is inserted where %DONE% stands.
const parDoneSpec = `version: 2
machine: Shop
package: shop
states:
  Cart:
    initial: true
    ignore: [Pay, Ship]
  Processing:
    parallel: true
    ignore: [Checkout, Pay, Ship]
%DONE%
    states:
      Payment:
        states:
          Unpaid:
            initial: true
          Paid:
            final: true
      Shipping:
        states:
          Packing:
            initial: true
          Sent:
            final: true
  Closed:
    terminal: true
    ignore: [Checkout, Pay, Ship, Close]
events:
  Checkout: {}
  Pay: {}
  Ship: {}
  Close: {}
transitions:
  - from: Cart
    on: Checkout
    to: Processing
  - from: [Cart, Processing]
    on: Close
    to: Closed
  - from: Unpaid
    on: Pay
    to: Paid
  - from: Packing
    on: Ship
    to: Sent
`

// TestParallelDone builds a parallel state with final leaves in its
// regions, with and without done: without, the regions rest in them
// (SCXML drops a done.state.ID no transition takes) and nothing
// completes; with, the done transition is a rule of the parallel state,
// reached by a witness path through both regions' final states, and a way
// of TestRules takes it after the rule that ends the last region.
func TestParallelDone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, done string
		rules      []string // the rules of the way that ends Shipping last
	}{
		{name: "rests", done: ""},
		{name: "done", done: "    done:\n      to: Closed\n", rules: []string{"Packing --Ship--> Sent", "Processing --done--> Closed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := strings.Replace(parDoneSpec, "%DONE%\n", tc.done, 1)
			sf, diags := spec.Parse("shop.yaml", []byte(src))
			require.False(t, diags.HasErrors(), "%s", diags)
			m, diags := fsm.Build(sf, fsm.Env{})
			require.NotNil(t, m, "%s", diags)
			var p *fsm.State
			for _, s := range m.States {
				if s.Name == "Processing" {
					p = s
				}
			}
			require.NotNil(t, p)
			for _, reg := range p.Regions {
				require.Len(t, reg.Finals, 1, reg.Root.Name)
				assert.True(t, reg.Finals[0].Final)
			}
			var ended []string
			for _, w := range m.Ways {
				if w.Final == nil {
					continue
				}
				assert.Equal(t, "Closed", w.To.Name)
				if w.Rules[0].Label == "Packing --Ship--> Sent" {
					for _, r := range w.Rules {
						ended = append(ended, r.Label)
					}
				}
			}
			assert.Equal(t, tc.rules, ended)
			if tc.done == "" {
				assert.Nil(t, p.Completion)
				return
			}
			require.NotNil(t, p.Completion)
			done := p.Completion.Rules[0]
			found := false
			for _, path := range m.Paths {
				if path.Rule == done {
					found = true
					assert.Len(t, path.Steps, 3, "Checkout, Pay, Ship")
				}
			}
			assert.True(t, found, "a witness path reaches the done transition")
		})
	}
}

// TestParallelDoneFinalOnly builds a parallel state whose regions leave
// an event (Pay, Ship) to it only in their final states: with a done
// transition the machine never rests with every region final, so the
// event never reaches the parallel state, which needs no rule for it and
// may have none; without done, the regions rest there and it must have
// one.
func TestParallelDoneFinalOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, done, ignore string
		want               []string // the errors, in part; none: it builds
	}{
		{name: "done", done: "    done:\n      to: Closed\n", ignore: "[Checkout]"},
		{name: "done, a rule that never fires", done: "    done:\n      to: Closed\n", ignore: "[Checkout, Pay]",
			want: []string{"rule Processing --Pay--> ignored can never fire: every region leaves Pay to Processing only in its final states"}},
		{name: "rests", ignore: "[Checkout]",
			want: []string{"state Processing does not handle event Pay", "state Processing does not handle event Ship"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := strings.Replace(parDoneSpec, "%DONE%\n", tc.done, 1)
			src = strings.Replace(src, "ignore: [Checkout, Pay, Ship]", "ignore: "+tc.ignore, 1)
			// Each region takes the other's event in every state but its
			// final one.
			src = strings.Replace(src, "          Unpaid:\n            initial: true\n", "          Unpaid:\n            initial: true\n            ignore: [Ship]\n", 1)
			src = strings.Replace(src, "          Packing:\n            initial: true\n", "          Packing:\n            initial: true\n            ignore: [Pay]\n", 1)
			sf, diags := spec.Parse("shop.yaml", []byte(src))
			require.False(t, diags.HasErrors(), "%s", diags)
			m, diags := fsm.Build(sf, fsm.Env{})
			if tc.want == nil {
				require.NotNil(t, m, "%s", diags)
				assert.False(t, diags.HasErrors(), "%s", diags)
				return
			}
			require.Nil(t, m)
			for _, w := range tc.want {
				assert.Contains(t, fmt.Sprint(diags.Errors()), w)
			}
		})
	}
}
