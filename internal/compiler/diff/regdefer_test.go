package diff_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
)

// radioSpec is a radio whose region Sound defers Traffic while quiet,
// which region Band takes in FM (the cases move FM's rule to AM and
// remove the deferral).
const radioSpec = `version: 2
machine: Radio
package: radio
output:
  go: .
states:
  Off:
    initial: true
    ignore: [Tune, Mute, Traffic]
  On:
    parallel: true
    ignore: [Traffic]
    states:
      Sound:
        states:
          Loud: {initial: true}
          Quiet:
            defer: [Traffic]
      Band:
        states:
          FM: {initial: true}
          AM: {}
events:
  Power: {}
  Tune: {}
  Mute: {}
  Traffic: {}
actions:
  Announce: {}
transitions:
  - from: Off
    on: Power
    to: On
  - from: On
    on: Power
    to: Off
  - from: Loud
    on: Mute
    to: Quiet
  - from: Quiet
    on: Mute
    to: Loud
  - from: FM
    on: Tune
    to: AM
  - from: AM
    on: Tune
    to: FM
  - from: FM
    on: Traffic
    action: Announce
`

// TestCompareRegionDeferral checks how fsmgen diff classifies the
// deferral of a state inside a region: removed, it breaks the machines
// saved with the event held, as any deferral; and a region that now takes
// the event beside another region's deferral breaks them too, since the
// configuration no longer defers it.
func TestCompareRegionDeferral(t *testing.T) {
	t.Parallel()
	removed := strings.Replace(radioSpec, "            defer: [Traffic]\n", "            ignore: [Traffic]\n", 1)
	moved := strings.Replace(radioSpec, "  - from: FM\n    on: Traffic\n", "  - from: AM\n    on: Traffic\n", 1)
	tests := []struct {
		name     string
		old, new string
		want     []want
	}{
		{
			name: "a region's deferral removed", old: radioSpec, new: removed,
			want: []want{{subject: "rule Quiet × Traffic", what: "now ignored, was deferred", verdicts: []string{"saved_states=breaks", "behaviour=breaks"}}},
		},
		{
			name: "a region's deferral added", old: removed, new: radioSpec,
			want: []want{{subject: "rule Quiet × Traffic", what: "now deferred, was ignored", verdicts: []string{"behaviour=breaks"}}},
		},
		{
			name: "another region takes the deferred event", old: radioSpec, new: moved,
			want: []want{
				{subject: "rule AM × Traffic", what: "now takes Traffic, which Quiet defers beside it", verdicts: []string{"saved_states=breaks"}},
				{subject: "rule AM × Traffic", what: "now stays / Announce, was ignored", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule FM × Traffic", what: "now ignored, was stays / Announce", verdicts: []string{"behaviour=breaks"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := diff.Compare(machine(t, "old.yaml", tt.old), machine(t, "new.yaml", tt.new))
			assert.ElementsMatch(t, tt.want, changes(rep))
		})
	}
}

// scanSpec is a radio whose parallel state On defers Scan, which no region
// takes (the cases give FM a rule for it, and move that rule to AM).
const scanSpec = `version: 2
machine: Radio
package: radio
output:
  go: .
states:
  Off:
    initial: true
    ignore: [Tune, Mute]
  On:
    parallel: true
    defer: [Scan]
    states:
      Sound:
        states:
          Loud: {initial: true}
          Quiet: {}
      Band:
        states:
          FM: {initial: true}
          AM: {}
events:
  Power: {}
  Tune: {}
  Mute: {}
  Scan: {}
actions:
  Seek: {}
transitions:
  - from: Off
    on: Power
    to: On
  - from: On
    on: Power
    to: Off
  - from: Loud
    on: Mute
    to: Quiet
  - from: Quiet
    on: Mute
    to: Loud
  - from: FM
    on: Tune
    to: AM
  - from: AM
    on: Tune
    to: FM
  - from: Off
    on: Scan
    to: On
`

// TestCompareParallelDeferral checks how fsmgen diff classifies a region
// that now takes an event its parallel state defers: the rule of the
// region's state for it was the parallel state's deferral, now removed
// there, so a machine saved with that state active holding the event no
// longer loads, as any deferral removed; one that no longer takes it lets
// the parallel state hold it, and saved machines load.
func TestCompareParallelDeferral(t *testing.T) {
	t.Parallel()
	takes := scanSpec + "  - from: FM\n    on: Scan\n    action: Seek\n"
	moved := scanSpec + "  - from: AM\n    on: Scan\n    action: Seek\n"
	tests := []struct {
		name     string
		old, new string
		want     []want
	}{
		{
			name: "a region takes the event", old: scanSpec, new: takes,
			want: []want{{subject: "rule FM × Scan", what: "now stays / Seek, was deferred", verdicts: []string{"saved_states=breaks", "behaviour=breaks"}}},
		},
		{
			name: "a region no longer takes it", old: takes, new: scanSpec,
			want: []want{{subject: "rule FM × Scan", what: "now deferred, was stays / Seek", verdicts: []string{"behaviour=breaks"}}},
		},
		{
			name: "another state of the region takes it", old: takes, new: moved,
			want: []want{
				{subject: "rule AM × Scan", what: "now stays / Seek, was deferred", verdicts: []string{"saved_states=breaks", "behaviour=breaks"}},
				{subject: "rule FM × Scan", what: "now deferred, was stays / Seek", verdicts: []string{"behaviour=breaks"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := diff.Compare(machine(t, "old.yaml", tt.old), machine(t, "new.yaml", tt.new))
			assert.ElementsMatch(t, tt.want, changes(rep))
		})
	}
}
