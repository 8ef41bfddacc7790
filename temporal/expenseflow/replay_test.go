package expenseflow_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/worker"

	"github.com/fsmgen/fsmgen/examples/expense"
	"github.com/fsmgen/fsmgen/temporal/expenseflow"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
)

// TestReplay replays the history of a paid claim, recorded on a real
// server (temporal/realserver's TestPureHistory, with -update), against
// the current code: the SDK's replayer fails on any command the history
// does not hold, so the pure action, run inside the workflow again, must
// add none (the determinism check). The same history replayed with Tally
// as an activity (a Def without InWorkflow, as before the spec marked it
// pure) fails: the reason fsmgen diff calls such a change a break.
func TestReplay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pure    bool
		refused string
	}{
		{name: "Tally in the workflow", pure: true},
		{name: "Tally as an activity", pure: false, refused: "TMPRL1100"}, // the SDK's code for non-determinism
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := &office{}
			def := expenseflow.Def(expense.Claims{}, o)
			if !tt.pure {
				def.InWorkflow = nil
				def.Actions = append(def.Actions, "Tally")
			}
			r := worker.NewWorkflowReplayer()
			fsmtemporal.RegisterWorkflow(r, def, fsmtemporal.Options[expense.Event, expense.Action]{})
			err := r.ReplayWorkflowHistoryFromJSONFile(quiet, filepath.Join("testdata", "paid.json"))
			if tt.refused == "" {
				assert.NoError(t, err)
				assert.Equal(t, []expense.Action{&expense.Tally{Amount: 1000}, &expense.Tally{Amount: 250}}, o.performed(),
					"the replay tallies the costs again, inside the workflow")
				return
			}
			assert.ErrorContains(t, err, tt.refused)
		})
	}
}
