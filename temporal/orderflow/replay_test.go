package orderflow_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/fsmgen/fsmgen/examples/order"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
	"github.com/fsmgen/fsmgen/temporal/orderflow"
)

// recordedWindow is the payment window of the orders whose histories
// testdata holds (temporal/realserver records them with -update).
const recordedWindow = 3 * time.Second

// histories are the recorded histories: an order delivered (signals,
// updates, a rejected update, activities, the deadline cancelled) and an
// order expired (its deadline fired while no worker ran).
var histories = []string{"delivered.json", "expired.json"}

// replay replays the recorded history file with def.
func replay(t *testing.T, def *fsmtemporal.Def[*order.Machine, order.Event, order.Action, orderflow.Activities], file string) error {
	t.Helper()
	r := worker.NewWorkflowReplayer()
	fsmtemporal.RegisterWorkflow(r, def, fsmtemporal.Options[order.Event, order.Action]{})
	return r.ReplayWorkflowHistoryFromJSONFile(quiet, filepath.Join("testdata", file))
}

// TestReplay: the histories recorded on a real server replay against the
// current code, which takes the same steps (the SDK's replayer fails on any
// command the history does not hold: the determinism check).
func TestReplay(t *testing.T) {
	t.Parallel()
	for _, file := range histories {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			require.NoError(t, replay(t, orderflow.Def(order.Shop{Window: recordedWindow}), file))
		})
	}
}

// TestReplayRevision: a revision of the spec that fsmgen diff found
// breaking (MinRevision raised past the revision a run started under)
// refuses to continue the run: its replay fails on the revision, naming
// it, before any step. A compatible revision (Revision raised alone)
// continues it.
func TestReplayRevision(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		revision, min workflow.Version
		refused       bool
	}{
		{"compatible", 2, 1, false},
		{"breaking", 2, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			def := orderflow.Def(order.Shop{Window: recordedWindow})
			def.Revision, def.MinRevision = tt.revision, tt.min
			err := replay(t, def, histories[0])
			if !tt.refused {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorContains(t, err, `removed support of version 1. for "fsmgen/Order"`)
		})
	}
}
