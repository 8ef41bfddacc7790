package orderflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/fsmgen/fsmgen/examples/order"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
	"github.com/fsmgen/fsmgen/temporal/orderflow"
)

// TestContinueAsNew: after many events, when Temporal suggests it, the
// workflow continues as new with the machine's Save JSON and the events
// that arrived and were not handled; the next run loads it strictly, arms
// the payment deadline for the time saved, and loses nothing: every item
// is in the total, and the deadline fires at its first time.
func TestContinueAsNew(t *testing.T) {
	t.Parallel()
	const items = 150
	s := &shop{}
	env := newEnv(t, s, fsmtemporal.Options[order.Event, order.Action]{})
	env.SetStartTime(start)
	for i := range items {
		env.RegisterDelayedCallback(func() {
			env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.AddItem{Price: order.Cents(i + 1)}))
		}, time.Second*time.Duration(i+1))
	}
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.BeginCheckout{}))
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.PlaceOrder{}))
	}, time.Hour)
	// Ten minutes into the payment window, Temporal suggests a new run,
	// and two events arrive at once, the first of which wakes the workflow:
	// the second is left for the next run.
	env.RegisterDelayedCallback(func() {
		env.SetContinueAsNewSuggested(true)
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.PaymentReceived{}))
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.Picked{}))
	}, time.Hour+10*time.Minute)
	env.ExecuteWorkflow(orderflow.Name, fsmtemporal.Input{})

	require.True(t, env.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(env.GetWorkflowError(), &can), "%v", env.GetWorkflowError())
	assert.Equal(t, orderflow.Name, can.WorkflowType.Name)
	var in fsmtemporal.Input
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &in))
	require.Len(t, in.Pending, 1, "the event not handled is carried")
	assert.JSONEq(t, `{"kind":"picked"}`, string(in.Pending[0]))

	total := order.Cents(items * (items + 1) / 2)
	m, err := order.Load(order.Config{Behavior: order.Shop{}, Handler: &order.Recorder{}}, in.Saved)
	require.NoError(t, err, "the saved machine loads strictly")
	assert.Equal(t, order.Picking{Total: total}, m.State())

	// The next run: picked at once, then dispatched and delivered.
	next := newEnv(t, s, fsmtemporal.Options[order.Event, order.Action]{})
	next.SetStartTime(start.Add(time.Hour + 10*time.Minute))
	next.RegisterDelayedCallback(func() {
		assert.Equal(t, order.Packing{Total: total}, query(t, next))
		next.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.Dispatched{Tracking: "T"}))
		next.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.DeliveryConfirmed{}))
	}, time.Minute)
	next.ExecuteWorkflow(orderflow.Name, in)
	assert.Equal(t, order.Delivered{}, result(t, next).State())
	assert.Contains(t, s.performed(), "SendTrackingLink(T)")
}

// TestContinueAsNewDeadline: a run that continues as new while the order
// waits for its payment carries the deadline; the next run fires it at the
// time it was set for, not a new payment window later.
func TestContinueAsNewDeadline(t *testing.T) {
	t.Parallel()
	s := &shop{}
	env := newEnv(t, s, fsmtemporal.Options[order.Event, order.Action]{MaxHistory: 1})
	env.SetStartTime(start)
	env.SetCurrentHistoryLength(0)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.AddItem{Price: 10}))
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.BeginCheckout{}))
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.PlaceOrder{}))
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		env.SetCurrentHistoryLength(10)
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.AddItem{Price: 1})) // rejected: the order is placed
	}, 20*time.Minute)
	env.ExecuteWorkflow(orderflow.Name, fsmtemporal.Input{})
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(env.GetWorkflowError(), &can), "%v", env.GetWorkflowError())
	var in fsmtemporal.Input
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &in))

	next := newEnv(t, s, fsmtemporal.Options[order.Event, order.Action]{})
	resumed := start.Add(20 * time.Minute)
	next.SetStartTime(resumed)
	next.ExecuteWorkflow(orderflow.Name, in)
	assert.Equal(t, order.Expired{}, result(t, next).State())
	assert.Equal(t, start.Add(time.Minute+order.DefaultWindow), next.Now().UTC(), "the deadline is the first run's")
	assert.Equal(t, 1, s.tries["SendExpiryNotice"])
}

// TestActionRetry: an action's retry policy is its own: the payment link's
// provider is down, its activity is tried three times, and the failure,
// turned into an event by ActionFailed, cancels the order; the receipt's
// options are not touched.
func TestActionRetry(t *testing.T) {
	t.Parallel()
	s := &shop{fail: map[string]bool{"SendPaymentLink(90)": true}}
	var failed []string
	opts := fsmtemporal.Options[order.Event, order.Action]{
		Actions: map[string]workflow.ActivityOptions{
			"SendPaymentLink": {
				StartToCloseTimeout: 10 * time.Second,
				RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
			},
		},
		ActionFailed: func(a order.Action, err error) (order.Event, bool) {
			failed = append(failed, a.Kind().String())
			return &order.Cancel{}, true
		},
	}
	env := newEnv(t, s, opts)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.AddItem{Price: 90}))
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.BeginCheckout{}))
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.PlaceOrder{}))
	}, time.Minute)
	env.ExecuteWorkflow(orderflow.Name, fsmtemporal.Input{})

	assert.Equal(t, order.Cancelled{}, result(t, env).State())
	assert.Equal(t, 3, s.tries["SendPaymentLink(90)"])
	assert.Equal(t, []string{"SendPaymentLink"}, failed)
	assert.Equal(t, []string{"RevokePaymentLink"}, s.performed(), "the cancellation leaves AwaitingPayment")
}

// TestInWorkflow: an action marked InWorkflow is performed in the workflow,
// by its function, and by no activity.
func TestInWorkflow(t *testing.T) {
	t.Parallel()
	s := &shop{}
	var revoked int
	opts := fsmtemporal.Options[order.Event, order.Action]{
		InWorkflow: map[string]func(workflow.Context, order.Action) error{
			"RevokePaymentLink": func(workflow.Context, order.Action) error { revoked++; return nil },
		},
	}
	env := newEnv(t, s, opts)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.AddItem{Price: 90}))
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.BeginCheckout{}))
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.PlaceOrder{}))
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.Cancel{}))
	}, time.Minute)
	env.ExecuteWorkflow(orderflow.Name, fsmtemporal.Input{})
	assert.Equal(t, order.Cancelled{}, result(t, env).State())
	assert.Equal(t, 1, revoked)
	assert.Equal(t, []string{"SendPaymentLink(90)"}, s.performed())
}

// TestBadSaved: a workflow started with data Load refuses fails at once,
// saying why, and is not retried.
func TestBadSaved(t *testing.T) {
	t.Parallel()
	env := newEnv(t, &shop{}, fsmtemporal.Options[order.Event, order.Action]{})
	env.ExecuteWorkflow(orderflow.Name, fsmtemporal.Input{Saved: []byte(`{"machine":"Order","state":{"kind":"cart","total":1,"tip":2}}`)})
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	assert.True(t, app.NonRetryable())
	assert.ErrorContains(t, err, "the saved machine does not load")
}

// TestContinueAsNewUpdates: updates that arrive while a step's activity
// runs, and with them Temporal's suggestion to continue as new, are
// answered first, by this run: none is left without an answer, and the
// next run starts from the machine they left.
func TestContinueAsNewUpdates(t *testing.T) {
	t.Parallel()
	env := newEnv(t, &shop{}, fsmtemporal.Options[order.Event, order.Action]{})
	answers := map[string]order.State{}
	sent := false
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name != "Order.SendPaymentLink" || sent {
			return
		}
		sent = true
		env.SetContinueAsNewSuggested(true)
		for _, id := range []string{"paid", "paid again"} {
			env.UpdateWorkflow(fsmtemporal.EventUpdate, id, &testsuite.TestUpdateCallback{
				OnAccept: func() {},
				OnReject: func(err error) { t.Errorf("update %s rejected: %v", id, err) },
				OnComplete: func(v any, err error) {
					if assert.NoError(t, err, id) {
						answers[id] = stateOf(t, v.(json.RawMessage))
					}
				},
			}, raw(t, &order.PaymentReceived{}))
		}
	})
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.AddItem{Price: 60}))
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.BeginCheckout{}))
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.PlaceOrder{}))
	}, time.Minute)
	env.ExecuteWorkflow(orderflow.Name, fsmtemporal.Input{})

	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(env.GetWorkflowError(), &can), "%v", env.GetWorkflowError())
	var in fsmtemporal.Input
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &in))
	assert.Equal(t, map[string]order.State{"paid": order.Picking{Total: 60}, "paid again": order.Picking{Total: 60}}, answers)
	m, err := order.Load(order.Config{Behavior: order.Shop{}, Handler: &order.Recorder{}}, in.Saved)
	require.NoError(t, err)
	assert.Equal(t, order.Picking{Total: 60}, m.State())
}
