package jobs

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/crons"
	"github.com/fsmgen/fsmgen/gen/job"
	"github.com/fsmgen/fsmgen/jobs"
	"github.com/fsmgen/fsmgen/server/store/memory"
)

// clock is a fake clock the tests move.
type clock struct{ t atomic.Pointer[time.Time] }

func newClock(t time.Time) *clock { c := &clock{}; c.set(t); return c }
func (c *clock) now() time.Time   { return *c.t.Load() }
func (c *clock) set(t time.Time)  { c.t.Store(&t) }

var t0 = time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)

// goJob is an hourly Go job with 2 retries, 5 s doubling to 8 s, whose
// runs fail while fail is set.
func goJob(fail *atomic.Bool) *jobs.Job {
	return &jobs.Job{ID: "sweep", Name: "Sweep", Enabled: true,
		Settings: jobs.Settings{Schedule: crons.Schedule{Type: "cron", Expression: "0 * * * *"}, Timezone: "UTC", Timeout: time.Minute, Retries: 2, BackoffBase: 5 * time.Second, BackoffCap: 8 * time.Second},
		Func: func(ctx context.Context) (string, error) {
			if fail.Load() {
				return "partial", errors.New("the disk is full")
			}
			return "swept", nil
		},
	}
}

// settle waits for the run in progress to end and records its end at the
// clock's time.
func settle(t *testing.T, e *Engine, c *clock, took time.Duration) {
	t.Helper()
	select {
	case res := <-e.results:
		c.set(c.now().Add(took))
		e.finished(context.Background(), res)
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the run does not end")
	}
}

// TestEngineRetries drives the engine with a fake clock: a scheduled run
// at its time, two retries at their backoffs (from the failure), then the
// next scheduled run; the runs' history, the health, and one alert.
func TestEngineRetries(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	c := newClock(t0.Add(10 * time.Minute))
	var fail atomic.Bool
	fail.Store(true)
	e, err := New(ctx, Config{Store: st, Jobs: []*jobs.Job{goJob(&fail)}, AlertWebhook: "http://example.com/hook", Now: c.now})
	require.NoError(t, err)
	v := e.List()[0]
	require.NotNil(t, v.NextRunAt)
	assert.Equal(t, t0.Add(time.Hour), *v.NextRunAt)

	e.fireDue(ctx, t0.Add(59*time.Minute))
	assert.Equal(t, StatusScheduled, e.List()[0].Status, "not yet")

	// The clock jumps past the run's time: it starts now, once.
	c.set(t0.Add(time.Hour + 30*time.Second))
	e.fireDue(ctx, c.now())
	require.Equal(t, StatusRunning, e.List()[0].Status)
	settle(t, e, c, 2*time.Second) // fails at +32 s
	v = e.List()[0]
	assert.Equal(t, StatusWaitingToRetry, v.Status)
	assert.Equal(t, t0.Add(time.Hour+37*time.Second), *v.NextRunAt, "the first retry 5 s after the failure")
	assert.Equal(t, 1, v.ConsecutiveFailures)
	assert.Equal(t, jobs.HealthDegraded, v.Health)

	c.set(t0.Add(time.Hour + 40*time.Second)) // late: the retry starts now
	e.fireDue(ctx, c.now())
	settle(t, e, c, 0)
	v = e.List()[0]
	assert.Equal(t, t0.Add(time.Hour+48*time.Second), *v.NextRunAt, "10 s capped at 8 s, from the failure")
	e.fireDue(ctx, c.now().Add(8*time.Second))
	c.set(c.now().Add(8 * time.Second))
	settle(t, e, c, time.Second)
	v = e.List()[0]
	assert.Equal(t, StatusScheduled, v.Status, "retries spent")
	assert.Equal(t, t0.Add(2*time.Hour), *v.NextRunAt, "the next run after the last failure")
	assert.Equal(t, 3, v.ConsecutiveFailures)
	assert.Equal(t, jobs.HealthUnhealthy, v.Health)

	runs, err := st.Runs(ctx, "sweep", 10)
	require.NoError(t, err)
	require.Len(t, runs, 3)
	type row struct {
		attempt   int
		trigger   string
		started   time.Time
		status    string
		output    string
		errorText string
	}
	var got []row
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		got = append(got, row{r.Attempt, r.TriggeredBy, r.StartedAt, r.Status, r.Output, r.Error})
	}
	assert.Equal(t, []row{
		{0, "schedule", t0.Add(time.Hour + 30*time.Second), "failed", "partial", "the disk is full"},
		{1, "retry", t0.Add(time.Hour + 40*time.Second), "failed", "partial", "the disk is full"},
		{2, "retry", t0.Add(time.Hour + 48*time.Second), "failed", "partial", "the disk is full"},
	}, got)

	alerts, err := st.PendingAlerts(ctx, c.now(), 10)
	require.NoError(t, err)
	require.Len(t, alerts, 1)
	assert.JSONEq(t, `{"event": "job_failing", "job": "sweep", "name": "Sweep", "consecutive_failures": 3, "at": "2026-11-26T04:00:49Z"}`, string(alerts[0].Payload))

	// A manual run that succeeds makes the job healthy.
	fail.Store(false)
	run, err := e.triggerNow(ctx)
	require.NoError(t, err)
	assert.Equal(t, "manual", run.TriggeredBy)
	settle(t, e, c, 0)
	v = e.List()[0]
	assert.Equal(t, jobs.HealthHealthy, v.Health)
	assert.Equal(t, "swept", v.LastRun.Output)
}

// triggerNow applies a manual run of the only job, as Run would.
func (e *Engine) triggerNow(ctx context.Context) (*RunView, error) {
	j := e.list[0]
	now := e.now()
	if err := e.apply(ctx, j, now, nil, func() error { return j.machine.HandleEvent(&job.Trigger{Now: now}) }); err != nil {
		return nil, err
	}
	return newRunView(j.last), nil
}

// TestEngineRestart checks what a restart does: a run left running is
// failed "interrupted by a restart" and retried; a scheduled run missed
// while the server was down runs once, at its time.
func TestEngineRestart(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	c := newClock(t0.Add(10 * time.Minute))
	var fail atomic.Bool
	e, err := New(ctx, Config{Store: st, Jobs: []*jobs.Job{goJob(&fail)}, Now: c.now})
	require.NoError(t, err)
	c.set(t0.Add(time.Hour))
	e.fireDue(ctx, c.now())
	require.Equal(t, StatusRunning, e.List()[0].Status)
	<-e.results // the run ends, but the server is killed before it records it

	c.set(t0.Add(3*time.Hour + 30*time.Minute))
	e, err = New(ctx, Config{Store: st, Jobs: []*jobs.Job{goJob(&fail)}, Now: c.now})
	require.NoError(t, err)
	v := e.List()[0]
	assert.Equal(t, StatusWaitingToRetry, v.Status)
	assert.Equal(t, 1, v.ConsecutiveFailures)
	assert.Equal(t, c.now().Add(5*time.Second), *v.NextRunAt)
	runs, err := st.Runs(ctx, "sweep", 10)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, jobs.RunFailed, runs[0].Status)
	assert.Equal(t, ErrInterrupted, runs[0].Error)
	assert.Equal(t, 150*time.Minute, *runs[0].Duration)

	c.set(c.now().Add(5 * time.Second))
	e.fireDue(ctx, c.now())
	settle(t, e, c, 0)
	v = e.List()[0]
	assert.Equal(t, jobs.HealthHealthy, v.Health)
	assert.Equal(t, t0.Add(4*time.Hour), *v.NextRunAt)

	// Down for three hours: the run missed runs once, when the server is
	// back, with its whole timeout.
	c.set(t0.Add(7 * time.Hour))
	e, err = New(ctx, Config{Store: st, Jobs: []*jobs.Job{goJob(&fail)}, Now: c.now})
	require.NoError(t, err)
	e.fireDue(ctx, c.now())
	settle(t, e, c, 0)
	e.fireDue(ctx, c.now())
	runs, err = st.Runs(ctx, "sweep", 10)
	require.NoError(t, err)
	require.Len(t, runs, 3)
	assert.Equal(t, t0.Add(7*time.Hour), runs[0].StartedAt)
	assert.Equal(t, jobs.RunSucceeded, runs[0].Status)
	assert.Equal(t, t0.Add(8*time.Hour), *e.List()[0].NextRunAt)
}

// TestEngineConfigChanges checks that a job's new settings and its
// disabling, from the configuration, reach its saved machine.
func TestEngineConfigChanges(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	c := newClock(t0)
	var fail atomic.Bool
	def := goJob(&fail)
	_, err := New(ctx, Config{Store: st, Jobs: []*jobs.Job{def}, Now: c.now})
	require.NoError(t, err)

	def.Settings.Schedule = crons.Schedule{Type: "interval", Seconds: 60}
	def.Enabled = false
	e, err := New(ctx, Config{Store: st, Jobs: []*jobs.Job{def}, Now: c.now})
	require.NoError(t, err)
	v := e.List()[0]
	assert.Equal(t, StatusDisabled, v.Status)
	assert.Equal(t, jobs.HealthDegraded, v.Health)
	assert.Equal(t, def.Settings.Schedule, v.Schedule)
	assert.Nil(t, v.NextRunAt)

	def.Enabled = true
	e, err = New(ctx, Config{Store: st, Jobs: []*jobs.Job{def}, Now: c.now})
	require.NoError(t, err)
	v = e.List()[0]
	assert.Equal(t, StatusScheduled, v.Status)
	assert.Equal(t, t0.Add(time.Minute), *v.NextRunAt)
	rows, err := st.Jobs(ctx)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, jobs.HealthHealthy, rows[0].Health)
}
