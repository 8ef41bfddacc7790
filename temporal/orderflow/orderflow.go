// Package orderflow runs the order of package examples/order as a Temporal
// workflow, through package fsmtemporal: one workflow an order, its
// events as signals or updates, its actions as activities, the payment
// deadline as a durable workflow timer.
//
// It is what fsmtemporal needs of one machine, written by hand here: the
// Def, the Activities interface (the order's Handler with a context and an
// error, for activities) and the dispatch from an action to its method.
// fsmgen is to generate this file for a machine whose spec asks for it
// (docs/temporal.md, "What fsmgen generates"); nothing in it is particular
// to the order but the names.
package orderflow

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/fsmgen/fsmgen/examples/order"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
)

// Name is the order workflow's type name, and its activities' prefix.
const Name = "Order"

// Revision is the revision of spec examples/order/order.yaml this code
// runs, and MinRevision the oldest whose running workflows it continues:
// see fsmtemporal.Def.
const (
	Revision    workflow.Version = 1
	MinRevision workflow.Version = 1
)

// Activities performs the order's actions on a worker: one method per
// action of the spec, given the action's fields. An error is retried
// under the action's retry policy (fsmtemporal.Options.Actions).
type Activities interface {
	SendPaymentLink(ctx context.Context, total order.Cents) error
	RevokePaymentLink(ctx context.Context) error
	SendReceipt(ctx context.Context, total order.Cents) error
	SendExpiryNotice(ctx context.Context) error
	OpenWarehouseOrder(ctx context.Context) error
	CloseWarehouseOrder(ctx context.Context) error
	SendTrackingLink(ctx context.Context, tracking string) error
	Refund(ctx context.Context, total order.Cents) error
}

// Def returns the order's Def, with shop's guards and effects (its
// payment window): every worker of the workflow must be given the same.
func Def(shop order.Shop) *fsmtemporal.Def[*order.Machine, order.Event, order.Action, Activities] {
	return &fsmtemporal.Def[*order.Machine, order.Event, order.Action, Activities]{
		Name:        Name,
		Revision:    Revision,
		MinRevision: MinRevision,
		Open: func(saved []byte) (*order.Machine, fsmtemporal.Recorder[order.Action], error) {
			rec := &recorder{}
			c := order.Config{Behavior: shop, Handler: &rec.Recorder}
			if saved == nil {
				m, err := order.New(c)
				return m, rec, err
			}
			m, err := order.Load(c, saved)
			return m, rec, err
		},
		UnmarshalEvent:  order.UnmarshalEvent,
		UnmarshalAction: order.UnmarshalAction,
		TimerFired: func(id fsmrt.TimerID, deadline, now time.Time) order.Event {
			return &order.TimerFired{Timer: id, Deadline: deadline, Now: now}
		},
		Timer: func(a order.Action) (fsmrt.TimerID, fsmtemporal.TimerOp) {
			switch a := a.(type) {
			case *order.StartTimer:
				return a.Timer, fsmtemporal.StartTimer
			case *order.CancelTimer:
				return a.Timer, fsmtemporal.CancelTimer
			}
			return 0, fsmtemporal.NotTimer
		},
		Timers: func(m *order.Machine) []fsmrt.TimerID {
			var ids []fsmrt.TimerID
			for _, t := range m.Timers() {
				ids = append(ids, t.Timer)
			}
			return ids
		},
		Actions: []string{
			"SendPaymentLink", "RevokePaymentLink", "SendReceipt", "SendExpiryNotice",
			"OpenWarehouseOrder", "CloseWarehouseOrder", "SendTrackingLink", "Refund",
		},
		ActionName: func(a order.Action) string { return a.Kind().String() },
		State:      func(m *order.Machine) any { return m.State() },
		Terminal: func(m *order.Machine) bool {
			switch m.Kind() {
			case order.StateDelivered, order.StateCancelled, order.StateExpired:
				return true
			}
			return false
		},
		Perform: Perform,
	}
}

// recorder is the generated Recorder as fsmtemporal records a step with it.
type recorder struct{ order.Recorder }

func (r *recorder) Begin(now time.Time) {
	r.Now = now
	r.Recorder.Actions = r.Recorder.Actions[:0]
}

func (r *recorder) Actions() []order.Action { return r.Recorder.Actions }

// Perform performs action a with x's method for it.
func Perform(ctx context.Context, x Activities, a order.Action) error {
	switch a := a.(type) {
	case *order.SendPaymentLink:
		return x.SendPaymentLink(ctx, a.Total)
	case *order.RevokePaymentLink:
		return x.RevokePaymentLink(ctx)
	case *order.SendReceipt:
		return x.SendReceipt(ctx, a.Total)
	case *order.SendExpiryNotice:
		return x.SendExpiryNotice(ctx)
	case *order.OpenWarehouseOrder:
		return x.OpenWarehouseOrder(ctx)
	case *order.CloseWarehouseOrder:
		return x.CloseWarehouseOrder(ctx)
	case *order.SendTrackingLink:
		return x.SendTrackingLink(ctx, a.Tracking)
	case *order.Refund:
		return x.Refund(ctx, a.Total)
	}
	return fmt.Errorf("orderflow: action %T is not performed by an activity", a)
}
