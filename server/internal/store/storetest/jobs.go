package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/store"
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

// queuedRuns checks a run queued for a free slot: it starts (once), it
// may be finished (cancelled) while queued, pruning keeps it, and
// LastRuns gives each job's newest run, queued or not.
func queuedRuns(o Opener) func(t *testing.T) {
	return func(t *testing.T) {
		st, _ := o.open(t)
		ctx := context.Background()
		job := func(id string) store.SaveJob {
			return store.SaveJob{Job: store.Job{ID: id, Machine: []byte(`{}`), Health: "healthy", UpdatedAt: t0}}
		}
		run := func(id, job, status string, at time.Time) store.InsertRun {
			return store.InsertRun{Run: store.Run{ID: id, JobID: job, Status: status, TriggeredBy: "manual", StartedAt: at}}
		}
		apply(t, st, job("a"), job("b"), job("c"),
			run("a1", "a", "succeeded", t0), run("a2", "a", "queued", t0.Add(time.Minute)),
			run("b1", "b", "queued", t0), run("b2", "b", "queued", t0.Add(time.Second)),
		)
		// A queued run starts once; a run that is not queued does not.
		apply(t, st, store.StartQueuedRun{ID: "a2", StartedAt: t0.Add(2 * time.Minute)}, store.StartQueuedRun{ID: "a1", StartedAt: t0.Add(time.Hour)})
		apply(t, st, store.StartQueuedRun{ID: "a2", StartedAt: t0.Add(time.Hour)})
		a2, err := st.Run(ctx, "a2")
		require.NoError(t, err)
		assert.Equal(t, store.Run{ID: "a2", JobID: "a", Status: "running", TriggeredBy: "manual", StartedAt: t0.Add(2 * time.Minute)}, *a2)
		a1, err := st.Run(ctx, "a1")
		require.NoError(t, err)
		assert.Equal(t, "succeeded", a1.Status)
		assert.Equal(t, t0, a1.StartedAt)

		// A queued run is cancelled, once.
		apply(t, st, store.FinishRun{ID: "b1", Status: "cancelled", FinishedAt: t0.Add(time.Minute)})
		apply(t, st, store.FinishRun{ID: "b1", Status: "failed", FinishedAt: t0.Add(time.Hour)})
		b1, err := st.Run(ctx, "b1")
		require.NoError(t, err)
		assert.Equal(t, "cancelled", b1.Status)
		assert.Equal(t, t0.Add(time.Minute), b1.FinishedAt)

		last, err := st.LastRuns(ctx)
		require.NoError(t, err)
		var got []string
		for _, r := range last {
			got = append(got, r.ID+":"+r.Status)
		}
		assert.ElementsMatch(t, []string{"a2:running", "b2:queued"}, got, "c has no run")

		running, err := st.RunningRuns(ctx)
		require.NoError(t, err)
		require.Len(t, running, 1, "a queued run is not running")
		assert.Equal(t, "a2", running[0].ID)

		// Pruning keeps the queued and running runs, however old.
		apply(t, st, store.DeleteRuns{Before: t0.Add(24 * time.Hour)})
		for id, want := range map[string]bool{"a1": false, "a2": true, "b1": false, "b2": true} {
			r, err := st.Run(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, want, r != nil, id)
		}
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
