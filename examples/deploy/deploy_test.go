package deploy_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/examples/deploy"
)

// policy is the deploy's behaviour in the tests: two attempts, a second
// between them.
var policy = deploy.Policy{Attempts: 2, Backoff: time.Second}

// TestDeploy drives a deploy through each way it can end, and checks the
// actions it hands out, in order, and the state it ends in.
func TestDeploy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		events  []deploy.Event
		actions []deploy.Action
		state   deploy.State
	}{
		{
			name:    "healthy at the first attempt",
			events:  []deploy.Event{&deploy.Start{Host: "web1"}, &deploy.Healthy{}},
			actions: []deploy.Action{&deploy.Install{Host: "web1"}, &deploy.Finish{Host: "web1", Reason: "deployed", Live: true}},
			state:   deploy.Done{Host: "web1", Reason: "deployed", Live: true},
		},
		{
			// Failed and Lost take one row; the report names the
			// deploy's host, not the one the event names, and comes
			// before what the choice decides.
			name: "a failure retried, then a lost host given up",
			events: []deploy.Event{
				&deploy.Start{Host: "web1"},
				&deploy.Failed{Host: "agent7"},
				&deploy.TimerFired{Timer: 1},
				&deploy.Lost{Host: "agent7"},
			},
			actions: []deploy.Action{
				&deploy.Install{Host: "web1"},
				&deploy.Report{Host: "web1", Attempt: 1},
				&deploy.StartTimer{Timer: 1, Delay: time.Second},
				&deploy.Install{Host: "web1"},
				&deploy.Report{Host: "web1", Attempt: 2},
				&deploy.Finish{Host: "web1", Reason: "gave up", Live: false},
			},
			state: deploy.Done{Host: "web1", Reason: "gave up", Live: false},
		},
		{
			// The move takes the event's host, and starts the
			// attempts again.
			name: "moved to another host while waiting",
			events: []deploy.Event{
				&deploy.Start{Host: "web1"},
				&deploy.Lost{Host: "web1"},
				&deploy.Moved{Host: "web2"},
			},
			actions: []deploy.Action{
				&deploy.Install{Host: "web1"},
				&deploy.Report{Host: "web1", Attempt: 1},
				&deploy.StartTimer{Timer: 1, Delay: time.Second},
				&deploy.CancelTimer{Timer: 1},
				&deploy.Install{Host: "web2"},
			},
			state: deploy.Installing{Host: "web2", Attempt: 1},
		},
		{
			name:    "cancelled",
			events:  []deploy.Event{&deploy.Start{Host: "web1"}, &deploy.Cancel{}},
			actions: []deploy.Action{&deploy.Install{Host: "web1"}, &deploy.Finish{Host: "web1", Reason: "cancelled", Live: false}},
			state:   deploy.Done{Host: "web1", Reason: "cancelled", Live: false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &deploy.Recorder{}
			m, err := deploy.New(deploy.Config{Behavior: policy, Handler: rec})
			require.NoError(t, err)
			for i, ev := range tt.events {
				require.NoError(t, m.HandleEvent(ev), "event %d (%s)", i, ev.Kind())
			}
			assert.Equal(t, tt.actions, rec.Actions)
			assert.Equal(t, tt.state, m.State())
		})
	}
}

// TestPolicy checks the backoff doubles and the attempts run out.
func TestPolicy(t *testing.T) {
	t.Parallel()
	p := deploy.Policy{Attempts: 3, Backoff: time.Second}
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
		[]time.Duration{p.RetryDelay(1), p.RetryDelay(2), p.RetryDelay(3)})
	assert.Equal(t, []bool{true, true, false}, []bool{p.CanRetry(1), p.CanRetry(2), p.CanRetry(3)})
	assert.Equal(t, 2, p.NextAttempt(1))
}
