package diff_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
)

// TestCompareHostedParallel checks how fsmgen diff classifies a parallel
// state inside a region, which the region's rules enter and leave
// (spec.md, Parallel states nested in parallel states): its regions are
// saved in the outer parallel state's value while their host region is in
// it, so a leaf of a region made such a parallel state, or a region added
// to one, breaks the machines saved in the outer one with the host there.
func TestCompareHostedParallel(t *testing.T) {
	t.Parallel()
	left := "      Left:\n        states:\n          L1:\n            initial: true\n"
	right := "      Right:\n        states:\n          R1:\n            initial: true\n"
	centre := "      Centre:\n        states:\n          C1:\n            initial: true\n"
	// Playing, a leaf of region Playback, made a parallel state.
	hosted := strings.Replace(playerSpec, "          Playing: {}\n",
		"          Playing:\n            parallel: true\n            states:\n"+indent(indent(left))+indent(indent(right)), 1)
	wider := strings.Replace(hosted, indent(indent(right)), indent(indent(right))+indent(indent(centre)), 1)
	tests := []struct {
		name     string
		old, new string
		breaks   int
		want     []want
	}{
		{
			name: "a leaf of a region made a parallel state", old: playerSpec, new: hosted, breaks: 2,
			want: []want{
				{subject: "state On", what: "gained region Left", verdicts: []string{"saved_states=breaks"}},
				{subject: "state On", what: "gained region Right", verdicts: []string{"saved_states=breaks"}},
			},
		},
		{
			name: "a region added to a parallel state inside a region", old: hosted, new: wider, breaks: 1,
			want: []want{
				{subject: "state On", what: "gained region Centre", verdicts: []string{"saved_states=breaks"}},
			},
		},
		{
			name: "a region removed from it", old: wider, new: hosted, breaks: 1,
			want: []want{
				{subject: "state On", what: "lost region Centre", verdicts: []string{"saved_states=breaks"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := diff.Compare(machine(t, "old.yaml", tt.old), machine(t, "new.yaml", tt.new))
			assert.ElementsMatch(t, tt.want, changes(rep))
			assert.Equal(t, tt.breaks, rep.Breaks(), "breaking changes")
			for _, c := range rep.Changes {
				if strings.HasPrefix(c.What, "gained region") {
					require.Contains(t, c.Why[diff.SavedStates], "with region Playback in Playing", "the machines that no longer load")
				}
			}
		})
	}
}
