package jobengine

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/store/memory"
	"github.com/fsmgen/fsmgen/server/jobs"
	"github.com/fsmgen/fsmgen/server/monitors"
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
		Settings: jobs.Settings{Schedule: monitors.Schedule{Type: "cron", Expression: "0 * * * *"}, Timezone: "UTC", Timeout: time.Minute, Retries: 2, BackoffBase: 5 * time.Second, BackoffCap: 8 * time.Second},
		Func: func(ctx context.Context) (string, error) {
			if fail.Load() {
				return "partial", errors.New("the disk is full")
			}
			return "swept", nil
		},
	}
}

// settle waits for the run in progress to end and records its end at the
// clock's time, in a round.
func settle(t *testing.T, e *Engine, c *clock, took time.Duration) {
	t.Helper()
	select {
	case res := <-e.results:
		c.set(c.now().Add(took))
		e.round(context.Background(), nil, []*result{res})
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the run does not end")
	}
}

// tick runs a round at the clock's time: the timers due fire, and the
// queued runs that may start start.
func tick(e *Engine) { e.round(context.Background(), nil, nil) }

// call applies requests in one round, as Run does with those that arrive
// together, and returns their answers.
func call(e *Engine, applies ...func(rs *roundState) (func() any, error)) []reply {
	reqs := make([]*request, len(applies))
	for i, a := range applies {
		reqs[i] = &request{apply: a, done: make(chan reply, 1)}
	}
	e.round(context.Background(), reqs, nil)
	out := make([]reply, len(reqs))
	for i, r := range reqs {
		out[i] = <-r.done
	}
	return out
}

// trigger makes a manual run of job id, in a round of its own.
func trigger(t *testing.T, e *Engine, id string) *RunView {
	t.Helper()
	r := call(e, e.triggering(id))[0]
	require.NoError(t, r.err)
	return r.v.(*RunView)
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

	c.set(t0.Add(59 * time.Minute))
	tick(e)
	assert.Equal(t, StatusScheduled, e.List()[0].Status, "not yet")

	// The clock jumps past the run's time: it starts now, once.
	c.set(t0.Add(time.Hour + 30*time.Second))
	tick(e)
	require.Equal(t, StatusRunning, e.List()[0].Status)
	settle(t, e, c, 2*time.Second) // fails at +32 s
	v = e.List()[0]
	assert.Equal(t, StatusWaitingToRetry, v.Status)
	assert.Equal(t, t0.Add(time.Hour+37*time.Second), *v.NextRunAt, "the first retry 5 s after the failure")
	assert.Equal(t, 1, v.ConsecutiveFailures)
	assert.Equal(t, jobs.HealthDegraded, v.Health)

	c.set(t0.Add(time.Hour + 40*time.Second)) // late: the retry starts now
	tick(e)
	settle(t, e, c, 0)
	v = e.List()[0]
	assert.Equal(t, t0.Add(time.Hour+48*time.Second), *v.NextRunAt, "10 s capped at 8 s, from the failure")
	c.set(c.now().Add(8 * time.Second))
	tick(e)
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
	run := trigger(t, e, "sweep")
	assert.Equal(t, "manual", run.TriggeredBy)
	assert.Equal(t, jobs.RunRunning, run.Status, "no limit: it runs at once")
	settle(t, e, c, 0)
	v = e.List()[0]
	assert.Equal(t, jobs.HealthHealthy, v.Health)
	assert.Equal(t, "swept", v.LastRun.Output)
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
	tick(e)
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
	tick(e)
	settle(t, e, c, 0)
	v = e.List()[0]
	assert.Equal(t, jobs.HealthHealthy, v.Health)
	assert.Equal(t, t0.Add(4*time.Hour), *v.NextRunAt)

	// Down for three hours: the run missed runs once, when the server is
	// back, with its whole timeout.
	c.set(t0.Add(7 * time.Hour))
	e, err = New(ctx, Config{Store: st, Jobs: []*jobs.Job{goJob(&fail)}, Now: c.now})
	require.NoError(t, err)
	tick(e)
	settle(t, e, c, 0)
	tick(e)
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

	def.Settings.Schedule = monitors.Schedule{Type: "interval", Seconds: 60}
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
