package realserver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/fsmgen/fsmgen/examples/order"
	"github.com/fsmgen/fsmgen/runtime/loop"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
	"github.com/fsmgen/fsmgen/temporal/orderflow"
)

// The benchmarks measure one machine event, end to end, on the real server
// in the test's process (one worker, the client in the same process), and
// the same event on runtime/loop: what moving a machine to Temporal costs
// per event. docs/performance.md has the figures.

// benchOrder starts a server, a worker and an order workflow, and returns
// the client and the workflow's id.
func benchOrder(b *testing.B) (client.Client, string) {
	b.Helper()
	ts := newServer(b)
	c := ts.GetDefaultClient()
	w := startWorker(b, c, &shop{}, window)
	b.Cleanup(w.Stop)
	id := "order-bench"
	_, err := fsmtemporal.Start(context.Background(), c, client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue}, orderflow.Name, nil)
	require.NoError(b, err)
	return c, id
}

// BenchmarkSignal: an event sent as a signal, and its step, which performs
// no action, taken: known by a query, which writes no history and which the
// server answers only once the workflow task the signal caused has
// completed (so one query a signal, queries/op, as a rule).
func BenchmarkSignal(b *testing.B) {
	c, id := benchOrder(b)
	ctx := context.Background()
	queries := 0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		require.NoError(b, fsmtemporal.Signal(ctx, c, id, &order.AddItem{Price: 1}))
		want := fmt.Sprintf(`{"kind":"cart","total":%d}`, i+1)
		for {
			queries++
			st, err := fsmtemporal.State(ctx, c, id)
			require.NoError(b, err)
			if string(st) == want {
				break
			}
		}
	}
	b.ReportMetric(float64(queries)/float64(b.N), "queries/op")
}

// BenchmarkQuery: the query alone, on a workflow with nothing to do.
func BenchmarkQuery(b *testing.B) {
	c, id := benchOrder(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, err := fsmtemporal.State(ctx, c, id)
		require.NoError(b, err)
	}
}

// BenchmarkUpdate: an event sent as an update, which answers once its
// step, performing no action, is taken.
func BenchmarkUpdate(b *testing.B) {
	c, id := benchOrder(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, err := fsmtemporal.Send(ctx, c, id, &order.AddItem{Price: 1})
		require.NoError(b, err)
	}
}

// BenchmarkUpdateActivity: an update whose step performs one action as an
// activity before it answers: Dispatched, which sends the tracking link,
// on an order moved back and forth between Packing and Shipped would need
// rules the order lacks, so each round places a new order: AddItem and
// BeginCheckout untimed, PlaceOrder (SendPaymentLink and the deadline's
// timer) timed, Cancel (RevokePaymentLink) untimed.
func BenchmarkUpdateActivity(b *testing.B) {
	ts := newServer(b)
	c := ts.GetDefaultClient()
	w := startWorker(b, c, &shop{}, window)
	b.Cleanup(w.Stop)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		id := fmt.Sprintf("order-%d", i)
		_, err := fsmtemporal.Start(ctx, c, client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue}, orderflow.Name, nil)
		require.NoError(b, err)
		_, err = fsmtemporal.Send(ctx, c, id, &order.AddItem{Price: 1})
		require.NoError(b, err)
		_, err = fsmtemporal.Send(ctx, c, id, &order.BeginCheckout{})
		require.NoError(b, err)
		b.StartTimer()
		_, err = fsmtemporal.Send(ctx, c, id, &order.PlaceOrder{})
		require.NoError(b, err)
		b.StopTimer()
		require.NoError(b, fsmtemporal.Signal(ctx, c, id, &order.Cancel{}))
		b.StartTimer()
	}
}

// loopExec is the order's executor on runtime/loop: it performs a step's
// actions with the shop, inline, and reports the step done.
type loopExec struct {
	rec  *order.Recorder
	shop *shop
	done chan struct{}
}

func (x *loopExec) Execute(ctx context.Context, _ *loop.Loop[order.Event], _ loop.Step[order.Event]) error {
	for _, a := range x.rec.Actions {
		if err := orderflow.Perform(ctx, x.shop, a); err != nil {
			return err
		}
	}
	x.rec.Actions = x.rec.Actions[:0]
	x.done <- struct{}{}
	return nil
}

// BenchmarkLoop: the same event on runtime/loop, sent from another
// goroutine, which waits for its step: the round trip of BenchmarkUpdate
// in one process, with nothing durable.
func BenchmarkLoop(b *testing.B) {
	rec := &order.Recorder{}
	m, err := order.New(order.Config{Behavior: order.Shop{}, Handler: rec})
	require.NoError(b, err)
	x := &loopExec{rec: rec, shop: &shop{}, done: make(chan struct{})}
	l := loop.New[order.Event](m, x, loop.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- l.Run(ctx) }()
	defer func() {
		cancel()
		<-stopped
	}()
	b.ReportAllocs()
	for b.Loop() {
		require.NoError(b, l.Send(ctx, &order.AddItem{Price: 1}))
		<-x.done
	}
}
