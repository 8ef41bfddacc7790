package order_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/examples/order"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// deadline is how long a placed order waits for its payment.
const deadline = 30 * time.Minute

// placed is the way from a new cart to a placed order of 12.50.
var placed = []order.Event{
	&order.AddItem{Price: 1000},
	&order.AddItem{Price: 250},
	&order.BeginCheckout{},
	&order.PlaceOrder{},
}

// newOrder returns a new order, in Cart, whose actions rec records, fed
// the events of path.
func newOrder(t *testing.T, rec *order.Recorder, path ...order.Event) *order.Machine {
	t.Helper()
	m, err := order.New(order.Config{Behavior: order.Shop{}, Handler: rec})
	require.NoError(t, err)
	for i, ev := range path {
		require.NoError(t, m.HandleEvent(ev), "event %d (%s) of the path", i, ev.Kind())
	}
	return m
}

// paymentTimer returns the id of the payment deadline's timer: the one
// StartTimer action among acts, which must start it for 30 minutes.
func paymentTimer(t *testing.T, acts []order.Action) order.TimerID {
	t.Helper()
	var starts []*order.StartTimer
	for _, a := range acts {
		if s, ok := a.(*order.StartTimer); ok {
			starts = append(starts, s)
		}
	}
	require.Len(t, starts, 1, "one timer started")
	require.Equal(t, deadline, starts[0].Delay)
	return starts[0].Timer
}

// TestPlaceOrder checks the way to a placed order: the total adds up, an
// empty cart cannot check out, and placing the order sends the payment
// link and starts the deadline.
func TestPlaceOrder(t *testing.T) {
	tests := []struct {
		name       string
		path       []order.Event
		ev         order.Event
		wantState  order.State
		wantActs   []order.Action
		wantReason string
	}{
		{
			name:      "items add up in the cart",
			path:      placed[:1],
			ev:        &order.AddItem{Price: 250},
			wantState: order.Cart{Total: 1250},
		},
		{
			name:       "an empty cart cannot check out",
			ev:         &order.BeginCheckout{},
			wantState:  order.Cart{},
			wantReason: "the cart is empty",
		},
		{
			name:      "back to the cart from the checkout",
			path:      placed[:3],
			ev:        &order.BackToCart{},
			wantState: order.Cart{Total: 1250},
		},
		{
			name:      "placing the order sends the link, then starts the deadline",
			path:      placed[:3],
			ev:        &order.PlaceOrder{},
			wantState: order.AwaitingPayment{Total: 1250},
			wantActs: []order.Action{
				&order.SendPaymentLink{Total: 1250},
				&order.StartTimer{Timer: 1, Delay: deadline},
			},
		},
		{
			name:       "no payment is asked for in the cart",
			ev:         &order.PaymentReceived{},
			wantState:  order.Cart{},
			wantReason: "PaymentReceived is not accepted while in Unpaid", // the composite whose list rejects it
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &order.Recorder{}
			m := newOrder(t, rec, tt.path...)
			rec.Actions = nil
			err := m.HandleEvent(tt.ev)
			if tt.wantReason != "" {
				var rej *order.RejectedError
				require.ErrorAs(t, err, &rej)
				assert.Equal(t, tt.wantReason, rej.Reason)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.wantState, m.State())
			assert.Equal(t, tt.wantActs, rec.Actions)
		})
	}
}

// TestPaymentDeadline fires the deadline's timer, with the id the Recorder
// saw in StartTimer, and checks that a timer that fires after the order
// was paid or cancelled (a stale one) is ignored.
func TestPaymentDeadline(t *testing.T) {
	tests := []struct {
		name string
		// before are the events handled after the order is placed and
		// before the deadline's timer fires.
		before    []order.Event
		wantState order.State
		// wantBefore are the actions of the before events.
		wantBefore []order.Action
		// wantFired are the actions of the timer firing.
		wantFired []order.Action
	}{
		{
			name:      "unpaid at the deadline, the order expires",
			wantState: order.Expired{},
			wantFired: []order.Action{&order.RevokePaymentLink{}, &order.SendExpiryNotice{}},
		},
		{
			name:      "paid in time, the deadline's timer is stale and ignored",
			before:    []order.Event{&order.PaymentReceived{}},
			wantState: order.Picking{Total: 1250},
			wantBefore: []order.Action{
				&order.CancelTimer{Timer: 1},
				&order.RevokePaymentLink{},
				&order.SendReceipt{Total: 1250},
				&order.OpenWarehouseOrder{},
			},
		},
		{
			name:      "cancelled before the deadline, the timer is stale and ignored",
			before:    []order.Event{&order.Cancel{}},
			wantState: order.Cancelled{},
			wantBefore: []order.Action{
				&order.CancelTimer{Timer: 1},
				&order.RevokePaymentLink{},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &order.Recorder{}
			m := newOrder(t, rec, placed...)
			timer := paymentTimer(t, rec.Actions)

			rec.Actions = nil
			for _, ev := range tt.before {
				require.NoError(t, m.HandleEvent(ev))
			}
			assert.Equal(t, tt.wantBefore, rec.Actions)

			rec.Actions = nil
			require.NoError(t, m.HandleEvent(&order.TimerFired{Timer: timer}))
			assert.Equal(t, tt.wantState, m.State())
			assert.Equal(t, tt.wantFired, rec.Actions)
		})
	}
}

// TestLatePayment checks that a payment arriving after the order expired
// is rejected, so that the caller refunds it.
func TestLatePayment(t *testing.T) {
	rec := &order.Recorder{}
	m := newOrder(t, rec, placed...)
	require.NoError(t, m.HandleEvent(&order.TimerFired{Timer: paymentTimer(t, rec.Actions)}))
	require.Equal(t, order.Expired{}, m.State())

	rec.Actions = nil
	err := m.HandleEvent(&order.PaymentReceived{})
	require.ErrorIs(t, err, fsmrt.ErrRejected)
	assert.Equal(t, order.Expired{}, m.State())
	assert.Empty(t, rec.Actions)
}

// TestCancel cancels the order in every state: before payment nothing is
// refunded; during fulfilment Fulfilment's one rule closes the warehouse
// order and refunds the total, in each sub-state but Shipped, which
// refuses the cancellation with its own rule.
func TestCancel(t *testing.T) {
	paid := append(placed[:4:4], &order.PaymentReceived{})
	tests := []struct {
		name       string
		path       []order.Event
		wantState  order.State
		wantActs   []order.Action
		wantReason string
	}{
		{
			name:      "in the cart",
			path:      placed[:2],
			wantState: order.Cancelled{},
		},
		{
			name:      "at the checkout",
			path:      placed[:3],
			wantState: order.Cancelled{},
		},
		{
			name:      "awaiting payment: the link is revoked",
			path:      placed,
			wantState: order.Cancelled{},
			wantActs:  []order.Action{&order.CancelTimer{Timer: 1}, &order.RevokePaymentLink{}},
		},
		{
			name:      "while picking: refunded",
			path:      paid,
			wantState: order.Cancelled{},
			wantActs:  []order.Action{&order.CloseWarehouseOrder{}, &order.Refund{Total: 1250}},
		},
		{
			name:      "while packing: refunded",
			path:      append(paid[:5:5], &order.Picked{}),
			wantState: order.Cancelled{},
			wantActs:  []order.Action{&order.CloseWarehouseOrder{}, &order.Refund{Total: 1250}},
		},
		{
			name:       "once shipped: refused",
			path:       append(paid[:5:5], &order.Picked{}, &order.Dispatched{Tracking: "TR-1"}),
			wantState:  order.Shipped{Total: 1250, Tracking: "TR-1"},
			wantReason: "the parcel has shipped",
		},
		{
			name:       "once delivered: refused",
			path:       append(paid[:5:5], &order.Picked{}, &order.Dispatched{Tracking: "TR-1"}, &order.DeliveryConfirmed{}),
			wantState:  order.Delivered{},
			wantReason: "Cancel is not accepted in state Delivered",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &order.Recorder{}
			m := newOrder(t, rec, tt.path...)
			rec.Actions = nil
			err := m.HandleEvent(&order.Cancel{})
			if tt.wantReason != "" {
				var rej *order.RejectedError
				require.ErrorAs(t, err, &rej)
				assert.Equal(t, tt.wantReason, rej.Reason)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.wantState, m.State())
			assert.Equal(t, tt.wantActs, rec.Actions)
		})
	}
}

// TestFulfilment follows a paid order to the customer's door, checking the
// exit and entry actions on the way, and that a payment reported twice
// changes nothing.
func TestFulfilment(t *testing.T) {
	rec := &order.Recorder{}
	m := newOrder(t, rec, placed...)
	steps := []struct {
		ev        order.Event
		wantState order.State
		wantActs  []order.Action
	}{
		{
			ev:        &order.PaymentReceived{},
			wantState: order.Picking{Total: 1250},
			// exits (the deadline's timer, then the exit action), the
			// rule's action, then the entry of Fulfilment.
			wantActs: []order.Action{
				&order.CancelTimer{Timer: 1},
				&order.RevokePaymentLink{},
				&order.SendReceipt{Total: 1250},
				&order.OpenWarehouseOrder{},
			},
		},
		{ev: &order.PaymentReceived{}, wantState: order.Picking{Total: 1250}},
		{ev: &order.Picked{}, wantState: order.Packing{Total: 1250}},
		{
			ev:        &order.Dispatched{Tracking: "TR-1"},
			wantState: order.Shipped{Total: 1250, Tracking: "TR-1"},
			wantActs:  []order.Action{&order.SendTrackingLink{Tracking: "TR-1"}},
		},
		{
			ev:        &order.DeliveryConfirmed{},
			wantState: order.Delivered{},
			wantActs:  []order.Action{&order.CloseWarehouseOrder{}},
		},
		{ev: &order.PaymentReceived{}, wantState: order.Delivered{}},
	}
	for i, s := range steps {
		rec.Actions = nil
		require.NoError(t, m.HandleEvent(s.ev), "step %d (%s)", i, s.ev.Kind())
		assert.Equal(t, s.wantState, m.State(), "step %d (%s)", i, s.ev.Kind())
		assert.Equal(t, s.wantActs, rec.Actions, "step %d (%s)", i, s.ev.Kind())
	}
}
