package orderflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/fsmgen/fsmgen/examples/order"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
	"github.com/fsmgen/fsmgen/temporal/orderflow"
)

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// TestDeadline: a placed order left unpaid expires when the payment window
// (30 minutes) has passed, in test time: the deadline is a workflow timer,
// it fires once, and the workflow ends with the machine expired.
func TestDeadline(t *testing.T) {
	t.Parallel()
	s := &shop{}
	env := newEnv(t, s, fsmtemporal.Options[order.Event, order.Action]{})
	env.SetStartTime(start)
	var placed, expired time.Time
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.AddItem{Price: 1250}))
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.BeginCheckout{}))
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.PlaceOrder{}))
		placed = env.Now()
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		assert.Equal(t, order.AwaitingPayment{Total: 1250}, query(t, env))
	}, 29*time.Minute)
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == "Order.SendExpiryNotice" {
			expired = env.Now()
		}
	})
	env.ExecuteWorkflow(orderflow.Name, fsmtemporal.Input{})

	m := result(t, env)
	assert.Equal(t, order.Expired{}, m.State())
	assert.Equal(t, placed.Add(order.DefaultWindow), expired, "the notice is sent at the deadline")
	assert.Equal(t, expected(t, &order.AddItem{Price: 1250}, &order.BeginCheckout{}, &order.PlaceOrder{},
		&order.TimerFired{Timer: 1}), s.performed())
	assert.Equal(t, 1, s.tries["SendExpiryNotice"], "the deadline fires once")
}

// TestFulfilment: a paid order cancels its deadline, and goes through to
// delivery, performing the actions the machine hands out for the same
// events; the workflow ends when the order does, well after the deadline
// would have passed.
func TestFulfilment(t *testing.T) {
	t.Parallel()
	events := []order.Event{
		&order.AddItem{Price: 700}, &order.AddItem{Price: 300}, &order.BeginCheckout{}, &order.PlaceOrder{},
		&order.PaymentReceived{}, &order.PaymentReceived{}, &order.Picked{},
		&order.Dispatched{Tracking: "TRK-1"}, &order.DeliveryConfirmed{},
	}
	s := &shop{}
	env := newEnv(t, s, fsmtemporal.Options[order.Event, order.Action]{})
	env.SetStartTime(start)
	for i, ev := range events {
		env.RegisterDelayedCallback(func() {
			env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, ev))
		}, time.Duration(i+1)*10*time.Minute)
	}
	env.ExecuteWorkflow(orderflow.Name, fsmtemporal.Input{})

	m := result(t, env)
	assert.Equal(t, order.Delivered{}, m.State())
	assert.Equal(t, expected(t, events...), s.performed())
	assert.Zero(t, s.tries["SendExpiryNotice"], "the deadline was cancelled")
}

// outcome is what an update came to.
type outcome struct {
	rejected bool        // by the validator
	err      error       // the rejection, or the handler's error
	state    order.State // the state it answered with
}

// TestUpdate: an event sent as an update answers with the state after it;
// one the machine rejects is refused by the validator, with the machine's
// reason, and changes nothing; an update that is no event is refused too.
func TestUpdate(t *testing.T) {
	t.Parallel()
	updates := []struct {
		name string
		ev   json.RawMessage
	}{
		{"empty cart", raw(t, &order.BeginCheckout{})},
		{"add", raw(t, &order.AddItem{Price: 500})},
		{"unknown field", json.RawMessage(`{"kind":"add_item","price":5,"colour":"red"}`)},
		{"cancel", raw(t, &order.Cancel{})},
	}
	s := &shop{}
	env := newEnv(t, s, fsmtemporal.Options[order.Event, order.Action]{})
	got := make([]outcome, len(updates))
	var states []order.State
	for i, u := range updates {
		env.RegisterDelayedCallback(func() {
			states = append(states, query(t, env))
			env.UpdateWorkflow(fsmtemporal.EventUpdate, u.name, &testsuite.TestUpdateCallback{
				OnAccept: func() {},
				OnReject: func(err error) { got[i] = outcome{rejected: true, err: err} },
				OnComplete: func(v any, err error) {
					got[i].err = err
					if err == nil {
						got[i].state = stateOf(t, v.(json.RawMessage))
					}
				},
			}, u.ev)
		}, time.Duration(i+1)*time.Minute)
	}
	env.ExecuteWorkflow(orderflow.Name, fsmtemporal.Input{})

	assert.Equal(t, order.Cancelled{}, result(t, env).State())
	assert.Equal(t, []order.State{order.Cart{}, order.Cart{}, order.Cart{Total: 500}, order.Cart{Total: 500}}, states,
		"the state before each update: the rejected ones changed nothing")

	assert.True(t, got[0].rejected, "the empty cart's checkout is rejected by the validator")
	var app *temporal.ApplicationError
	if assert.True(t, errors.As(got[0].err, &app), "%v", got[0].err) {
		assert.Equal(t, fsmtemporal.RejectedType, app.Type())
	}
	assert.ErrorContains(t, got[0].err, "the cart is empty")

	assert.Equal(t, outcome{state: order.Cart{Total: 500}}, got[1])

	assert.True(t, got[2].rejected)
	assert.ErrorContains(t, got[2].err, "not an event of the machine")

	assert.Equal(t, outcome{state: order.Cancelled{}}, got[3])
	assert.Empty(t, s.performed(), "an unpaid cart cancelled performs nothing")
}

// TestSignalRejected: an event sent as a signal that the machine rejects,
// or that is no event, is dropped and changes nothing.
func TestSignalRejected(t *testing.T) {
	t.Parallel()
	env := newEnv(t, &shop{}, fsmtemporal.Options[order.Event, order.Action]{})
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.AddItem{Price: 100}))
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.PlaceOrder{}))
		env.SignalWorkflow(fsmtemporal.EventSignal, json.RawMessage(`{"kind":"teleport"}`))
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		assert.Equal(t, order.Cart{Total: 100}, query(t, env))
		env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.Cancel{}))
	}, 2*time.Minute)
	env.ExecuteWorkflow(orderflow.Name, fsmtemporal.Input{})
	assert.Equal(t, order.Cancelled{}, result(t, env).State())
}

// TestUpdateBehindSignal: an update sent right after a signal meets the
// machine the signal left, as the order they were sent in says, even when
// both reach the workflow in one task (before its code has taken the
// signal): BeginCheckout is valid only once AddItem has filled the cart.
// An update behind a pending event that the machine then rejects is
// answered with the machine's reason by the handler.
func TestUpdateBehindSignal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		signal order.Event
		want   order.State
		reason string
	}{
		{"taken after the signal", &order.AddItem{Price: 250}, order.Checkout{Total: 250}, ""},
		{"rejected after the signal", &order.Cancel{}, nil, "Cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t, &shop{}, fsmtemporal.Options[order.Event, order.Action]{})
			var got outcome
			env.RegisterDelayedCallback(func() {
				// Both in one workflow task, as a server delivers them when
				// the update comes before the signal's task has started.
				env.SignalWorkflowSkippingWorkflowTask(fsmtemporal.EventSignal, raw(t, tt.signal))
				env.UpdateWorkflow(fsmtemporal.EventUpdate, "checkout", &testsuite.TestUpdateCallback{
					OnAccept: func() {},
					OnReject: func(err error) { got = outcome{rejected: true, err: err} },
					OnComplete: func(v any, err error) {
						got.err = err
						if err == nil {
							got.state = stateOf(t, v.(json.RawMessage))
						}
					},
				}, raw(t, &order.BeginCheckout{}))
			}, time.Minute)
			env.RegisterDelayedCallback(func() {
				env.SignalWorkflow(fsmtemporal.EventSignal, raw(t, &order.Cancel{}))
			}, 2*time.Minute)
			env.ExecuteWorkflow(orderflow.Name, fsmtemporal.Input{})
			if tt.reason == "" {
				assert.Equal(t, outcome{state: tt.want}, got)
				return
			}
			assert.False(t, got.rejected, "the validator cannot know what the signal before it will do")
			var app *temporal.ApplicationError
			if assert.True(t, errors.As(got.err, &app), "%v", got.err) {
				assert.Equal(t, fsmtemporal.RejectedType, app.Type())
			}
			assert.ErrorContains(t, got.err, tt.reason)
		})
	}
}
