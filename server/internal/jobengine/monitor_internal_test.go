package jobengine

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/store/memory"
	"github.com/fsmgen/fsmgen/server/internal/webhook"
	"github.com/fsmgen/fsmgen/server/jobs"
)

// noNetwork keeps the monitors engine's alerts in the store: no DNS
// server is asked, nothing is dialled.
var noNetwork = (&webhook.Guard{}).WithHooks(
	&net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS in tests")
	}},
	func(string, netip.AddrPort) error { return errors.New("no network in tests") })

// healthAlerts returns the monitors' health alerts stored since the last
// call, as "from>to", and marks every alert delivered (the store hands out
// one alert of a URL at a time, in order).
func healthAlerts(t *testing.T, st store.Store, now time.Time) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for {
		alerts, err := st.PendingAlerts(ctx, now.Add(24*time.Hour), 100)
		require.NoError(t, err)
		if len(alerts) == 0 {
			return out
		}
		for _, a := range alerts {
			var m monitorengine.Alert
			require.NoError(t, json.Unmarshal(a.Payload, &m))
			if m.Event == "health_changed" {
				out = append(out, m.From+">"+m.To)
			}
			require.NoError(t, st.AlertDelivered(ctx, a.ID, now))
		}
	}
}

// The job's monitor counts what the job counts: a failed attempt whose
// retry succeeds leaves it healthy, with no alert; it is failing from the
// job's third failure in a row (when the job becomes unhealthy and alerts
// job_failing), healthy after the next good run. Its maximum runtime
// leaves the job's own timeout room to close the run first.
func TestJobMonitorFollowsTheJobsThreshold(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	c := newClock(t0.Add(10 * time.Minute))
	mon, err := monitorengine.New(ctx, monitorengine.Config{Store: st, Now: c.now, AlertWebhook: "https://hooks.example.com/x", Webhooks: noNetwork})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- mon.Run(runCtx) }()
	defer func() {
		stop()
		assert.NoError(t, <-stopped)
	}()
	var fail atomic.Bool
	e, err := New(ctx, Config{Store: st, Monitors: mon, Jobs: []*jobs.Job{goJob(&fail)}, AlertWebhook: "https://hooks.example.com/x", Now: c.now})
	require.NoError(t, err)
	e.syncMonitors(ctx)
	health := func() string {
		v, err := mon.Get(ctx, "job-sweep")
		require.NoError(t, err)
		return v.Health
	}
	v, err := mon.Get(ctx, "job-sweep")
	require.NoError(t, err)
	assert.Equal(t, jobs.UnhealthyAfter, v.FailureThreshold)
	assert.Equal(t, 1, v.RecoveryThreshold)
	assert.Equal(t, 120, v.MaxRuntimeSeconds, "the timeout (1m) and a minute")

	// A first try fails, its retry succeeds.
	fail.Store(true)
	c.set(t0.Add(time.Hour))
	tick(e)
	settle(t, e, c, time.Second)
	assert.Equal(t, monitorengine.HealthHealthy, health(), "one failure of three")
	fail.Store(false)
	c.set(c.now().Add(5 * time.Second))
	tick(e)
	settle(t, e, c, time.Second)
	assert.Equal(t, monitorengine.HealthHealthy, health())
	assert.Empty(t, healthAlerts(t, st, c.now()), "the job recovered on its own: no alert")

	// Three failures in a row: the next run and its two retries.
	fail.Store(true)
	c.set(t0.Add(2 * time.Hour))
	tick(e)
	settle(t, e, c, time.Second)
	for i, wait := range []time.Duration{5 * time.Second, 8 * time.Second} {
		assert.Equal(t, monitorengine.HealthHealthy, health(), "after failure %d", i+1)
		c.set(c.now().Add(wait))
		tick(e)
		settle(t, e, c, time.Second)
	}
	assert.Equal(t, jobs.HealthUnhealthy, e.List()[0].Health)
	assert.Equal(t, monitorengine.HealthFailing, health(), "failing with the job")
	assert.Equal(t, []string{"healthy>failing"}, healthAlerts(t, st, c.now()))
	v, err = mon.Get(ctx, "job-sweep")
	require.NoError(t, err)
	assert.Equal(t, e.List()[0].ConsecutiveFailures, v.ConsecutiveFailures, "the same count")

	// A good run: healthy again, both.
	fail.Store(false)
	trigger(t, e, "sweep")
	settle(t, e, c, time.Second)
	assert.Equal(t, jobs.HealthHealthy, e.List()[0].Health)
	assert.Equal(t, monitorengine.HealthHealthy, health())
	assert.Equal(t, []string{"failing>healthy"}, healthAlerts(t, st, c.now()))
}

// A job's monitor cannot be deleted or renamed while the job is
// configured (the job would check in to nothing until the next start
// made it again); it can be paused. A job-… monitor of no job can go.
func TestJobMonitorKept(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	mon, err := monitorengine.New(ctx, monitorengine.Config{Store: st})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- mon.Run(runCtx) }()
	defer func() {
		stop()
		assert.NoError(t, <-stopped)
	}()
	var fail atomic.Bool
	e, err := New(ctx, Config{Store: st, Monitors: mon, Jobs: []*jobs.Job{goJob(&fail)}})
	require.NoError(t, err)
	e.syncMonitors(ctx)

	err = mon.Delete(ctx, "job-sweep")
	if e := monitorengine.AsError(err); assert.NotNil(t, e) {
		assert.Equal(t, 409, e.Status)
		assert.Equal(t, "job_monitor", e.Code)
		assert.Contains(t, e.Message, `monitor "job-sweep" is job sweep's`)
		assert.Contains(t, e.Message, "jobs file")
	}
	renamed := "sweep-monitor"
	_, err = mon.Patch(ctx, "job-sweep", &monitorengine.Input{Slug: &renamed})
	assert.Equal(t, "job_monitor", monitorengine.AsError(err).Code)
	_, err = mon.Get(ctx, "job-sweep")
	require.NoError(t, err, "still there")

	paused := monitorengine.StatusPaused
	v, err := mon.Patch(ctx, "job-sweep", &monitorengine.Input{Status: &paused})
	require.NoError(t, err)
	assert.Equal(t, monitorengine.StatusPaused, v.Status)

	other := "job-gone"
	_, err = mon.Create(ctx, &monitorengine.Input{Slug: &other, Schedule: &monitorengine.Schedule{Type: "interval", Seconds: 60}})
	require.NoError(t, err)
	require.NoError(t, mon.Delete(ctx, "job-gone"), "no job checks in to it")
}
