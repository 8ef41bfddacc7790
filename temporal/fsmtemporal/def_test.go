package fsmtemporal_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/examples/order"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
	"github.com/fsmgen/fsmgen/temporal/orderflow"
)

// defType is the order's Def.
type defType = fsmtemporal.Def[*order.Machine, order.Event, order.Action, orderflow.Activities]

func TestDefCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(*defType)
		want   string
	}{
		{"whole", func(*defType) {}, ""},
		{"no name", func(d *defType) { d.Name = "" }, "has no Name"},
		{"no functions", func(d *defType) { d.Open, d.State = nil, nil }, "Order: the Def lacks Open, State"},
		{"half the timers", func(d *defType) { d.Timers, d.Deadline = nil, nil }, "Order: the Def has TimerFired, Timer but lacks Timers, Deadline"},
		{"no timers", func(d *defType) { d.TimerFired, d.Timer, d.Timers, d.Deadline = nil, nil, nil, nil }, ""},
		{"revision 0", func(d *defType) { d.Revision, d.MinRevision = 0, 0 }, "MinRevision must be at least 1"},
		{"revisions out of order", func(d *defType) { d.Revision, d.MinRevision = 1, 2 }, "the revisions are 2 to 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			def := orderflow.Def(order.Shop{})
			tt.change(def)
			err := def.Check()
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.want)
		})
	}
}
