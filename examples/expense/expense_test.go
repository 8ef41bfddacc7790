package expense_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/examples/expense"
)

// office is a Handler as a process running the claim in plain Go would
// write it: the pure Tally keeps its bookkeeping in memory, the others
// would call out (here they record what they were asked).
type office struct {
	costs    int
	sum      expense.Cents
	paid     []expense.Cents
	rejected []string
}

func (o *office) Tally(amount expense.Cents)   { o.costs++; o.sum += amount }
func (o *office) PayOut(total expense.Cents)   { o.paid = append(o.paid, total) }
func (o *office) NotifyRejected(reason string) { o.rejected = append(o.rejected, reason) }

// TestHandlerPerformsPureActions: in plain Go, pure: true changes nothing:
// the machine hands Tally to the Handler like any other action, in the
// step that adds the cost, before the claim is paid.
func TestHandlerPerformsPureActions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		events []expense.Event
		want   office
		state  expense.State
	}{
		{
			name:   "paid",
			events: []expense.Event{&expense.AddCost{Amount: 1000}, &expense.AddCost{Amount: 250}, &expense.Approve{}},
			want:   office{costs: 2, sum: 1250, paid: []expense.Cents{1250}},
			state:  expense.Paid{Total: 1250},
		},
		{
			name:   "rejected",
			events: []expense.Event{&expense.AddCost{Amount: 40}, &expense.Reject{Reason: "no receipt"}},
			want:   office{costs: 1, sum: 40, rejected: []string{"no receipt"}},
			state:  expense.Rejected{Reason: "no receipt"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := &office{}
			m, err := expense.New(expense.Config{Behavior: expense.Claims{}, Handler: o})
			require.NoError(t, err)
			for _, ev := range tt.events {
				require.NoError(t, m.HandleEvent(ev))
			}
			assert.Equal(t, tt.want, *o)
			assert.Equal(t, tt.state, m.State())
		})
	}
}

// TestEmptyClaim: a claim without costs cannot be approved.
func TestEmptyClaim(t *testing.T) {
	t.Parallel()
	m, err := expense.New(expense.Config{Behavior: expense.Claims{}, Handler: &office{}})
	require.NoError(t, err)
	assert.ErrorContains(t, m.HandleEvent(&expense.Approve{}), "the claim is empty")
	assert.Equal(t, expense.Open{}, m.State())
}
