package diff_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
)

// shopSpec is an order whose Processing state is parallel, each region
// ending in a final state, and which completes it with its done
// transition.
const shopSpec = `version: 2
machine: Shop
package: shop
output:
  go: .
states:
  Cart:
    initial: true
    ignore: [Pay, Ship]
  Processing:
    parallel: true
    ignore: [Checkout, Pay, Ship]
    done:
      to: Closed
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
    ignore: [Pay, Ship, Cancel]
events:
  Checkout: {}
  Pay: {}
  Ship: {}
  Cancel: {}
transitions:
  - from: Cart
    on: Checkout
    to: Processing
  - from: [Cart, Processing]
    on: Cancel
    to: Closed
  - from: Closed
    on: Checkout
    to: Processing
  - from: Unpaid
    on: Pay
    to: Paid
  - from: Packing
    on: Ship
    to: Sent
`

// TestCompareParallelDone checks how fsmgen diff classifies a done
// transition given to a parallel state and a region's state made final or
// no longer final: each changes what the machine does, and those that
// make a configuration complete the parallel state break the machines
// saved in it (the machine never rests with every region final).
func TestCompareParallelDone(t *testing.T) {
	t.Parallel()
	noDone := strings.Replace(shopSpec, "    done:\n      to: Closed\n", "    ignore: [Close]\n", 1)
	noDone = strings.Replace(noDone, "    ignore: [Checkout, Pay, Ship]\n    ignore: [Close]\n", "    ignore: [Checkout, Pay, Ship]\n", 1)
	// Sent is no longer final: Shipping ends in Delivered.
	delivered := strings.NewReplacer(
		"          Sent:\n            final: true\n", "          Sent: {}\n          Delivered:\n            final: true\n",
		"  Ship: {}\n", "  Ship: {}\n  Deliver: {}\n",
		"    ignore: [Pay, Ship]\n", "    ignore: [Pay, Ship, Deliver]\n",
		"    ignore: [Checkout, Pay, Ship]\n", "    ignore: [Checkout, Pay, Ship, Deliver]\n",
		"    ignore: [Pay, Ship, Cancel]\n", "    ignore: [Pay, Ship, Cancel, Deliver]\n",
		"    on: Ship\n    to: Sent\n", "    on: Ship\n    to: Sent\n  - from: Sent\n    on: Deliver\n    to: Delivered\n",
	).Replace(shopSpec)
	// ... and Delivered made final again, in place of Sent.
	sentFinal := strings.Replace(delivered, "          Sent: {}\n          Delivered:\n            final: true\n", "          Sent:\n            final: true\n          Delivered: {}\n", 1)
	sentFinal = strings.Replace(sentFinal, "  - from: Sent\n    on: Deliver\n    to: Delivered\n", "  - from: Packing\n    on: Deliver\n    to: Delivered\n  - from: Delivered\n    on: Ship\n    to: Sent\n", 1)
	tests := []struct {
		name     string
		old, new string
		breaks   int
		want     []want
	}{
		{
			name: "done added", old: noDone, new: shopSpec, breaks: 2,
			want: []want{
				{subject: "state Processing", what: "gained a done transition", verdicts: []string{"saved_states=breaks"}},
				{subject: "rule Processing (done)", what: "now to Closed, was nothing", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name: "done removed", old: shopSpec, new: noDone, breaks: 1,
			want: []want{
				{subject: "rule Processing (done)", what: "now nothing, was to Closed", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name: "a final state moved", old: delivered, new: sentFinal, breaks: 5,
			want: []want{
				{subject: "state Sent", what: "made final in region Shipping of Processing", verdicts: []string{"saved_states=breaks", "behaviour=breaks"}},
				{subject: "state Delivered", what: "no longer final in region Shipping of Processing", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Packing × Deliver", what: "now to Delivered, was ignored", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Sent × Deliver", what: "now ignored, was to Delivered", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Delivered × Ship", what: "now to Sent, was ignored", verdicts: []string{"behaviour=breaks"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := diff.Compare(machine(t, "old.yaml", tt.old), machine(t, "new.yaml", tt.new))
			assert.ElementsMatch(t, tt.want, changes(rep))
			assert.Equal(t, tt.breaks, rep.Breaks(), "breaking changes")
		})
	}
}

// discSpec is a player whose Active state is parallel, with a composite
// state inside region Drive, Loading, whose final state Found completes
// it; %DONE% stands where Loading's done transition goes.
const discSpec = `version: 2
machine: Disc
package: disc
output:
  go: .
states:
  Idle:
    initial: true
    ignore: [Eject, Ready, Play, Mute]
  Active:
    parallel: true
    ignore: [Insert, Ready, Play, Mute]
    states:
      Drive:
        states:
          Loading:
            initial: true
%DONE%
            states:
              Seeking:
                initial: true
              Found:
                final: true
          Playing: {}
      Sound:
        states:
          Quiet:
            initial: true
          Loud: {}
events:
  Insert: {}
  Eject: {}
  Ready: {}
  Play: {}
  Mute: {}
transitions:
  - from: Idle
    on: Insert
    to: Active
  - from: Active
    on: Eject
    to: Idle
  - from: Seeking
    on: Ready
    to: Found
  - from: Quiet
    on: Mute
    to: Loud
  - from: Loud
    on: Play
    to: Quiet
`

// TestCompareRegionDone checks how fsmgen diff classifies a done
// transition given to a composite state inside a region, or taken from
// it: its final state no longer rests (a machine saved with the region
// in it no longer loads), and what the region does there changes.
func TestCompareRegionDone(t *testing.T) {
	t.Parallel()
	resting := strings.Replace(discSpec, "%DONE%\n", "", 1) +
		"  - from: Found\n    on: Play\n    to: Playing\n"
	done := strings.Replace(discSpec, "%DONE%\n", "            done:\n              to: Playing\n", 1)
	tests := []struct {
		name     string
		old, new string
		breaks   int
		want     []want
	}{
		{
			name: "done added", old: resting, new: done, breaks: 2,
			want: []want{
				{subject: "state Found", what: "made final in Loading, whose done transition leaves it at once", verdicts: []string{"saved_states=breaks"}},
				{subject: "rule Found (its choice)", what: "now to Playing, was nothing", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name: "done removed", old: done, new: resting, breaks: 1,
			want: []want{
				{subject: "rule Found (its choice)", what: "now nothing, was to Playing", verdicts: []string{"behaviour=breaks"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := diff.Compare(machine(t, "old.yaml", tt.old), machine(t, "new.yaml", tt.new))
			assert.ElementsMatch(t, tt.want, changes(rep))
			assert.Equal(t, tt.breaks, rep.Breaks(), "breaking changes")
		})
	}
}
