package realserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"

	"github.com/fsmgen/fsmgen/examples/order"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
	"github.com/fsmgen/fsmgen/temporal/orderflow"
)

// quiet is the logger of the server's clients and workers: the tests read
// what they check from the history, not the log.
var quiet = log.NewStructuredLogger(slog.New(slog.DiscardHandler))

// newServer starts a Temporal server in the test's process, on loopback,
// stopped when the test or benchmark ends.
func newServer(tb testing.TB) *temporaltest.TestServer {
	tb.Helper()
	opts := []temporaltest.TestServerOption{temporaltest.WithBaseClientOptions(client.Options{Logger: quiet})}
	t, ok := tb.(*testing.T)
	if ok {
		opts = append(opts, temporaltest.WithT(t)) // stops it, and fails t on its errors
	}
	ts := temporaltest.NewServer(opts...)
	if !ok {
		tb.Cleanup(ts.Stop)
	}
	return ts
}

// shop is the order's Activities: it records the actions performed, in
// order, across workers.
type shop struct {
	mu   sync.Mutex
	done []string
}

func (s *shop) do(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = append(s.done, name)
	return nil
}

func (s *shop) performed() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.done...)
}

func (s *shop) SendPaymentLink(_ context.Context, total order.Cents) error {
	return s.do(fmt.Sprintf("SendPaymentLink(%d)", total))
}
func (s *shop) RevokePaymentLink(context.Context) error { return s.do("RevokePaymentLink") }
func (s *shop) SendReceipt(_ context.Context, total order.Cents) error {
	return s.do(fmt.Sprintf("SendReceipt(%d)", total))
}
func (s *shop) SendExpiryNotice(context.Context) error    { return s.do("SendExpiryNotice") }
func (s *shop) OpenWarehouseOrder(context.Context) error  { return s.do("OpenWarehouseOrder") }
func (s *shop) CloseWarehouseOrder(context.Context) error { return s.do("CloseWarehouseOrder") }
func (s *shop) SendTrackingLink(_ context.Context, tracking string) error {
	return s.do("SendTrackingLink(" + tracking + ")")
}
func (s *shop) Refund(_ context.Context, total order.Cents) error {
	return s.do(fmt.Sprintf("Refund(%d)", total))
}

const taskQueue = "orders"

// startWorker starts a worker of the order workflow and its activities,
// the order's payment window being window; the caller stops it.
func startWorker(t testing.TB, c client.Client, s *shop, window time.Duration) worker.Worker {
	t.Helper()
	w := worker.New(c, taskQueue, worker.Options{WorkflowPanicPolicy: worker.FailWorkflow})
	def := orderflow.Def(order.Shop{Window: window})
	fsmtemporal.RegisterWorkflow(w, def, fsmtemporal.Options[order.Event, order.Action]{})
	fsmtemporal.RegisterActivities(w, def, orderflow.Activities(s))
	require.NoError(t, w.Start())
	return w
}

// history returns the workflow's history, as the server holds it now.
func history(t testing.TB, c client.Client, id string) *historypb.History {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, ev)
	}
	return h
}

// waitFor waits, by long polls of the history, until the workflow's
// history holds an event of type typ, and returns it.
func waitFor(t testing.TB, c client.Client, id string, typ enumspb.EventType) *historypb.HistoryEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, id, "", true, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err, "waiting for %s", typ)
		if ev.GetEventType() == typ {
			return ev
		}
	}
	t.Fatalf("the history of %s ended without %s", id, typ)
	return nil
}

// types lists the types of events, in order, without the prefix
// EVENT_TYPE_.
func types(events []*historypb.HistoryEvent) []string {
	out := make([]string, len(events))
	for i, ev := range events {
		out[i] = ev.GetEventType().String()
	}
	return out
}

// send sends ev as an update and returns the state it answers with.
func send(t testing.TB, c client.Client, id string, ev order.Event) order.State {
	t.Helper()
	data, err := fsmtemporal.Send(context.Background(), c, id, ev)
	require.NoError(t, err)
	st, err := order.UnmarshalState(data)
	require.NoError(t, err)
	return st
}

// result waits for the workflow's end and returns the machine it ended
// with.
func result(t testing.TB, run client.WorkflowRun) *order.Machine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var saved json.RawMessage
	require.NoError(t, run.Get(ctx, &saved))
	m, err := order.Load(order.Config{Behavior: order.Shop{}, Handler: &order.Recorder{}}, saved)
	require.NoError(t, err)
	return m
}
