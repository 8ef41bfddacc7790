package diff_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
)

// TestComparePurity checks how fsmgen diff classifies an action made pure
// or no longer pure: a change of behaviour for durable engines (a running
// workflow's history holds an activity for it, or none), which must be
// declared; where the spec generates Temporal glue, a break of the code
// too (the method moves between the glue's Activities and Pure).
func TestComparePurity(t *testing.T) {
	t.Parallel()
	pure := edit(t, "  Notify:\n    fields:", "  Notify:\n    pure: true\n    fields:")
	declared := pure + "breaks:\n  - change: action Notify\n    why: Notify only logs; workflows of the old revision are finished first.\n"
	renamed := edit(t,
		"  Notify:\n    fields:", "  Announce:\n    renamed_from: [Notify]\n    pure: true\n    fields:",
		"    action: Notify\n", "    action: Announce\n")
	temporal := func(s string) string {
		return strings.Replace(s, "output:\n  go: .\n", "output:\n  go: .\n  temporal: flow\n", 1)
	}
	tests := []struct {
		name     string
		old, new string
		breaks   int
		want     []want
	}{
		{name: "pure: false is the default", old: jobSpec, new: edit(t, "  Notify:\n    fields:", "  Notify:\n    pure: false\n    fields:")},
		{
			name: "made pure", old: jobSpec, new: pure, breaks: 1,
			want: []want{{subject: "action Notify", what: "now pure", verdicts: []string{"behaviour=breaks"}}},
		},
		{
			name: "no longer pure", old: pure, new: jobSpec, breaks: 1,
			want: []want{{subject: "action Notify", what: "no longer pure", verdicts: []string{"behaviour=breaks"}}},
		},
		{
			name: "made pure, declared", old: jobSpec, new: declared, breaks: 0,
			want: []want{{subject: "action Notify", what: "now pure", verdicts: []string{"behaviour=breaks"}, declared: true}},
		},
		{
			name: "renamed and made pure", old: jobSpec, new: renamed, breaks: 2,
			want: []want{
				{subject: "action Announce", what: "renamed from Notify", verdicts: []string{"code=breaks"}},
				{subject: "action Announce", what: "now pure", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name: "made pure, with Temporal glue", old: temporal(jobSpec), new: temporal(pure), breaks: 1,
			want: []want{{subject: "action Notify", what: "now pure", verdicts: []string{"code=breaks", "behaviour=breaks"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := diff.Compare(machine(t, "old.yaml", tt.old), machine(t, "new.yaml", tt.new))
			var got []want
			for _, c := range rep.Changes {
				w := want{subject: c.Subject, what: c.What, declared: c.Declared != ""}
				for a := diff.SavedStates; a <= diff.Behaviour; a++ {
					if c.Verdicts[a] != diff.OK {
						w.verdicts = append(w.verdicts, a.Key()+"="+c.Verdicts[a].String())
					}
				}
				got = append(got, w)
			}
			assert.ElementsMatch(t, tt.want, got)
			assert.Equal(t, tt.breaks, rep.Breaks(), "breaking changes")
			assert.Empty(t, rep.Unused, "every declaration names a change")
		})
	}
}
