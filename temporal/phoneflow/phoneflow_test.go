package phoneflow_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/fsmgen/fsmgen/examples/phonecall"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
	"github.com/fsmgen/fsmgen/temporal/phoneflow"
)

// phone performs the call's actions as activities, recording their names
// and values in order.
type phone struct {
	mu   sync.Mutex
	done []phonecall.Action
}

func (p *phone) add(a phonecall.Action) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = append(p.done, a)
	return nil
}

func (p *phone) Dial(_ context.Context, callee string) error {
	return p.add(&phonecall.Dial{Callee: callee})
}
func (p *phone) StartRingingTone(context.Context) error { return p.add(&phonecall.StartRingingTone{}) }
func (p *phone) StopRingingTone(context.Context) error  { return p.add(&phonecall.StopRingingTone{}) }
func (p *phone) StartCallTimer(context.Context) error   { return p.add(&phonecall.StartCallTimer{}) }
func (p *phone) StopCallTimer(context.Context) error    { return p.add(&phonecall.StopCallTimer{}) }
func (p *phone) Mute(context.Context) error             { return p.add(&phonecall.Mute{}) }
func (p *phone) Unmute(context.Context) error           { return p.add(&phonecall.Unmute{}) }
func (p *phone) ChangeVolume(_ context.Context, volume int) error {
	return p.add(&phonecall.ChangeVolume{Volume: volume})
}
func (p *phone) PlayHoldMusic(context.Context) error   { return p.add(&phonecall.PlayHoldMusic{}) }
func (p *phone) StopHoldMusic(context.Context) error   { return p.add(&phonecall.StopHoldMusic{}) }
func (p *phone) ReportDestroyed(context.Context) error { return p.add(&phonecall.ReportDestroyed{}) }
func (p *phone) RouteToSpeaker(context.Context) error  { return p.add(&phonecall.RouteToSpeaker{}) }
func (p *phone) RouteToHandset(context.Context) error  { return p.add(&phonecall.RouteToHandset{}) }

var _ phoneflow.Activities = (*phone)(nil)

// TestCallWithHistory runs a call on the SDK's test environment: put on
// hold from the speakerphone, it resumes there (Talking's history, kept in
// the workflow's machine), and hurled against the wall it ends the
// workflow. The activities run the actions the generated machine hands
// out for the same events, in order; the Def has no timers.
func TestCallWithHistory(t *testing.T) {
	t.Parallel()
	events := []phonecall.Event{
		&phonecall.CallDialed{Callee: "temporal"}, &phonecall.CallConnected{}, &phonecall.SpeakerOn{},
		&phonecall.PlacedOnHold{}, &phonecall.TakenOffHold{}, &phonecall.PlacedOnHold{},
		&phonecall.PhoneHurledAgainstWall{},
	}
	def := phoneflow.Def()
	require.NoError(t, def.Check())
	assert.Nil(t, def.Timers, "a machine without timers has none")

	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	// A workflow task may pause for more than the SDK's second on two busy
	// cores without blocking; workflowcheck checks that nothing blocks.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	p := &phone{}
	fsmtemporal.RegisterWorkflow(env, def, fsmtemporal.Options[phonecall.Event, phonecall.Action]{})
	fsmtemporal.RegisterActivities(env, def, phoneflow.Activities(p))
	for i, ev := range events {
		env.RegisterDelayedCallback(func() {
			data, err := json.Marshal(ev)
			require.NoError(t, err)
			env.SignalWorkflow(fsmtemporal.EventSignal, json.RawMessage(data))
		}, time.Duration(i+1)*time.Minute)
	}
	// Between TakenOffHold (the fifth event) and the next.
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(fsmtemporal.StateQuery)
		require.NoError(t, err)
		var raw json.RawMessage
		require.NoError(t, v.Get(&raw))
		st, err := phonecall.UnmarshalState(raw)
		require.NoError(t, err)
		assert.Equal(t, phonecall.Speakerphone{}, st, "taken off hold, the call is back on the speakerphone")
	}, 5*time.Minute+30*time.Second)
	env.ExecuteWorkflow(phoneflow.Name, fsmtemporal.Input{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	rec := &phonecall.Recorder{}
	m, err := phonecall.New(phonecall.Config{Handler: rec})
	require.NoError(t, err)
	for _, ev := range events {
		require.NoError(t, m.HandleEvent(ev))
	}
	assert.Equal(t, rec.Actions, p.done)
	assert.Equal(t, phonecall.PhoneDestroyed{}, m.State())
}
