// Package storetest is the conformance suite of store.Store: the same
// tests for every database (SQLite, Postgres, and the in-memory store),
// run by each store's own test with Run; and, for a store.Shared, the
// leases and fencing with RunShared.
package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// Opener makes stores for the tests.
type Opener struct {
	// New returns a function that opens one new, empty database: each
	// call of the function opens it again (the test closes what it
	// opens).
	New func(t *testing.T) func() store.Store
	// Persistent says that a database opened again keeps what was
	// written (false for the in-memory store, which every New starts
	// afresh and opening again does not reopen).
	Persistent bool
}

// t0 is the tests' clock: to the microsecond, as the engine's is.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 123456000, time.UTC)

// open opens a new database and closes it at the test's end.
func (o Opener) open(t *testing.T) (store.Store, func() store.Store) {
	t.Helper()
	reopen := o.New(t)
	s := reopen()
	t.Cleanup(func() { s.Close() })
	return s, reopen
}

func monitorRow(id int64, slug string) store.Monitor {
	return store.Monitor{
		ID: id, Slug: slug, Name: "Monitor " + slug, PingKey: "key-" + slug,
		Machine: []byte(`{"machine":"` + slug + `"}`), Health: "unknown",
		CreatedAt: t0, UpdatedAt: t0,
	}
}

func apply(t *testing.T, s store.Store, ops ...store.Op) {
	t.Helper()
	require.NoError(t, s.Apply(context.Background(), &store.Batch{Ops: ops}))
}

func ptr[T any](v T) *T { return &v }

// Run runs the conformance suite.
func Run(t *testing.T, o Opener) {
	ctx := context.Background()
	t.Run("jobs and runs", jobsAndRuns(o))
	t.Run("queued runs", queuedRuns(o))
	t.Run("many rows", manyRows(o))
	t.Run("delete check-ins", deleteCheckins(o))
	t.Run("threads", threads(o))
	t.Run("keys", keys(o))

	t.Run("meta", func(t *testing.T) {
		s, _ := o.open(t)
		_, ok, err := s.Meta(ctx, "k")
		require.NoError(t, err)
		assert.False(t, ok)
		for _, v := range []string{"first", "second"} {
			require.NoError(t, s.SetMeta(ctx, "k", v))
			got, ok, err := s.Meta(ctx, "k")
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, v, got)
		}
	})

	t.Run("monitors", func(t *testing.T) {
		s, _ := o.open(t)
		a, b, c := monitorRow(3, "a"), monitorRow(1, "b"), monitorRow(2, "c")
		apply(t, s, store.InsertMonitor{Monitor: a}, store.InsertMonitor{Monitor: b}, store.InsertMonitor{Monitor: c})
		a.Name, a.Slug, a.AlertWebhookURL, a.UpdatedAt = "Renamed", "a2", "https://example.com/hook", t0.Add(time.Second)
		b.Machine, b.Health, b.LastCheckinAt, b.UpdatedAt = []byte(`{"machine":"saved"}`), "healthy", t0.Add(2*time.Second), t0.Add(3*time.Second)
		apply(t, s,
			store.UpdateMonitor{Monitor: a},
			store.SaveMachine{ID: b.ID, Machine: b.Machine, Health: b.Health, LastCheckinAt: b.LastCheckinAt, UpdatedAt: b.UpdatedAt},
			store.DeleteMonitor{ID: c.ID})
		got, err := s.Monitors(ctx)
		require.NoError(t, err)
		assert.Equal(t, []*store.Monitor{&b, &a}, got, "by id, as written")
	})

	t.Run("checkins", func(t *testing.T) {
		s, _ := o.open(t)
		m := monitorRow(1, "m")
		other := monitorRow(2, "other")
		apply(t, s, store.InsertMonitor{Monitor: m}, store.InsertMonitor{Monitor: other})
		ok := store.Checkin{ID: "c1", MonitorID: 1, Status: "ok", Source: "ping", CreatedAt: t0, FinishedAt: t0, ExitCode: ptr(0), Output: ptr("done\x00with a NUL byte")}
		run := store.Checkin{ID: "c2", MonitorID: 1, Status: "in_progress", Source: "api", CreatedAt: t0.Add(time.Second)}
		missed := store.Checkin{ID: "c3", MonitorID: 1, Status: "missed", Source: "system", CreatedAt: t0.Add(2 * time.Second), ExpectedAt: t0.Add(time.Second / 2)}
		elsewhere := store.Checkin{ID: "c4", MonitorID: 2, Status: "ok", Source: "ping", CreatedAt: t0}
		apply(t, s, store.InsertCheckin{Checkin: ok}, store.InsertCheckin{Checkin: run}, store.InsertCheckin{Checkin: missed}, store.InsertCheckin{Checkin: elsewhere})

		// The run finishes: its duration runs from its creation; a
		// second finish of it changes nothing.
		end := run.CreatedAt.Add(1500 * time.Millisecond)
		apply(t, s, store.FinishCheckin{MonitorID: 1, ID: "c2", Status: "error", At: end, ExitCode: ptr(3), Output: ptr("boom")})
		apply(t, s, store.FinishCheckin{MonitorID: 1, ID: "c2", Status: "timeout", At: end.Add(time.Hour)})
		run.Status, run.FinishedAt, run.Duration, run.ExitCode, run.Output = "error", end, ptr(1500*time.Millisecond), ptr(3), ptr("boom")

		list, err := s.Checkins(ctx, 1, 10)
		require.NoError(t, err)
		assert.Equal(t, []*store.Checkin{&missed, &run, &ok}, list, "newest first")
		list, err = s.Checkins(ctx, 1, 2)
		require.NoError(t, err)
		assert.Equal(t, []*store.Checkin{&missed, &run}, list, "limited")

		one, err := s.Checkin(ctx, 1, "c2")
		require.NoError(t, err)
		require.NotNil(t, one)
		assert.Equal(t, &run, one, "the whole check-in, as Checkins has it")
		for _, c := range []store.Checkin{ok, missed} {
			got, err := s.Checkin(ctx, 1, c.ID)
			require.NoError(t, err)
			assert.Equal(t, &c, got)
		}
		byID, err := s.CheckinsByID(ctx, []string{"c4", "c2", "nope", "c1"})
		require.NoError(t, err)
		assert.ElementsMatch(t, []*store.Checkin{&elsewhere, &run, &ok}, byID, "of any monitor")
		none, err := s.CheckinsByID(ctx, nil)
		require.NoError(t, err)
		assert.Empty(t, none)
		for _, q := range []struct {
			monitor int64
			id      string
		}{{1, "nope"}, {2, "c2"}} {
			none, err := s.Checkin(ctx, q.monitor, q.id)
			require.NoError(t, err)
			assert.Nil(t, none, "monitor %d has no check-in %s", q.monitor, q.id)
		}

		// Deleting a monitor deletes its check-ins.
		apply(t, s, store.DeleteMonitor{ID: 1})
		list, err = s.Checkins(ctx, 1, 10)
		require.NoError(t, err)
		assert.Empty(t, list)
		list, err = s.Checkins(ctx, 2, 10)
		require.NoError(t, err)
		assert.Len(t, list, 1)
	})

	t.Run("a failed batch writes nothing", func(t *testing.T) {
		s, _ := o.open(t)
		apply(t, s, store.InsertMonitor{Monitor: monitorRow(1, "a")})
		dup := monitorRow(2, "a") // the slug is taken
		err := s.Apply(ctx, &store.Batch{Ops: []store.Op{
			store.InsertCheckin{Checkin: store.Checkin{ID: "c", MonitorID: 1, Status: "ok", Source: "ping", CreatedAt: t0}},
			store.SaveMachine{ID: 1, Machine: []byte(`{"changed":true}`), Health: "healthy", UpdatedAt: t0.Add(time.Second)},
			store.InsertAlert{URL: "https://example.com", Payload: []byte(`{}`), At: t0},
			store.InsertMonitor{Monitor: dup},
		}})
		require.Error(t, err)
		mons, err := s.Monitors(ctx)
		require.NoError(t, err)
		require.Len(t, mons, 1)
		assert.Equal(t, "unknown", mons[0].Health)
		list, err := s.Checkins(ctx, 1, 10)
		require.NoError(t, err)
		assert.Empty(t, list)
		next, err := s.NextAlertAt(ctx)
		require.NoError(t, err)
		assert.True(t, next.IsZero(), "no alert: %s", next)
	})

	t.Run("alerts", func(t *testing.T) {
		s, _ := o.open(t)
		next, err := s.NextAlertAt(ctx)
		require.NoError(t, err)
		assert.True(t, next.IsZero())
		oldest, err := s.OldestAlertAt(ctx)
		require.NoError(t, err)
		assert.True(t, oldest.IsZero())
		apply(t, s,
			store.InsertAlert{URL: "https://a", Payload: []byte(`{"n":1}`), At: t0},
			store.InsertAlert{URL: "https://a", Payload: []byte(`{"n":2}`), At: t0},
			store.InsertAlert{URL: "https://b", Payload: []byte(`{"n":3}`), At: t0.Add(time.Minute)},
		)
		next, err = s.NextAlertAt(ctx)
		require.NoError(t, err)
		assert.Equal(t, t0, next)

		payloads := func(now time.Time) []string {
			t.Helper()
			list, err := s.PendingAlerts(ctx, now, 10)
			require.NoError(t, err)
			var out []string
			for _, a := range list {
				out = append(out, fmt.Sprintf("%s %s %d", a.URL, a.Payload, a.Attempts))
			}
			return out
		}
		// Of each URL, the oldest only; b's is not due yet.
		pending, err := s.PendingAlerts(ctx, t0, 10)
		require.NoError(t, err)
		require.Len(t, pending, 1)
		assert.Equal(t, `{"n":1}`, string(pending[0].Payload))

		// The first fails, to be tried again a minute later; then it is
		// delivered, and the second comes up.
		require.NoError(t, s.AlertFailed(ctx, pending[0].ID, t0, t0.Add(time.Minute), "503"))
		// The next attempt is a's first's (b's is due then too): a's
		// second, due at t0, waits for it; the oldest alert was raised at
		// t0.
		next, err = s.NextAlertAt(ctx)
		require.NoError(t, err)
		assert.Equal(t, t0.Add(time.Minute), next, "not the time of an alert waiting behind another")
		oldest, err = s.OldestAlertAt(ctx)
		require.NoError(t, err)
		assert.Equal(t, t0, oldest)
		assert.Empty(t, payloads(t0.Add(time.Second)), "a's first waits; a's second waits for it")
		assert.Equal(t, []string{`https://a {"n":1} 1`, `https://b {"n":3} 0`}, payloads(t0.Add(time.Minute)))
		// (A shared store hands them out once a minute: past it, again.)
		pending, err = s.PendingAlerts(ctx, t0.Add(3*time.Minute), 10)
		require.NoError(t, err)
		require.Len(t, pending, 2)
		require.NoError(t, s.AlertDelivered(ctx, pending[0].ID, t0.Add(2*time.Minute)))
		require.NoError(t, s.AlertFailed(ctx, pending[1].ID, t0.Add(2*time.Minute), time.Time{}, "gone"))
		assert.Equal(t, []string{`https://a {"n":2} 0`}, payloads(t0.Add(2*time.Hour)), "b's is given up")
	})

	if o.Persistent {
		t.Run("kept when opened again", func(t *testing.T) {
			s, reopen := o.open(t)
			m := monitorRow(7, "kept")
			apply(t, s, store.InsertMonitor{Monitor: m}, store.InsertCheckin{Checkin: store.Checkin{ID: "c", MonitorID: 7, Status: "ok", Source: "ping", CreatedAt: t0}})
			require.NoError(t, s.SetMeta(ctx, "token", "x"))
			require.NoError(t, s.Close())
			s2 := reopen()
			t.Cleanup(func() { s2.Close() })
			mons, err := s2.Monitors(ctx)
			require.NoError(t, err)
			require.Len(t, mons, 1)
			assert.Equal(t, "kept", mons[0].Slug)
			list, err := s2.Checkins(ctx, 7, 10)
			require.NoError(t, err)
			assert.Len(t, list, 1)
			v, ok, err := s2.Meta(ctx, "token")
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, "x", v)
		})
	}
}

// RunShared runs the tests of a store several instances share: ids,
// heartbeats, leases, their expiry and fencing, finding a monitor's
// owner, and alerts handed out once. Its opener's databases must be
// Shared.
func RunShared(t *testing.T, o Opener) {
	ctx := context.Background()
	shared := func(t *testing.T) store.Shared {
		s, _ := o.open(t)
		sh, ok := s.(store.Shared)
		require.True(t, ok, "%T is not a store.Shared", s)
		return sh
	}

	t.Run("ids", func(t *testing.T) {
		s := shared(t)
		seen := map[int64]bool{}
		for range 20 {
			id, err := s.NewMonitorID(ctx)
			require.NoError(t, err)
			assert.False(t, seen[id], "id %d twice", id)
			seen[id] = true
		}
		ids, err := s.NewMonitorIDs(ctx, 500)
		require.NoError(t, err)
		require.Len(t, ids, 500)
		for _, id := range ids {
			assert.False(t, seen[id], "id %d twice", id)
			seen[id] = true
		}
		none, err := s.NewMonitorIDs(ctx, 0)
		require.NoError(t, err)
		assert.Empty(t, none)
	})

	t.Run("taken slugs", func(t *testing.T) {
		s := shared(t)
		apply(t, s, store.InsertMonitor{Monitor: monitorRow(1, "job-a")}, store.InsertMonitor{Monitor: monitorRow(2, "job-c")})
		taken, err := s.TakenSlugs(ctx, []string{"job-c", "job-b", "job-a"})
		require.NoError(t, err)
		assert.Equal(t, []string{"job-a", "job-c"}, taken)
		taken, err = s.TakenSlugs(ctx, nil)
		require.NoError(t, err)
		assert.Empty(t, taken)
	})

	t.Run("leases", func(t *testing.T) {
		s := shared(t)
		n := s.Shards()
		require.GreaterOrEqual(t, n, 4)
		const lease = time.Minute
		live, err := s.Heartbeat(ctx, "a", "http://a", lease)
		require.NoError(t, err)
		assert.Equal(t, 1, live)
		live, err = s.Heartbeat(ctx, "b", "http://b", lease)
		require.NoError(t, err)
		assert.Equal(t, 2, live)

		// a claims half; b claims more than is left and gets the rest.
		_, aHeld, next, err := s.Leases(ctx, "a", nil, n/2, lease)
		require.NoError(t, err)
		assert.Len(t, aHeld, n/2)
		assert.Zero(t, next, "nobody else holds a lease")
		_, bHeld, next, err := s.Leases(ctx, "b", nil, n, lease)
		require.NoError(t, err)
		assert.Len(t, bHeld, n-n/2)
		assert.Empty(t, intersect(aHeld, bHeld), "no shard twice")
		assert.InDelta(t, lease.Seconds(), next.Seconds(), 5, "a's leases expire in a minute")

		// a renews its own only; nothing is left to claim.
		renewed, claimed, _, err := s.Leases(ctx, "a", append(slices.Clone(aHeld), bHeld[0]), 5, lease)
		require.NoError(t, err)
		assert.Equal(t, aHeld, renewed)
		assert.Empty(t, claimed)

		// Where a monitor is: its shard's holder.
		m := monitorRow(1, "x")
		m.Shard = bHeld[0]
		apply(t, s, store.InsertMonitor{Monitor: m})
		for _, q := range [][2]string{{"x", ""}, {"", "key-x"}} {
			got, owner, addr, err := s.Locate(ctx, q[0], q[1])
			require.NoError(t, err)
			require.NotNil(t, got)
			assert.Equal(t, []any{int64(1), bHeld[0], "b", "http://b"}, []any{got.ID, got.Shard, owner, addr})
		}
		none, _, _, err := s.Locate(ctx, "y", "")
		require.NoError(t, err)
		assert.Nil(t, none)
		mons, err := s.ShardMonitors(ctx, bHeld[:1])
		require.NoError(t, err)
		require.Len(t, mons, 1)
		mons, err = s.ShardMonitors(ctx, aHeld)
		require.NoError(t, err)
		assert.Empty(t, mons)

		// b leaves: a claims what it held.
		require.NoError(t, s.Leave(ctx, "b"))
		_, claimed, _, err = s.Leases(ctx, "a", aHeld, n, lease)
		require.NoError(t, err)
		assert.Equal(t, bHeld, claimed)
		_, owner, _, err := s.Locate(ctx, "x", "")
		require.NoError(t, err)
		assert.Equal(t, "a", owner)

		// a releases one: b (back) claims it.
		require.NoError(t, s.Release(ctx, "a", bHeld[:1]))
		_, claimed, _, err = s.Leases(ctx, "b", nil, n, lease)
		require.NoError(t, err)
		assert.Equal(t, bHeld[:1], claimed)
	})

	t.Run("expired leases are taken over and fence their old holder", func(t *testing.T) {
		s := shared(t)
		const short = 300 * time.Millisecond
		_, held, _, err := s.Leases(ctx, "a", nil, 2, short)
		require.NoError(t, err)
		require.Len(t, held, 2)
		m := monitorRow(1, "x")
		m.Shard = held[0]
		fenced := func(instance string, shards []int, health string) error {
			return s.Apply(ctx, &store.Batch{
				Fence: &store.Fence{Instance: instance, Shards: shards},
				Ops:   []store.Op{store.SaveMachine{ID: 1, Machine: m.Machine, Health: health, UpdatedAt: t0}},
			})
		}
		apply(t, s, store.InsertMonitor{Monitor: m})
		require.NoError(t, fenced("a", held, "healthy"), "a holds both")
		require.ErrorIs(t, fenced("b", held[:1], "late"), store.ErrFenced, "b holds none")

		// a's leases expire: a cannot renew them, nor write; b takes them.
		time.Sleep(2 * short)
		renewed, _, _, err := s.Leases(ctx, "a", held, 0, short)
		require.NoError(t, err)
		assert.Empty(t, renewed, "an expired lease is not renewed")
		require.ErrorIs(t, fenced("a", held[:1], "missed"), store.ErrFenced, "a's lease expired")
		_, claimed, _, err := s.Leases(ctx, "b", nil, 2, time.Minute)
		require.NoError(t, err)
		assert.Equal(t, held, claimed)
		require.ErrorIs(t, fenced("a", held[:1], "missed"), store.ErrFenced, "b holds it")
		require.NoError(t, fenced("b", held[:1], "failing"))
		mons, err := s.Monitors(ctx)
		require.NoError(t, err)
		require.Len(t, mons, 1)
		assert.Equal(t, "failing", mons[0].Health, "only the writes of the lease's holder")
	})

	t.Run("the jobs' writes are fenced by the jobs shard's lease", func(t *testing.T) {
		s := shared(t)
		const short = 300 * time.Millisecond
		owner, addr, err := s.Holder(ctx, store.JobsShard)
		require.NoError(t, err)
		assert.Equal(t, [2]string{"", ""}, [2]string{owner, addr}, "nobody holds the jobs yet")
		_, err = s.Heartbeat(ctx, "a", "http://a", time.Minute)
		require.NoError(t, err)
		_, err = s.Heartbeat(ctx, "b", "http://b", time.Minute)
		require.NoError(t, err)
		_, held, _, err := s.Leases(ctx, "a", nil, 1, short)
		require.NoError(t, err)
		require.Equal(t, []int{store.JobsShard}, held, "the first claim takes the jobs shard")
		owner, addr, err = s.Holder(ctx, store.JobsShard)
		require.NoError(t, err)
		assert.Equal(t, [2]string{"a", "http://a"}, [2]string{owner, addr})

		step := func(instance string, n int) error {
			id := fmt.Sprintf("r%d", n)
			return s.Apply(ctx, &store.Batch{
				Fence: &store.Fence{Instance: instance, Shards: []int{store.JobsShard}},
				Ops: []store.Op{
					store.SaveJob{Job: store.Job{ID: "backup", Machine: []byte(fmt.Sprintf(`{"step":%d}`, n)), Health: "healthy", UpdatedAt: t0}},
					store.InsertRun{Run: store.Run{ID: id, JobID: "backup", Status: "running", TriggeredBy: "schedule", StartedAt: t0.Add(time.Duration(n) * time.Minute)}},
				},
			})
		}
		finish := func(instance, run string) error {
			return s.Apply(ctx, &store.Batch{
				Fence: &store.Fence{Instance: instance, Shards: []int{store.JobsShard}},
				Ops:   []store.Op{store.FinishRun{ID: run, Status: "failed", FinishedAt: t0.Add(time.Second), Duration: time.Second, Error: "boom"}},
			})
		}
		require.NoError(t, step("a", 1), "a holds the jobs")
		require.ErrorIs(t, step("b", 2), store.ErrFenced, "b does not")

		// a's lease expires; b takes the jobs over and closes a's run.
		time.Sleep(2 * short)
		for _, tc := range []struct {
			name string
			err  error
		}{
			{"a's step", step("a", 3)},
			{"a's finish", finish("a", "r1")},
		} {
			require.ErrorIs(t, tc.err, store.ErrFenced, "%s after its lease expired", tc.name)
		}
		_, claimed, _, err := s.Leases(ctx, "b", nil, 1, time.Minute)
		require.NoError(t, err)
		require.Equal(t, []int{store.JobsShard}, claimed)
		require.ErrorIs(t, finish("a", "r1"), store.ErrFenced, "b holds the jobs")
		require.NoError(t, finish("b", "r1"))
		require.NoError(t, step("b", 4))

		jobs, err := s.Jobs(ctx)
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		assert.JSONEq(t, `{"step":4}`, string(jobs[0].Machine), "only the holder's steps")
		runs, err := s.Runs(ctx, "backup", 10)
		require.NoError(t, err)
		var got []string
		for _, r := range runs {
			got = append(got, r.ID+" "+r.Status+" "+r.Error)
		}
		assert.Equal(t, []string{"r4 running ", "r1 failed boom"}, got, "no write of a fenced batch")
	})

	t.Run("an alert is handed out once", func(t *testing.T) {
		s := shared(t)
		apply(t, s, store.InsertAlert{URL: "https://a", Payload: []byte(`{}`), At: t0})
		first, err := s.PendingAlerts(ctx, t0, 10)
		require.NoError(t, err)
		require.Len(t, first, 1)
		again, err := s.PendingAlerts(ctx, t0.Add(time.Second), 10)
		require.NoError(t, err)
		assert.Empty(t, again, "another instance does not post it too")
	})
}

func intersect(a, b []int) []int {
	var out []int
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
