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

// manyRows checks that every monitor and every job is written (SQLite
// writes runs of inserts many rows a statement) and read back, in order,
// from tables a start-up reads in parts (SQLite reads a large table by
// ranges of rowids): 5,000 of each, the monitors' ids with gaps (one in
// ten deleted), the jobs inserted out of their ids' order, then each
// saved twice in a row.
func manyRows(o Opener) func(t *testing.T) {
	return func(t *testing.T) {
		if !o.Persistent {
			t.Skip("the in-memory store reads nothing in parts (and checks each insert against every monitor)")
		}
		st, _ := o.open(t)
		ctx := context.Background()
		const n = 5000
		b := &store.Batch{}
		var wantMonitors []int64
		for i := range n {
			id := int64(3*i + 1)
			b.Add(store.InsertMonitor{Monitor: monitorRow(id, fmt.Sprintf("m%05d", i))})
			if i%10 != 7 {
				wantMonitors = append(wantMonitors, id)
			}
		}
		for i := 7; i < n; i += 10 {
			b.Add(store.DeleteMonitor{ID: int64(3*i + 1)})
		}
		var wantJobs []string
		for i := range n {
			id := fmt.Sprintf("job-%05d", (i*7919)%n) // every id once, out of order
			b.Add(store.SaveJob{Job: store.Job{ID: id, Machine: []byte(`{"first":true}`), Health: "unknown", UpdatedAt: t0}})
			wantJobs = append(wantJobs, id)
		}
		// The last save's time differs from one job to the next, in runs
		// (SQLite formats a run's shared time once).
		updated := func(id string) time.Time { return t0.Add(time.Duration(id[len(id)-1]%3) * time.Millisecond) }
		for _, id := range wantJobs {
			// Saved twice more in a row: the last wins.
			b.Add(store.SaveJob{Job: store.Job{ID: id, Machine: []byte(`{"second":true}`), Health: "degraded", UpdatedAt: t0}},
				store.SaveJob{Job: store.Job{ID: id, Machine: []byte(`{"job":"` + id + `"}`), Health: "healthy", UpdatedAt: updated(id)}})
		}
		slices.Sort(wantJobs)
		require.NoError(t, st.Apply(ctx, b))

		monitors, err := st.Monitors(ctx)
		require.NoError(t, err)
		got := make([]int64, len(monitors))
		for i, m := range monitors {
			got[i] = m.ID
		}
		assert.Equal(t, wantMonitors, got, "every monitor, by id")
		m := monitors[len(monitors)/2]
		want := monitorRow(m.ID, m.Slug)
		assert.Equal(t, &want, m)

		jobs, err := st.Jobs(ctx)
		require.NoError(t, err)
		gotJobs := make([]string, len(jobs))
		for i, j := range jobs {
			gotJobs[i] = j.ID
			require.Equal(t, store.Job{ID: j.ID, Machine: []byte(`{"job":"` + j.ID + `"}`), Health: "healthy", UpdatedAt: updated(j.ID)}, *j)
		}
		assert.Equal(t, wantJobs, gotJobs, "every job, by id")

		// A run of inserts one of which is refused (a slug taken) writes
		// nothing.
		bad := &store.Batch{}
		for i := range 40 {
			slug := fmt.Sprintf("new%02d", i)
			if i == 35 {
				slug = "m00000"
			}
			bad.Add(store.InsertMonitor{Monitor: monitorRow(int64(100_000+i), slug)})
		}
		require.Error(t, st.Apply(ctx, bad))
		monitors, err = st.Monitors(ctx)
		require.NoError(t, err)
		assert.Len(t, monitors, len(wantMonitors), "nothing of the refused batch")
	}
}
