package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/store"
)

// jobsAndRuns checks the jobs' rows and their runs' history: a run is
// finished once, listed newest first, and pruned by age.
func jobsAndRuns(o Opener) func(t *testing.T) {
	return func(t *testing.T) {
		st, _ := o.open(t)
		code := 3
		ctx := context.Background()
		apply := func(ops ...store.Op) {
			t.Helper()
			b := &store.Batch{}
			b.Add(ops...)
			require.NoError(t, st.Apply(ctx, b))
		}
		apply(
			store.SaveJob{Job: store.Job{ID: "backup", Machine: []byte(`{"v":1}`), Health: "healthy", UpdatedAt: t0}},
			store.InsertRun{Run: store.Run{ID: "r1", JobID: "backup", Status: "running", TriggeredBy: "schedule", StartedAt: t0}},
		)
		apply(
			store.SaveJob{Job: store.Job{ID: "backup", Machine: []byte(`{"v":2}`), Health: "degraded", UpdatedAt: t0.Add(time.Minute)}},
			store.FinishRun{ID: "r1", Status: "failed", FinishedAt: t0.Add(1500 * time.Millisecond), Duration: 1500 * time.Millisecond, Output: "boom", Truncated: true, ExitCode: &code, Error: "exit status 3"},
			store.InsertRun{Run: store.Run{ID: "r2", JobID: "backup", Status: "running", Attempt: 1, TriggeredBy: "retry", StartedAt: t0.Add(time.Hour)}},
		)
		// A second finish changes nothing.
		apply(store.FinishRun{ID: "r1", Status: "succeeded", FinishedAt: t0.Add(time.Hour)})

		jobs, err := st.Jobs(ctx)
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		assert.Equal(t, store.Job{ID: "backup", Machine: []byte(`{"v":2}`), Health: "degraded", UpdatedAt: t0.Add(time.Minute)}, *jobs[0])

		runs, err := st.Runs(ctx, "backup", 10)
		require.NoError(t, err)
		require.Len(t, runs, 2)
		assert.Equal(t, "r2", runs[0].ID, "newest first")
		d := 1500 * time.Millisecond
		assert.Equal(t, store.Run{ID: "r1", JobID: "backup", Status: "failed", TriggeredBy: "schedule", StartedAt: t0,
			FinishedAt: t0.Add(1500 * time.Millisecond), Duration: &d, Output: "boom", Truncated: true, ExitCode: &code, Error: "exit status 3"}, *runs[1])

		one, err := st.Run(ctx, "r2")
		require.NoError(t, err)
		assert.Equal(t, store.Run{ID: "r2", JobID: "backup", Status: "running", Attempt: 1, TriggeredBy: "retry", StartedAt: t0.Add(time.Hour)}, *one)
		none, err := st.Run(ctx, "r9")
		require.NoError(t, err)
		assert.Nil(t, none)

		running, err := st.RunningRuns(ctx)
		require.NoError(t, err)
		require.Len(t, running, 1)
		assert.Equal(t, "r2", running[0].ID)

		// Pruning keeps a running run, however old.
		apply(store.DeleteRuns{Before: t0.Add(2 * time.Hour)})
		runs, err = st.Runs(ctx, "backup", 10)
		require.NoError(t, err)
		require.Len(t, runs, 1)
		assert.Equal(t, "r2", runs[0].ID)
	}
}

// deleteCheckins checks that pruning a monitor's check-ins removes only
// its finished ones older than the limit.
func deleteCheckins(o Opener) func(t *testing.T) {
	return func(t *testing.T) {
		st, _ := o.open(t)
		ctx := context.Background()
		b := &store.Batch{}
		for id, m := range []int64{1, 2} {
			b.Add(store.InsertMonitor{Monitor: store.Monitor{ID: m, Slug: "m" + string(rune('a'+id)), Name: "m", PingKey: "k" + string(rune('a'+id)), Machine: []byte("{}"), Health: "unknown", CreatedAt: t0, UpdatedAt: t0}})
		}
		b.Add(
			store.InsertCheckin{Checkin: store.Checkin{ID: "old", MonitorID: 1, Status: "ok", Source: "job", CreatedAt: t0}},
			store.InsertCheckin{Checkin: store.Checkin{ID: "running", MonitorID: 1, Status: "in_progress", Source: "job", CreatedAt: t0}},
			store.InsertCheckin{Checkin: store.Checkin{ID: "new", MonitorID: 1, Status: "ok", Source: "job", CreatedAt: t0.Add(2 * time.Hour)}},
			store.InsertCheckin{Checkin: store.Checkin{ID: "other", MonitorID: 2, Status: "ok", Source: "ping", CreatedAt: t0}},
		)
		require.NoError(t, st.Apply(ctx, b))
		b = &store.Batch{}
		b.Add(store.DeleteCheckins{MonitorID: 1, Before: t0.Add(time.Hour)})
		require.NoError(t, st.Apply(ctx, b))
		ids := func(m int64) []string {
			list, err := st.Checkins(ctx, m, 10)
			require.NoError(t, err)
			var out []string
			for _, c := range list {
				out = append(out, c.ID)
			}
			return out
		}
		assert.Equal(t, []string{"new", "running"}, ids(1))
		assert.Equal(t, []string{"other"}, ids(2))
	}
}
