package diff_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
)

// TestCompareRegionEffects checks how fsmgen diff classifies a change of
// what a region's rule does with the parallel state's fields: another
// effect, a constant changed, and an effect given to the region's rule.
func TestCompareRegionEffects(t *testing.T) {
	t.Parallel()
	fields := strings.NewReplacer(
		"    parallel: true\n", "    parallel: true\n    fields:\n      level: int\n",
		"  - from: Off\n    on: Power\n    to: On\n", "  - from: Off\n    on: Power\n    to: On\n    set: {level: 5}\n",
		"  Mute: {}\n", "  Mute: {}\neffects:\n  louder:\n    reads: {level: int}\n    sets: {level: int}\n  softer:\n    reads: {level: int}\n    sets: {level: int}\n",
		"  - from: Muted\n    on: Mute\n    to: Normal\n", "  - from: Muted\n    on: Mute\n    to: Normal\n    effect: louder\n  - from: Playing\n    on: Play\n    to: Stopped\n    effect: softer\n",
	).Replace(strings.Replace(playerSpec, "  - from: Playing\n    on: Play\n    to: Stopped\n", "", 1))
	swapped := strings.Replace(fields, "    to: Normal\n    effect: louder\n", "    to: Normal\n    effect: softer\n", 1)
	muted := strings.Replace(fields, "    to: Muted\n", "    to: Muted\n    set: {level: 0}\n", 1)
	tests := []struct {
		name     string
		old, new string
		breaks   int
		want     []want
	}{
		{
			name: "a region's rule runs another effect", old: fields, new: swapped, breaks: 1,
			want: []want{
				{subject: "rule Muted × Mute", what: "now to Normal {softer}, was to Normal {louder}", verdicts: []string{"behaviour=breaks"}},
				{subject: "effect louder", what: "removed"}, // no rule calls it: not a method of Behavior
			},
		},
		{
			name: "a region's rule sets a field", old: fields, new: muted, breaks: 1,
			want: []want{
				{subject: "rule Normal × Mute", what: "now to Muted {level=0}, was to Muted", verdicts: []string{"behaviour=breaks"}},
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
