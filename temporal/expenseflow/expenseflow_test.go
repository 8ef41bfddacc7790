package expenseflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/fsmgen/fsmgen/examples/expense"
	"github.com/fsmgen/fsmgen/temporal/expenseflow"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
)

// quiet is the SDK's logger in the tests: they check what the workflow
// did, not what it logged.
var quiet = log.NewStructuredLogger(slog.New(slog.DiscardHandler))

// office performs the claim's actions and records them in order, whether
// as an activity (PayOut, NotifyRejected) or inside the workflow (Tally,
// through Pure), so that the tests compare them with the actions the
// machine hands out. tallyErr, when set, is Tally's error.
type office struct {
	mu       sync.Mutex
	done     []expense.Action
	tallyErr error
}

func (o *office) add(a expense.Action) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.done = append(o.done, a)
}

func (o *office) performed() []expense.Action {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]expense.Action(nil), o.done...)
}

// Tally is the claim's pure action: a count in the workflow's metrics,
// which the SDK keeps quiet on replay.
func (o *office) Tally(ctx workflow.Context, amount expense.Cents) error {
	if o.tallyErr != nil {
		return o.tallyErr
	}
	workflow.GetMetricsHandler(ctx).Counter("expense_costs").Inc(1)
	o.add(&expense.Tally{Amount: amount})
	return nil
}

func (o *office) PayOut(_ context.Context, total expense.Cents) error {
	o.add(&expense.PayOut{Total: total})
	return nil
}

func (o *office) NotifyRejected(_ context.Context, reason string) error {
	o.add(&expense.NotifyRejected{Reason: reason})
	return nil
}

var (
	_ expenseflow.Pure       = (*office)(nil)
	_ expenseflow.Activities = (*office)(nil)
)

// run runs a claim on the SDK's test environment, its events sent as
// signals a minute apart, and returns the machine it ended with and the
// activities the workflow started, by name.
func run(t *testing.T, o *office, opts fsmtemporal.Options[expense.Event, expense.Action], events ...expense.Event) (*expense.Machine, []string) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(quiet)
	env := suite.NewTestWorkflowEnvironment()
	def := expenseflow.Def(expense.Claims{}, o)
	require.NoError(t, def.Check())
	fsmtemporal.RegisterWorkflow(env, def, opts)
	fsmtemporal.RegisterActivities(env, def, expenseflow.Activities(o))
	var started []string
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		started = append(started, info.ActivityType.Name)
	})
	for i, ev := range events {
		env.RegisterDelayedCallback(func() {
			data, err := json.Marshal(ev)
			require.NoError(t, err)
			env.SignalWorkflow(fsmtemporal.EventSignal, json.RawMessage(data))
		}, time.Duration(i+1)*time.Minute)
	}
	env.ExecuteWorkflow(expenseflow.Name, fsmtemporal.Input{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var saved json.RawMessage
	require.NoError(t, env.GetWorkflowResult(&saved))
	m, err := expense.Load(expense.Config{Behavior: expense.Claims{}, Handler: &expense.Recorder{}}, saved)
	require.NoError(t, err)
	return m, started
}

// expected returns the actions the generated machine hands out for
// events, as runtime/loop's Handler would perform them.
func expected(t *testing.T, events ...expense.Event) []expense.Action {
	t.Helper()
	rec := &expense.Recorder{}
	m, err := expense.New(expense.Config{Behavior: expense.Claims{}, Handler: rec})
	require.NoError(t, err)
	for _, ev := range events {
		require.NoError(t, m.HandleEvent(ev))
	}
	return rec.Actions
}

// TestPureInWorkflow: the pure action Tally runs inside the workflow (no
// activity is started for it, nor registered: Def.Actions leaves it out),
// PayOut and NotifyRejected as activities; together they are the actions
// the generated machine hands out for the same events, in order.
func TestPureInWorkflow(t *testing.T) {
	t.Parallel()
	def := expenseflow.Def(expense.Claims{}, &office{})
	assert.Equal(t, []string{"PayOut", "NotifyRejected"}, def.Actions, "only the actions with I/O are activities")
	tests := []struct {
		name       string
		events     []expense.Event
		state      expense.State
		activities []string
	}{
		{
			name:       "paid",
			events:     []expense.Event{&expense.AddCost{Amount: 1000}, &expense.AddCost{Amount: 250}, &expense.Approve{}},
			state:      expense.Paid{Total: 1250},
			activities: []string{"Expense.PayOut"},
		},
		{
			name:       "rejected",
			events:     []expense.Event{&expense.AddCost{Amount: 40}, &expense.Reject{Reason: "no receipt"}},
			state:      expense.Rejected{Reason: "no receipt"},
			activities: []string{"Expense.NotifyRejected"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := &office{}
			m, started := run(t, o, fsmtemporal.Options[expense.Event, expense.Action]{}, tt.events...)
			assert.Equal(t, tt.state, m.State())
			assert.Equal(t, tt.activities, started, "the activities started: none for Tally")
			assert.Equal(t, expected(t, tt.events...), o.performed())
		})
	}
}

// TestPureFails: a pure action's error is an action that failed for good,
// which Options.ActionFailed turns into an event for the machine, as for
// an activity whose retry policy gave up; it is not retried.
func TestPureFails(t *testing.T) {
	t.Parallel()
	o := &office{tallyErr: errors.New("the bookkeeping is closed")}
	var failed []expense.Action
	opts := fsmtemporal.Options[expense.Event, expense.Action]{
		ActionFailed: func(a expense.Action, err error) (expense.Event, bool) {
			failed = append(failed, a)
			return &expense.Reject{Reason: err.Error()}, true
		},
	}
	m, started := run(t, o, opts, &expense.AddCost{Amount: 75})
	assert.Equal(t, expense.Rejected{Reason: "the bookkeeping is closed"}, m.State())
	assert.Equal(t, []expense.Action{&expense.Tally{Amount: 75}}, failed, "Tally failed once, not retried")
	assert.Equal(t, []string{"Expense.NotifyRejected"}, started)
	assert.Equal(t, []expense.Action{&expense.NotifyRejected{Reason: "the bookkeeping is closed"}}, o.performed())
}

// TestInWorkflowByHand: Options.InWorkflow, functions given by hand,
// still runs an action the spec does not mark pure inside the workflow
// (PayOut here: no activity started); for a pure action the spec's
// mark, through Def.InWorkflow, comes first.
func TestInWorkflowByHand(t *testing.T) {
	t.Parallel()
	o := &office{}
	var byHand []string
	opts := fsmtemporal.Options[expense.Event, expense.Action]{
		InWorkflow: map[string]func(workflow.Context, expense.Action) error{
			"Tally":  func(workflow.Context, expense.Action) error { byHand = append(byHand, "Tally"); return nil },
			"PayOut": func(workflow.Context, expense.Action) error { byHand = append(byHand, "PayOut"); return nil },
		},
	}
	events := []expense.Event{&expense.AddCost{Amount: 300}, &expense.Approve{}}
	m, started := run(t, o, opts, events...)
	assert.Equal(t, expense.Paid{Total: 300}, m.State())
	assert.Empty(t, started, "no activity")
	assert.Equal(t, []string{"PayOut"}, byHand, "the hand-given PayOut; Tally went to Pure")
	assert.Equal(t, []expense.Action{&expense.Tally{Amount: 300}}, o.performed())
}
