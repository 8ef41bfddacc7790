package jobengine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/store/memory"
	"github.com/fsmgen/fsmgen/server/jobs"
	"github.com/fsmgen/fsmgen/server/monitors"
)

// queueing returns g's job id with overlap queue.
func queueing(g *gated, id string) *jobs.Job {
	j := g.job(id)
	j.Settings.Overlap = jobs.OverlapQueue
	return j
}

// storedRun reads run id from the store.
func storedRun(t *testing.T, st store.Store, id string) *store.Run {
	t.Helper()
	r, err := st.Run(context.Background(), id)
	require.NoError(t, err)
	return r
}

// TestEngineOverlapSkip checks the default overlap: a trigger during a run
// is refused, saying how to queue it, and nothing waits behind the run.
func TestEngineOverlapSkip(t *testing.T) {
	t.Parallel()
	st := memory.New()
	c := newClock(t0)
	g := newGated()
	e, err := New(context.Background(), Config{Store: st, Jobs: []*jobs.Job{g.job("a")}, Now: c.now})
	require.NoError(t, err)
	assert.Equal(t, jobs.OverlapSkipName, e.List()[0].Overlap)

	first := trigger(t, e, "a")
	r := call(e, e.triggering("a"))[0]
	require.Error(t, r.err)
	assert.Equal(t, "job_running", monitorengine.AsError(r.err).Code)
	assert.Contains(t, r.err.Error(), "with overlap: queue in the jobs file")
	g.end("a")
	settle(t, e, c, time.Second)
	assert.Equal(t, StatusScheduled, e.List()[0].Status)
	assert.Equal(t, first.ID, e.List()[0].LastRun.ID)
	assert.Equal(t, int32(1), g.started("a"))
}

// TestEngineOverlapQueue triggers a job with overlap queue during its run:
// the run waits behind it (stored queued, listed as the job's last run), a
// third trigger is refused, and the run that waited starts, with its id,
// as soon as the first ends, never beside it.
func TestEngineOverlapQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	c := newClock(t0)
	g := newGated()
	e, err := New(ctx, Config{Store: st, Jobs: []*jobs.Job{queueing(g, "a")}, Now: c.now})
	require.NoError(t, err)
	assert.Equal(t, jobs.OverlapQueue, e.List()[0].Overlap)

	first := trigger(t, e, "a")
	assert.Equal(t, jobs.RunRunning, first.Status)
	c.set(t0.Add(time.Second))
	behind := trigger(t, e, "a")
	assert.Equal(t, jobs.RunQueued, behind.Status)
	assert.NotEqual(t, first.ID, behind.ID)
	assert.Equal(t, store.Run{ID: behind.ID, JobID: "a", Status: jobs.RunQueued, TriggeredBy: jobs.TriggerManual, StartedAt: t0.Add(time.Second)}, *storedRun(t, st, behind.ID))
	v := e.List()[0]
	assert.Equal(t, StatusRunning, v.Status)
	assert.Equal(t, behind.ID, v.LastRun.ID)

	r := call(e, e.triggering("a"))[0]
	require.Error(t, r.err)
	assert.Equal(t, "job_running", monitorengine.AsError(r.err).Code)
	assert.Contains(t, r.err.Error(), "one queued behind it ("+behind.ID+")")

	g.end("a")
	settle(t, e, c, 9*time.Second) // the first run ends at +10 s
	assert.Equal(t, jobs.RunSucceeded, storedRun(t, st, first.ID).Status)
	next := storedRun(t, st, behind.ID)
	assert.Equal(t, jobs.RunRunning, next.Status)
	assert.Equal(t, t0.Add(10*time.Second), next.StartedAt, "started when the first ended")
	assert.Equal(t, jobs.TriggerManual, next.TriggeredBy)
	require.Eventually(t, func() bool { return g.started("a") == 2 }, 10*time.Second, time.Millisecond, "the second run's code runs")
	assert.Equal(t, t0.Add(10*time.Second+time.Hour), e.byID["a"].timers[0].Deadline, "its whole timeout")

	g.end("a")
	settle(t, e, c, 0)
	assert.Equal(t, StatusScheduled, e.List()[0].Status)
	runs, err := st.Runs(ctx, "a", 10)
	require.NoError(t, err)
	require.Len(t, runs, 2)
	assert.Equal(t, []string{jobs.RunSucceeded, jobs.RunSucceeded}, []string{runs[0].Status, runs[1].Status})
}

// TestEngineOverlapCancel cancels, with overlap queue, the run waiting
// behind (it never runs, the run in progress goes on) and the run in
// progress (the one waiting behind starts then).
func TestEngineOverlapCancel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	c := newClock(t0)
	g := newGated()
	e, err := New(ctx, Config{Store: st, Jobs: []*jobs.Job{queueing(g, "a")}, Now: c.now})
	require.NoError(t, err)

	first := trigger(t, e, "a")
	behind := trigger(t, e, "a")
	r := call(e, e.cancelling(ctx, behind.ID))[0]
	require.NoError(t, r.err)
	assert.Equal(t, jobs.RunCancelled, r.v.(*RunView).Status)
	assert.Equal(t, jobs.RunCancelled, storedRun(t, st, behind.ID).Status)
	assert.Equal(t, StatusRunning, e.List()[0].Status)
	assert.Equal(t, jobs.RunRunning, storedRun(t, st, first.ID).Status, "the run in progress goes on")

	// Queued again, then the run in progress is cancelled: the one behind
	// starts.
	c.set(t0.Add(time.Minute))
	behind = trigger(t, e, "a")
	r = call(e, e.cancelling(ctx, first.ID))[0]
	require.NoError(t, r.err)
	assert.Equal(t, jobs.RunCancelled, r.v.(*RunView).Status)
	settle(t, e, c, 0) // the cancelled run's result, dropped
	tick(e)
	assert.Equal(t, StatusRunning, e.List()[0].Status)
	assert.Equal(t, jobs.RunRunning, storedRun(t, st, behind.ID).Status)
	require.Eventually(t, func() bool { return g.started("a") == 2 }, 10*time.Second, time.Millisecond)
	g.end("a")
	settle(t, e, c, 0)
	assert.Equal(t, StatusScheduled, e.List()[0].Status)
	assert.Equal(t, jobs.RunSucceeded, storedRun(t, st, behind.ID).Status)
	assert.Equal(t, int32(2), g.started("a"), "the first cancelled behind never ran")
}

// TestEngineOverlapTimeout times out a run with one waiting behind: the
// run is failed and the one behind starts at the timeout, in place of the
// retry.
func TestEngineOverlapTimeout(t *testing.T) {
	t.Parallel()
	st := memory.New()
	c := newClock(t0)
	g := newGated()
	def := queueing(g, "a")
	def.Settings.Retries = 2
	e, err := New(context.Background(), Config{Store: st, Jobs: []*jobs.Job{def}, Now: c.now})
	require.NoError(t, err)
	first := trigger(t, e, "a")
	behind := trigger(t, e, "a")

	c.set(t0.Add(time.Hour + time.Second))
	tick(e)
	f := storedRun(t, st, first.ID)
	assert.Equal(t, jobs.RunFailed, f.Status)
	assert.Equal(t, "timed out after 1h0m0s", f.Error)
	settle(t, e, c, 0) // the stopped run's result, dropped
	tick(e)
	next := storedRun(t, st, behind.ID)
	assert.Equal(t, jobs.RunRunning, next.Status)
	assert.Equal(t, 0, next.Attempt, "a first try, not a retry")
	v := e.List()[0]
	assert.Equal(t, StatusRunning, v.Status)
	assert.Equal(t, 1, v.ConsecutiveFailures)
	g.end("a")
	settle(t, e, c, 0)
	assert.Equal(t, 0, e.List()[0].ConsecutiveFailures)
}

// TestEngineOverlapSchedule runs an hourly job from 03:30 to 04:50: with
// overlap queue, the time that came during the run (04:00) starts a run as
// soon as it ends, in place of its retry when it failed; with skip, it is
// passed over and the job waits for 05:00 (or its retry).
func TestEngineOverlapSchedule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		overlap string
		fail    bool
		status  string
		trigger string
		next    *time.Time
	}{
		{"queue", jobs.OverlapQueue, false, StatusRunning, jobs.TriggerSchedule, nil},
		{"queue, failed", jobs.OverlapQueue, true, StatusRunning, jobs.TriggerSchedule, nil},
		{"skip", jobs.OverlapSkip, false, StatusScheduled, "", new(t0.Add(2 * time.Hour))},
		{"skip, failed", jobs.OverlapSkip, true, StatusWaitingToRetry, "", new(t0.Add(110*time.Minute + 5*time.Second))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := memory.New()
			c := newClock(t0.Add(time.Minute))
			fail := make(chan bool, 2)
			def := &jobs.Job{ID: "hourly", Name: "hourly", Enabled: true,
				Settings: jobs.Settings{Schedule: monitors.Schedule{Type: "cron", Expression: "0 * * * *"}, Timezone: "UTC", Timeout: 3 * time.Hour,
					Retries: 1, BackoffBase: 5 * time.Second, BackoffCap: 5 * time.Second, Overlap: tc.overlap},
				Func: func(ctx context.Context) (string, error) {
					if <-fail {
						return "", assert.AnError
					}
					return "ok", nil
				},
			}
			e, err := New(ctx, Config{Store: st, Jobs: []*jobs.Job{def}, Now: c.now})
			require.NoError(t, err)
			c.set(t0.Add(30 * time.Minute)) // 03:30: triggered by hand
			trigger(t, e, "hourly")
			fail <- tc.fail
			settle(t, e, c, 80*time.Minute) // ends at 04:50
			v := e.List()[0]
			assert.Equal(t, tc.status, v.Status)
			assert.Equal(t, tc.next, v.NextRunAt)
			if tc.trigger == "" {
				return
			}
			assert.Equal(t, tc.trigger, v.LastRun.TriggeredBy)
			assert.Equal(t, 0, v.LastRun.Attempt)
			fail <- false
			settle(t, e, c, time.Minute)
			v = e.List()[0]
			assert.Equal(t, StatusScheduled, v.Status, "one run for the time passed, not one for each")
			assert.Equal(t, new(t0.Add(2*time.Hour)), v.NextRunAt)
		})
	}
}

// TestEngineOverlapRestart kills the server with a run in progress and one
// waiting behind it: the next start closes the run as interrupted and
// starts the one behind (with its id) in place of the retry; a restart
// with the job disabled records the one behind cancelled.
func TestEngineOverlapRestart(t *testing.T) {
	t.Parallel()
	for _, enabled := range []bool{true, false} {
		ctx := context.Background()
		st := memory.New()
		c := newClock(t0)
		g := newGated()
		def := queueing(g, "a")
		def.Settings.Retries = 1
		e, err := New(ctx, Config{Store: st, Jobs: []*jobs.Job{def}, Now: c.now})
		require.NoError(t, err)
		first := trigger(t, e, "a")
		behind := trigger(t, e, "a")
		g.end("a")
		<-e.results // the server is killed before it records the end

		c.set(t0.Add(time.Minute))
		def.Enabled = enabled
		e, err = New(ctx, Config{Store: st, Jobs: []*jobs.Job{def}, Now: c.now})
		require.NoError(t, err)
		f := storedRun(t, st, first.ID)
		assert.Equal(t, jobs.RunFailed, f.Status)
		assert.Equal(t, ErrInterrupted, f.Error)
		if !enabled {
			assert.Equal(t, StatusDisabled, e.List()[0].Status)
			assert.Equal(t, jobs.RunCancelled, storedRun(t, st, behind.ID).Status, "disabled: never runs")
			continue
		}
		assert.Equal(t, StatusQueued, e.List()[0].Status)
		tick(e)
		assert.Equal(t, StatusRunning, e.List()[0].Status)
		next := storedRun(t, st, behind.ID)
		assert.Equal(t, jobs.RunRunning, next.Status)
		assert.Equal(t, jobs.TriggerManual, next.TriggeredBy)
		g.end("a")
		settle(t, e, c, 0)
		runs, err := st.Runs(ctx, "a", 10)
		require.NoError(t, err)
		assert.Len(t, runs, 2, "no retry of the interrupted run")
	}
}
