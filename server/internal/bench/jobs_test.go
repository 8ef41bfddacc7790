package bench_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	jobsengine "github.com/fsmgen/fsmgen/server/internal/jobengine"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/pgtest"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/store/postgres"
	"github.com/fsmgen/fsmgen/server/internal/store/sqlite"
	"github.com/fsmgen/fsmgen/server/jobs"
	"github.com/fsmgen/fsmgen/server/monitors"
)

// jobRuns is how many runs each job benchmark makes.
const jobRuns = 300

// BenchmarkJobTriggerToStart measures the jobs engine's overhead per run,
// with the monitors engine the runs check in to: from a manual trigger to
// the job's code starting (the run recorded running, synced, and its
// monitor's start check-in stored), and from the trigger to the run
// recorded finished. A Go job that does nothing, and a command (/bin/true)
// that adds a process start; on SQLite, and on a durable Postgres as an
// instance that holds the jobs' lease (every write fenced by it). Runs one
// after another.
func BenchmarkJobTriggerToStart(b *testing.B) {
	for _, db := range []string{"sqlite", "postgres"} {
		for _, kind := range []string{"go", "command"} {
			b.Run(db+"/"+kind, func(b *testing.B) {
				for range b.N {
					benchJobRuns(b, db, kind)
				}
			})
		}
	}
}

func benchJobRuns(b *testing.B, db, kind string) {
	ctx, cancel := context.WithCancel(context.Background())
	var st store.Store
	var err error
	if db == "postgres" {
		st, err = postgres.Open(ctx, pgtest.DB(b))
	} else {
		st, err = sqlite.Open(ctx, filepath.Join(b.TempDir(), "s.db"))
	}
	if err != nil {
		b.Fatal(err)
	}
	mon, err := monitorengine.New(ctx, monitorengine.Config{Store: st, Instance: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	started := make(chan time.Time, 1)
	def := &jobs.Job{ID: "bench", Enabled: true, Settings: jobs.Settings{
		Schedule: monitors.Schedule{Type: "cron", Expression: "0 3 1 1 *"}, Timezone: "UTC",
		Timeout: time.Minute, BackoffBase: time.Second, BackoffCap: time.Second,
	}}
	if kind == "go" {
		def.Func = func(ctx context.Context) (string, error) { started <- time.Now(); return "", nil }
	} else {
		def.Command = []string{"/bin/true"}
	}
	e, err := jobsengine.New(ctx, jobsengine.Config{Store: st, Monitors: mon, Jobs: []*jobs.Job{def}, Instance: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { mon.Run(ctx) })
	wg.Go(func() { e.Run(ctx) })
	defer func() {
		cancel()
		wg.Wait()
		st.Close()
	}()
	// The job's monitor exists once Run has begun (on Postgres, has
	// taken the jobs over).
	for {
		active, _ := e.Active()
		if _, err := mon.Get(ctx, "job-bench"); err == nil && active {
			break
		}
		time.Sleep(time.Millisecond)
	}
	var toStart, toEnd []time.Duration
	b.ResetTimer()
	begin := time.Now()
	for range jobRuns {
		t0 := time.Now()
		if _, err := e.Trigger(ctx, "bench"); err != nil {
			b.Fatal(err)
		}
		if kind == "go" {
			toStart = append(toStart, (<-started).Sub(t0))
		}
		for e.List()[0].Status != jobsengine.StatusScheduled {
			time.Sleep(50 * time.Microsecond)
		}
		toEnd = append(toEnd, time.Since(t0))
	}
	elapsed := time.Since(begin)
	b.StopTimer()
	if kind == "go" {
		b.ReportMetric(pct(toStart, 50), "start-p50-ms")
		b.ReportMetric(pct(toStart, 99), "start-p99-ms")
	}
	b.ReportMetric(pct(toEnd, 50), "run-p50-ms")
	b.ReportMetric(pct(toEnd, 99), "run-p99-ms")
	b.ReportMetric(float64(jobRuns)/elapsed.Seconds(), "runs/s")
}

// pct returns the p-th percentile of ds, in milliseconds.
func pct(ds []time.Duration, p int) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return ms(s[min(len(s)-1, len(s)*p/100)])
}
