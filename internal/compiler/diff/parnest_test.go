package diff_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
)

// TestCompareNestedParallel checks how fsmgen diff classifies the regions
// of a parallel state nested as a region of another (spec.md, Parallel
// states nested in parallel states): they are the outer parallel state's,
// so a region added to the nested one, or a region made a nested parallel
// state, breaks the machines saved in the outer one.
func TestCompareNestedParallel(t *testing.T) {
	t.Parallel()
	balance := "      Balance:\n        states:\n          Centre:\n            initial: true\n"
	treble := "      Treble:\n        states:\n          Flat:\n            initial: true\n"
	volume := "      Volume:\n        states:\n          Normal:\n            initial: true\n          Muted: {}\n"
	// Sound groups Volume and Balance, a parallel state nested in On.
	nested := strings.NewReplacer(
		volume, "      Sound:\n        parallel: true\n        states:\n"+indent(volume)+indent(balance),
	).Replace(playerSpec)
	wider := strings.Replace(nested, indent(balance), indent(balance)+indent(treble), 1)
	tests := []struct {
		name     string
		old, new string
		breaks   int
		want     []want
	}{
		{
			name: "a region added to the nested parallel state", old: nested, new: wider, breaks: 1,
			want: []want{
				{subject: "state On", what: "gained region Treble", verdicts: []string{"saved_states=breaks"}},
			},
		},
		{
			name: "a region made a nested parallel state", old: playerSpec, new: nested, breaks: 1,
			want: []want{
				{subject: "state On", what: "gained region Balance", verdicts: []string{"saved_states=breaks"}},
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

// indent indents each line of s by four spaces.
func indent(s string) string {
	return strings.ReplaceAll("    "+strings.TrimSuffix(s, "\n"), "\n", "\n    ") + "\n"
}

// TestCompareNestedParallelDone checks how fsmgen diff classifies a done
// transition gained by a parallel state nested as a region of another
// (spec.md, its done transition): a rule of the outer one that changes
// behaviour; with guards that end without else it breaks no saved
// machine (its regions may rest final), with an else it breaks those
// saved with its regions all final.
func TestCompareNestedParallelDone(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../export/testdata/charts/ovation/ovation.yaml")
	require.NoError(t, err)
	rests := string(data)
	plain := strings.NewReplacer(
		"        done:\n          guards:\n            - {if: encore, to: Off, action: Encore}\n", "",
		"  Encore: {}\n", "",
		"guards:\n  encore: {}\n", "",
	).Replace(rests)
	require.NotEqual(t, rests, plain)
	leaves := strings.NewReplacer(
		"            - {if: encore, to: Off, action: Encore}\n", "            - {if: encore, to: Off, action: Encore}\n            - {else: true, to: Off}\n",
		"    ignore: [Stop, Hide, Wrap]\n", "",
		"ignore: [Play, Show, Stop, Hide]}", "ignore: [Play, Show]}",
	).Replace(rests)
	handler := want{subject: "action Encore", what: "added", verdicts: []string{"code=breaks"}}
	behavior := want{subject: "guard encore", what: "added", verdicts: []string{"code=breaks"}}
	done := want{subject: "rule Media (done)", what: "now [encore] to Off / Encore, was nothing", verdicts: []string{"behaviour=breaks"}}
	tests := []struct {
		name     string
		old, new string
		want     []want
	}{
		{
			name: "a done transition that may rest", old: plain, new: rests,
			want: []want{handler, behavior, done, {subject: "state Media", what: "gained a done transition that every guard may refuse"}},
		},
		{
			name: "a done transition that always leaves", old: plain, new: leaves,
			want: []want{handler, behavior,
				{subject: "rule Media (done)", what: "now [encore] to Off / Encore; [else] to Off, was nothing", verdicts: []string{"behaviour=breaks"}},
				{subject: "state Media", what: "gained a done transition", verdicts: []string{"saved_states=breaks"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := diff.Compare(machine(t, "old.yaml", tt.old), machine(t, "new.yaml", tt.new))
			got := changes(rep)
			for _, w := range tt.want {
				assert.Contains(t, got, w)
			}
		})
	}
}
