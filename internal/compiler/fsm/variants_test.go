package fsm_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// TestVariantsAreTheirRule checks that every variant of a rule into a
// history is its rule but for where it leads: the same event, guard or
// else, done, timer, source and effect, on the export's charts and on
// leave_timer_history (a guarded timer row that leaves a parallel state
// into a history, whose variant once lost its guard).
func TestVariantsAreTheirRule(t *testing.T) {
	t.Parallel()
	charts, err := filepath.Glob("../export/testdata/charts/*/*.yaml")
	require.NoError(t, err)
	refused, err := filepath.Glob("../export/testdata/refused/*/*.yaml")
	require.NoError(t, err)
	charts = append(append(charts, refused...), "testdata/witness/leave_timer_history.yaml")
	type same struct {
		Kind     fsm.RuleKind
		From     *fsm.State
		Event    *fsm.Event
		Guard    *fsm.Func
		Else     bool
		History  *fsm.State
		Done     *fsm.State
		Timer    *fsm.Timer
		Source   *fsm.State
		SourceIn *fsm.Func
		Effect   *fsm.Func
		Mixed    bool
		Local    bool
		Listed   bool
		Others   bool
	}
	of := func(r *fsm.Rule) same {
		return same{r.Kind, r.From, r.Event, r.Guard, r.Else, r.History, r.Done, r.Timer, r.Source, r.SourceIn, r.Effect, r.Mixed, r.Local, r.Listed, r.Others}
	}
	variants := 0
	for _, path := range charts {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		sf, diags := spec.Parse(filepath.Base(path), src)
		require.False(t, diags.HasErrors(), "%s: %s", path, diags)
		m, _ := fsm.Build(sf, fsm.Env{})
		if m == nil {
			continue // a chart the export refuses, say
		}
		for _, r := range m.AllRules() {
			for _, v := range r.Variants {
				variants++
				assert.Equal(t, of(r), of(v), "%s: %s, variant %s", path, r.Label, v.Label)
				assert.NotEqual(t, r.Label, v.Label, "%s: a variant's label says what it resumes", path)
			}
		}
	}
	assert.Positive(t, variants)

	src, err := os.ReadFile("testdata/witness/leave_timer_history.yaml")
	require.NoError(t, err)
	_, paths := witnessPaths(t, "leave_timer_history.yaml", src)
	assert.Contains(t, paths, "On --after 5s [late]--> Out.history (was in Warm) / Ding")
}
