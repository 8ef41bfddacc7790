package jobengine

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/store/memory"
	"github.com/fsmgen/fsmgen/server/jobs"
	"github.com/fsmgen/fsmgen/server/monitors"
)

// TestEngineTimeoutRetryLateResult runs the engine in a synctest bubble,
// on its own clock: a run that outlives its timeout of a minute is failed
// at the minute, the retry starts after the backoff (10 s from the
// failure) and times out too. Each run's result comes 30 s after its
// timeout and says it succeeded: the first one's while the retry runs,
// the retry's once the job waits for its next run. Neither changes
// anything.
func TestEngineTimeoutRetryLateResult(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const late = 30 * time.Second
		job := &jobs.Job{ID: "slow", Name: "Slow", Enabled: true,
			Settings: jobs.Settings{Schedule: monitors.Schedule{Type: "cron", Expression: "0 3 1 1 *"}, Timezone: "UTC",
				Timeout: time.Minute, Retries: 1, BackoffBase: 10 * time.Second, BackoffCap: 10 * time.Second},
			// It ignores its cancel for 30 s, as a command that traps
			// SIGTERM would, then says it succeeded.
			Func: func(ctx context.Context) (string, error) {
				<-ctx.Done()
				time.Sleep(late)
				return "done late", nil
			},
		}
		st := memory.New()
		e, err := New(context.Background(), Config{Store: st, Jobs: []*jobs.Job{job}})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() { _ = e.Run(ctx); close(stopped) }()
		<-e.Ready()

		t0 := time.Now().UTC()
		run, err := e.Trigger(ctx, "slow")
		require.NoError(t, err)
		require.Equal(t, jobs.RunRunning, run.Status)

		time.Sleep(time.Minute)
		synctest.Wait()
		v := e.List()[0]
		assert.Equal(t, StatusWaitingToRetry, v.Status, "timed out at its minute")
		require.NotNil(t, v.NextRunAt)
		assert.Equal(t, t0.Add(time.Minute+10*time.Second), *v.NextRunAt, "the retry 10 s after the failure")

		time.Sleep(10 * time.Second)
		synctest.Wait()
		assert.Equal(t, StatusRunning, e.List()[0].Status, "the retry runs")
		time.Sleep(20 * time.Second) // the first run's result comes
		synctest.Wait()
		assert.Equal(t, StatusRunning, e.List()[0].Status, "the first run's result does not end the retry")
		time.Sleep(40 * time.Second)
		synctest.Wait()
		v = e.List()[0]
		assert.Equal(t, StatusScheduled, v.Status, "the retry timed out too: retries spent")
		assert.Equal(t, 2, v.ConsecutiveFailures)
		assert.Equal(t, jobs.HealthDegraded, v.Health, "two failures in a row")

		// The retry's result comes; nothing is left to happen once the
		// bubble's goroutines all wait.
		time.Sleep(late)
		synctest.Wait()
		after := e.List()[0]
		assert.Equal(t, v.Status, after.Status)
		assert.Equal(t, v.ConsecutiveFailures, after.ConsecutiveFailures)
		assert.Equal(t, v.Health, after.Health)
		runs, err := st.Runs(context.Background(), "slow", 10)
		require.NoError(t, err)
		require.Len(t, runs, 2)
		for i, r := range runs {
			attempt := len(runs) - 1 - i // newest first
			assert.Equal(t, attempt, r.Attempt)
			assert.Equal(t, jobs.RunFailed, r.Status, "run %d", attempt)
			assert.Equal(t, "timed out after 1m0s", r.Error, "run %d", attempt)
			assert.Equal(t, r.StartedAt.Add(time.Minute), r.FinishedAt, "run %d: failed at its timeout", attempt)
			assert.Empty(t, r.Output, "run %d: the late result's output is not kept", attempt)
		}
		assert.Equal(t, t0, runs[1].StartedAt)
		assert.Equal(t, t0.Add(time.Minute+10*time.Second), runs[0].StartedAt)

		cancel()
		<-stopped
	})
}
