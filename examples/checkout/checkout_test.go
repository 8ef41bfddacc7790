package checkout_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/examples/checkout"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// processing returns a machine that has checked out, with its Recorder
// emptied.
func processing(t *testing.T) (*checkout.Machine, *checkout.Recorder) {
	t.Helper()
	rec := &checkout.Recorder{}
	m, err := checkout.New(checkout.Config{Handler: rec})
	require.NoError(t, err)
	require.NoError(t, m.HandleEvent(&checkout.Checkout{}))
	rec.Actions = nil
	return m, rec
}

// TestDone sends events that end the regions in every order: a region
// whose final state is entered while the other is not final rests there,
// and the step that ends the last region takes Processing's done
// transition (SCXML 1.0 §3.4, done.state.Processing): the region's own
// actions, then Processing's exit, then the done transition's action.
func TestDone(t *testing.T) {
	t.Parallel()
	paid, packed, shipped, collected := &checkout.Paid{}, &checkout.Packed{}, &checkout.Shipped{}, &checkout.Collected{}
	for _, tc := range []struct {
		name   string
		events []checkout.Event
		// rest is the state before the last event; last the actions it
		// hands out.
		rest checkout.State
		last []checkout.Action
	}{
		{
			name:   "paid first",
			events: []checkout.Event{paid, packed, shipped},
			rest:   checkout.Processing{Payment: checkout.StateSettled, Shipping: checkout.StateReady},
			last:   []checkout.Action{&checkout.NotifyCustomer{}, &checkout.CloseOrder{}, &checkout.SendReceipt{}},
		},
		{
			name:   "shipped first",
			events: []checkout.Event{packed, shipped, paid},
			rest:   checkout.Processing{Payment: checkout.StateUnpaid, Shipping: checkout.StateHandedOver},
			last:   []checkout.Action{&checkout.IssueInvoice{}, &checkout.CloseOrder{}, &checkout.SendReceipt{}},
		},
		{
			// Both regions take Collected, as one step: the entries in
			// document order, then the done transition.
			name:   "collected in store",
			events: []checkout.Event{packed, collected},
			rest:   checkout.Processing{Payment: checkout.StateUnpaid, Shipping: checkout.StateReady},
			last:   []checkout.Action{&checkout.IssueInvoice{}, &checkout.NotifyCustomer{}, &checkout.CloseOrder{}, &checkout.SendReceipt{}},
		},
		{
			name:   "collected once paid",
			events: []checkout.Event{paid, packed, collected},
			rest:   checkout.Processing{Payment: checkout.StateSettled, Shipping: checkout.StateReady},
			last:   []checkout.Action{&checkout.NotifyCustomer{}, &checkout.CloseOrder{}, &checkout.SendReceipt{}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, rec := processing(t)
			for _, ev := range tc.events[:len(tc.events)-1] {
				require.NoError(t, m.HandleEvent(ev))
			}
			assert.Equal(t, tc.rest, m.State())
			rec.Actions = nil
			require.NoError(t, m.HandleEvent(tc.events[len(tc.events)-1]))
			assert.Equal(t, checkout.Completed{}, m.State())
			assert.Equal(t, tc.last, rec.Actions)
		})
	}
}

// TestFinalRegionRests pays first: Payment rests in its final state while
// Shipping works, and the events Payment is offered there go to
// Processing, which ignores a second payment.
func TestFinalRegionRests(t *testing.T) {
	t.Parallel()
	m, rec := processing(t)
	require.NoError(t, m.HandleEvent(&checkout.Paid{}))
	assert.Equal(t, []checkout.Action{&checkout.IssueInvoice{}}, rec.Actions)
	rec.Actions = nil
	require.NoError(t, m.HandleEvent(&checkout.Paid{}))
	require.NoError(t, m.HandleEvent(&checkout.Packed{}))
	assert.Empty(t, rec.Actions)
	assert.Equal(t, checkout.Processing{Payment: checkout.StateSettled, Shipping: checkout.StateReady}, m.State())

	// Cancelled while one region is final: every region is left.
	require.NoError(t, m.HandleEvent(&checkout.Cancel{}))
	assert.Equal(t, checkout.Cancelled{}, m.State())
	assert.Equal(t, []checkout.Action{&checkout.CloseOrder{}, &checkout.Refund{}}, rec.Actions)
}

// TestCollectedTooEarly rejects a collection while the parcel is packed:
// Payment's In(Ready) guard fails and rejects it for the machine, and with
// the payment made, Processing's own rule rejects it.
func TestCollectedTooEarly(t *testing.T) {
	t.Parallel()
	m, _ := processing(t)
	require.ErrorIs(t, m.HandleEvent(&checkout.Collected{}), fsmrt.ErrRejected)
	require.NoError(t, m.HandleEvent(&checkout.Paid{}))
	err := m.HandleEvent(&checkout.Collected{})
	require.ErrorIs(t, err, fsmrt.ErrRejected)
	assert.Contains(t, err.Error(), "the parcel is not ready for collection")
	assert.Equal(t, checkout.Processing{Payment: checkout.StateSettled, Shipping: checkout.StatePacking}, m.State())
}

// TestObserverSeesDone checks the steps of the event that completes
// Processing: the region's rule, from and to Processing, then the done
// transition, from Processing to Completed.
func TestObserverSeesDone(t *testing.T) {
	t.Parallel()
	m, _ := processing(t)
	require.NoError(t, m.HandleEvent(&checkout.Paid{}))
	require.NoError(t, m.HandleEvent(&checkout.Packed{}))
	var steps []checkout.Step
	m.SetObserver(func(s checkout.Step) { steps = append(steps, s) })
	require.NoError(t, m.HandleEvent(&checkout.Shipped{}))
	require.Len(t, steps, 2)
	rules := checkout.Rules()
	assert.Equal(t, "Ready --Shipped--> HandedOver", rules[steps[0].Rule].Label)
	assert.Equal(t, checkout.StateProcessing, steps[0].To)
	assert.Equal(t, "Processing --done--> Completed / SendReceipt", rules[steps[1].Rule].Label)
	assert.Equal(t, checkout.StateProcessing, steps[1].From)
	assert.Equal(t, checkout.StateCompleted, steps[1].To)
}

// TestSaveLoad saves the machine with one region at rest in its final
// state and loads it; Restore and Load refuse every region final, a
// configuration the machine never rests in (it takes the done transition).
func TestSaveLoad(t *testing.T) {
	t.Parallel()
	m, _ := processing(t)
	require.NoError(t, m.HandleEvent(&checkout.Paid{}))
	data, err := m.Save()
	require.NoError(t, err)
	assert.Contains(t, string(data), `"state":{"kind":"processing","payment":"settled","shipping":"packing"}`)
	m2, err := checkout.Load(checkout.Config{Handler: &checkout.Recorder{}}, data)
	require.NoError(t, err)
	assert.Equal(t, m.State(), m2.State())

	for _, bad := range []struct{ from, to, want string }{
		{`"shipping":"packing"`, `"shipping":"handed_over"`, "every region is in a final state"},
		{`"shipping":"packing"`, `"shipping":"settled"`, "region Shipping is in Settled"},
	} {
		_, err := checkout.Load(checkout.Config{Handler: &checkout.Recorder{}}, []byte(strings.Replace(string(data), bad.from, bad.to, 1)))
		require.Error(t, err, bad.to)
		assert.Contains(t, err.Error(), bad.want)
	}
	_, err = checkout.Restore(checkout.Config{Handler: &checkout.Recorder{}}, checkout.Processing{Payment: checkout.StateSettled, Shipping: checkout.StateHandedOver})
	assert.ErrorContains(t, err, "cannot restore Processing: every region is in a final state")
}
