package orderflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/fsmgen/fsmgen/examples/order"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
	"github.com/fsmgen/fsmgen/temporal/orderflow"
)

// shop is the order's Activities for the tests: it records every action
// performed, as the generated Recorder would name it, and fails the
// actions in fail.
type shop struct {
	mu    sync.Mutex
	done  []string
	tries map[string]int
	fail  map[string]bool
}

var _ orderflow.Activities = (*shop)(nil)

func (s *shop) do(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tries == nil {
		s.tries = map[string]int{}
	}
	s.tries[name]++
	if s.fail[name] {
		return fmt.Errorf("%s: the provider is down", name)
	}
	s.done = append(s.done, name)
	return nil
}

// performed returns the actions performed so far.
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

// expected returns the actions the generated machine hands its Handler for
// events, timers aside, named as shop names them: what the workflow must
// perform for the same events.
func expected(t *testing.T, events ...order.Event) []string {
	t.Helper()
	rec := &order.Recorder{}
	m, err := order.New(order.Config{Behavior: order.Shop{}, Handler: rec})
	require.NoError(t, err)
	for _, ev := range events {
		if err := m.HandleEvent(ev); err != nil {
			require.ErrorContains(t, err, "rejected")
		}
	}
	var out []string
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *order.StartTimer, *order.CancelTimer:
		case *order.SendPaymentLink:
			out = append(out, fmt.Sprintf("SendPaymentLink(%d)", a.Total))
		case *order.SendReceipt:
			out = append(out, fmt.Sprintf("SendReceipt(%d)", a.Total))
		case *order.Refund:
			out = append(out, fmt.Sprintf("Refund(%d)", a.Total))
		case *order.SendTrackingLink:
			out = append(out, "SendTrackingLink("+a.Tracking+")")
		default:
			out = append(out, a.Kind().String())
		}
	}
	return out
}

// quiet is the SDK's logger in the tests: they check what the workflow
// does, not what it logs.
var quiet = log.NewStructuredLogger(slog.New(slog.DiscardHandler))

// newEnv returns a test environment running the order workflow with opts
// and its activities with s.
func newEnv(t *testing.T, s *shop, opts fsmtemporal.Options[order.Event, order.Action]) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(quiet)
	env := suite.NewTestWorkflowEnvironment()
	// A workflow task may pause for more than the SDK's second on two busy
	// cores without blocking; workflowcheck checks that nothing blocks.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	def := orderflow.Def(order.Shop{})
	fsmtemporal.RegisterWorkflow(env, def, opts)
	fsmtemporal.RegisterActivities(env, def, orderflow.Activities(s))
	return env
}

// raw encodes an event as a signal or update carries it.
func raw(t *testing.T, ev order.Event) json.RawMessage {
	t.Helper()
	data, err := json.Marshal(ev)
	require.NoError(t, err)
	return data
}

// stateOf decodes the state JSON the query or an update answers with.
func stateOf(t *testing.T, data []byte) order.State {
	t.Helper()
	st, err := order.UnmarshalState(data)
	require.NoError(t, err)
	return st
}

// query returns the order's state, as the workflow's query answers it.
func query(t *testing.T, env *testsuite.TestWorkflowEnvironment) order.State {
	t.Helper()
	v, err := env.QueryWorkflow(fsmtemporal.StateQuery)
	require.NoError(t, err)
	var data json.RawMessage
	require.NoError(t, v.Get(&data))
	return stateOf(t, data)
}

// result returns the machine the workflow completed with, loaded.
func result(t *testing.T, env *testsuite.TestWorkflowEnvironment) *order.Machine {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var saved json.RawMessage
	require.NoError(t, env.GetWorkflowResult(&saved))
	m, err := order.Load(order.Config{Behavior: order.Shop{}, Handler: &order.Recorder{}}, saved)
	require.NoError(t, err)
	return m
}
