package realserver_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/fsmgen/fsmgen/examples/order"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
	"github.com/fsmgen/fsmgen/temporal/orderflow"
)

var update = flag.Bool("update", false, "write the histories recorded here to ../orderflow/testdata and ../expenseflow/testdata, for their replay tests")

// count returns how many of events are of type typ.
func count(events []*historypb.HistoryEvent, typ enumspb.EventType) int {
	n := 0
	for _, ev := range events {
		if ev.GetEventType() == typ {
			n++
		}
	}
	return n
}

// activities lists the activities the history scheduled, by type.
func activities(events []*historypb.HistoryEvent) []string {
	var out []string
	for _, ev := range events {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			out = append(out, a.GetActivityType().GetName())
		}
	}
	return out
}

// record replays h against the current code, which must take the same
// steps, and with -update writes it to ../orderflow/testdata/name.
func record(t *testing.T, h *historypb.History, name string) {
	t.Helper()
	r := worker.NewWorkflowReplayer()
	fsmtemporal.RegisterWorkflow(r, orderflow.Def(order.Shop{Window: window}), fsmtemporal.Options[order.Event, order.Action]{})
	require.NoError(t, r.ReplayWorkflowHistory(quiet, h), "the current code replays the history it recorded")
	if !*update {
		return
	}
	data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join("..", "orderflow", "testdata", name), append(data, '\n'), 0o644))
}

// window is the payment window of the orders here: short, for a deadline
// that the server fires in real time.
const window = 3 * time.Second

// TestWorkerRestart: the worker is stopped while an order waits for its
// payment; the server fires the deadline with no worker running; a new
// worker, with nothing cached, replays the history and expires the order.
// The deadline fired once, not before its time, and the expiry notice
// went out once.
func TestWorkerRestart(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	c := ts.GetDefaultClient()
	ctx := context.Background()
	s := &shop{}
	first := startWorker(t, c, s, window)
	const id = "order-restart"
	run, err := fsmtemporal.Start(ctx, c, client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue}, orderflow.Name, nil)
	require.NoError(t, err)
	send(t, c, id, &order.AddItem{Price: 1250})
	send(t, c, id, &order.BeginCheckout{})
	require.Equal(t, order.AwaitingPayment{Total: 1250}, send(t, c, id, &order.PlaceOrder{}))
	first.Stop()

	fired := waitFor(t, c, id, enumspb.EVENT_TYPE_TIMER_FIRED)
	second := startWorker(t, c, s, window)
	defer second.Stop()
	assert.Equal(t, order.Expired{}, result(t, run).State())

	h := history(t, c, id)
	assert.Equal(t, 1, count(h.Events, enumspb.EVENT_TYPE_TIMER_STARTED))
	assert.Equal(t, 1, count(h.Events, enumspb.EVENT_TYPE_TIMER_FIRED), "the deadline fires once")
	// The deadline counts from the step of PlaceOrder (the workflow's clock
	// is its task's start), though the timer starts after the payment link's
	// activity, in a later task, for what is left of the window.
	var placed, taskStarted, timerSet time.Time
	var left time.Duration
	accepted := 0
	for _, ev := range h.Events {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			taskStarted = ev.GetEventTime().AsTime()
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			if accepted++; accepted == 3 { // AddItem, BeginCheckout, PlaceOrder
				placed = taskStarted
			}
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			timerSet = taskStarted
			left = ev.GetTimerStartedEventAttributes().GetStartToFireTimeout().AsDuration()
		}
	}
	require.False(t, placed.IsZero())
	deadline := placed.Add(window)
	assert.Equal(t, deadline, timerSet.Add(left), "the timer is set for the machine's deadline")
	assert.False(t, fired.GetEventTime().AsTime().Before(deadline), "not before the deadline")
	assert.Equal(t, []string{"SendPaymentLink(1250)", "RevokePaymentLink", "SendExpiryNotice"}, s.performed())
	assert.Equal(t, []string{"Order.SendPaymentLink", "Order.RevokePaymentLink", "Order.SendExpiryNotice"}, activities(h.Events))
	record(t, h, "expired.json")
}

// TestHistory: what each machine event writes to the history. A rejected
// update writes nothing; a signal or an update writes what Temporal writes
// for it and its workflow task; an action, its activity's events; the
// adapter adds no marker, side effect or task but the one marker of the
// spec's revision per run.
func TestHistory(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	c := ts.GetDefaultClient()
	ctx := context.Background()
	s := &shop{}
	w := startWorker(t, c, s, window)
	defer w.Stop()
	const id = "order-history"
	run, err := fsmtemporal.Start(ctx, c, client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue}, orderflow.Name, nil)
	require.NoError(t, err)
	waitFor(t, c, id, enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
	seen := len(history(t, c, id).Events)
	// next returns the events written since the last call.
	next := func() []string {
		h := history(t, c, id)
		out := types(h.Events[seen:])
		seen = len(h.Events)
		return out
	}

	_, err = fsmtemporal.Send(ctx, c, id, &order.BeginCheckout{})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	assert.Equal(t, fsmtemporal.RejectedType, app.Type())
	assert.ErrorContains(t, err, "the cart is empty")
	assert.Empty(t, next(), "a rejected update writes nothing")

	require.NoError(t, fsmtemporal.Signal(ctx, c, id, &order.AddItem{Price: 400}))
	require.Eventually(t, func() bool {
		st, err := fsmtemporal.State(ctx, c, id)
		return err == nil && string(st) == `{"kind":"cart","total":400}`
	}, time.Minute, 10*time.Millisecond, "the signal is handled")
	signal := next()
	assert.Equal(t, []string{"WorkflowExecutionSignaled", "WorkflowTaskScheduled",
		"WorkflowTaskStarted", "WorkflowTaskCompleted"}, signal)

	assert.Equal(t, order.Cart{Total: 500}, send(t, c, id, &order.AddItem{Price: 100}))
	upd := next()
	assert.Equal(t, []string{"WorkflowTaskScheduled", "WorkflowTaskStarted",
		"WorkflowTaskCompleted", "WorkflowExecutionUpdateAccepted",
		"WorkflowExecutionUpdateCompleted"}, upd)

	send(t, c, id, &order.BeginCheckout{})
	next()
	send(t, c, id, &order.PlaceOrder{}) // SendPaymentLink, and the deadline
	placed := next()
	t.Logf("PlaceOrder, an update with an activity and a timer: %v", placed)
	assert.Equal(t, 1, countTypes(placed, "ActivityTaskScheduled"))
	assert.Equal(t, 1, countTypes(placed, "TimerStarted"))

	require.NoError(t, fsmtemporal.Signal(ctx, c, id, &order.PaymentReceived{}))
	for _, ev := range []order.Event{&order.Picked{}, &order.Dispatched{Tracking: "TRK-9"}} {
		send(t, c, id, ev)
	}
	require.NoError(t, fsmtemporal.Signal(ctx, c, id, &order.DeliveryConfirmed{}))
	assert.Equal(t, order.Delivered{}, result(t, run).State())

	h := history(t, c, id)
	assert.Equal(t, 1, count(h.Events, enumspb.EVENT_TYPE_MARKER_RECORDED), "one marker, the revision's")
	assert.Equal(t, 1, count(h.Events, enumspb.EVENT_TYPE_TIMER_CANCELED), "the payment cancels the deadline")
	assert.Equal(t, []string{"SendPaymentLink(500)", "RevokePaymentLink", "SendReceipt(500)", "OpenWarehouseOrder",
		"SendTrackingLink(TRK-9)", "CloseWarehouseOrder"}, s.performed())
	t.Logf("the order's whole history: %d events", len(h.Events))
	record(t, h, "delivered.json")
}

func countTypes(list []string, typ string) int {
	n := 0
	for _, s := range list {
		if s == typ {
			n++
		}
	}
	return n
}
