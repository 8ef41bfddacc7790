package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/store/sqlite"
	"github.com/fsmgen/fsmgen/server/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Opener{Persistent: true, New: func(t *testing.T) func() store.Store {
		path := filepath.Join(t.TempDir(), "s.db")
		return func() store.Store {
			s, err := sqlite.Open(context.Background(), path)
			require.NoError(t, err)
			return s
		}
	}})
}

// BenchmarkInsertMonitors writes 2,000 new monitors in one batch, as a
// round of the jobs' monitors at a first start does (their machines about
// the size of a job monitor's); cpu-ms/op is the processor time.
func BenchmarkInsertMonitors(b *testing.B) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "s.db"))
	require.NoError(b, err)
	defer s.Close()
	machine := []byte(strings.Repeat("m", 600))
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	id := int64(0)
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		batch := &store.Batch{}
		for range 2000 {
			id++
			slug := fmt.Sprintf("job-%07d", id)
			batch.Add(store.InsertMonitor{Monitor: store.Monitor{ID: id, Slug: slug, Name: "Job: " + slug, PingKey: fmt.Sprintf("%032d", id), Machine: machine, Health: "unknown", CreatedAt: now, UpdatedAt: now}})
		}
		require.NoError(b, s.Apply(ctx, batch))
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}

// cpuTime returns the processor time the process has spent, user and
// system.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
