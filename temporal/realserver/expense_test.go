package realserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/fsmgen/fsmgen/examples/expense"
	"github.com/fsmgen/fsmgen/temporal/expenseflow"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
)

// claims performs the expense claim's actions: Tally inside the workflow
// (expenseflow.Pure), the others as activities. It records what it did,
// Tally only when the workflow is not replaying.
type claims struct {
	mu   sync.Mutex
	done []string
}

func (c *claims) do(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = append(c.done, name)
	return nil
}

func (c *claims) performed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.done...)
}

func (c *claims) Tally(ctx workflow.Context, amount expense.Cents) error {
	if workflow.IsReplaying(ctx) {
		return nil
	}
	return c.do("Tally")
}
func (c *claims) PayOut(context.Context, expense.Cents) error  { return c.do("PayOut") }
func (c *claims) NotifyRejected(context.Context, string) error { return c.do("NotifyRejected") }

// TestPureHistory: on a real server, the claim's pure action writes
// nothing to the history: an update whose step tallies a cost writes what
// any update writes, and the only activity is PayOut's. The history
// replays against the current code (with -update it goes to
// ../expenseflow/testdata, for expenseflow's replay test).
func TestPureHistory(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	c := ts.GetDefaultClient()
	ctx := context.Background()
	cl := &claims{}
	const queue = "claims"
	w := worker.New(c, queue, worker.Options{WorkflowPanicPolicy: worker.FailWorkflow})
	def := expenseflow.Def(expense.Claims{}, cl)
	fsmtemporal.RegisterWorkflow(w, def, fsmtemporal.Options[expense.Event, expense.Action]{})
	fsmtemporal.RegisterActivities(w, def, expenseflow.Activities(cl))
	require.NoError(t, w.Start())
	defer w.Stop()

	const id = "claim-paid"
	run, err := fsmtemporal.Start(ctx, c, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, expenseflow.Name, nil)
	require.NoError(t, err)
	waitFor(t, c, id, enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
	seen := len(history(t, c, id).Events)
	for _, amount := range []expense.Cents{1000, 250} {
		_, err := fsmtemporal.Send(ctx, c, id, &expense.AddCost{Amount: amount})
		require.NoError(t, err)
		h := history(t, c, id)
		assert.Equal(t, []string{"WorkflowTaskScheduled", "WorkflowTaskStarted",
			"WorkflowTaskCompleted", "WorkflowExecutionUpdateAccepted",
			"WorkflowExecutionUpdateCompleted"}, types(h.Events[seen:]), "an update that tallies a cost writes what any update writes")
		seen = len(h.Events)
	}
	_, err = fsmtemporal.Send(ctx, c, id, &expense.Approve{})
	require.NoError(t, err)
	var saved json.RawMessage
	require.NoError(t, run.Get(ctx, &saved))
	m, err := expense.Load(expense.Config{Behavior: expense.Claims{}, Handler: &expense.Recorder{}}, saved)
	require.NoError(t, err)
	assert.Equal(t, expense.Paid{Total: 1250}, m.State())

	h := history(t, c, id)
	assert.Equal(t, []string{"Expense.PayOut"}, activities(h.Events), "Tally is no activity")
	assert.Equal(t, 1, count(h.Events, enumspb.EVENT_TYPE_MARKER_RECORDED), "one marker, the revision's")
	assert.Equal(t, []string{"Tally", "Tally", "PayOut"}, cl.performed())
	recordExpense(t, h, "paid.json")
}

// recordExpense replays h against the current code, which must take the
// same steps, and with -update writes it to ../expenseflow/testdata/name.
func recordExpense(t *testing.T, h *historypb.History, name string) {
	t.Helper()
	r := worker.NewWorkflowReplayer()
	fsmtemporal.RegisterWorkflow(r, expenseflow.Def(expense.Claims{}, &claims{}), fsmtemporal.Options[expense.Event, expense.Action]{})
	require.NoError(t, r.ReplayWorkflowHistory(quiet, h), "the current code replays the history it recorded")
	if !*update {
		return
	}
	data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	require.NoError(t, err)
	dir := filepath.Join("..", "expenseflow", "testdata")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), append(data, '\n'), 0o644))
}
