package riverbench_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	jobsengine "github.com/fsmgen/fsmgen/server/internal/jobengine"
	"github.com/fsmgen/fsmgen/server/jobs"
)

// burst is how many triggers arrive at once, and maxRunning how many runs
// go at once (the server's -jobs-max-running, river's MaxWorkers).
const (
	burst      = 2000
	maxRunning = 100
)

// BenchmarkBurst sends 2,000 triggers at once, each from a goroutine of
// its own, and waits until every run is recorded finished: on the server,
// a manual run of each of 2,000 Go jobs that return at once (each run
// checks in to its job's monitor, as in production); on river, 2,000
// inserts of a job whose worker returns at once, until river reports
// each completed. It reports the runs a second and the latency of the
// triggers' acknowledgements (the server's answer; river's Insert).
func BenchmarkBurst(b *testing.B) {
	for _, kind := range []string{"postgres", "sqlite"} {
		for _, impl := range []string{"fsmgen", "river"} {
			b.Run(fmt.Sprintf("db=%s/triggers=%d/impl=%s", kind, burst, impl), func(b *testing.B) {
				for range b.N {
					if impl == "river" {
						burstRiver(b, kind)
					} else {
						burstServer(b, kind)
					}
				}
			})
		}
	}
}

// fire calls trigger(i) for each of burst triggers, each from a goroutine
// of its own, and returns each one's latency.
func fire(b *testing.B, trigger func(i int) error) []time.Duration {
	lat := make([]time.Duration, burst)
	errs := make([]error, burst)
	var wg sync.WaitGroup
	for i := range burst {
		wg.Go(func() {
			t0 := time.Now()
			errs[i] = trigger(i)
			lat[i] = time.Since(t0)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return lat
}

// report reports the runs a second and the acknowledgements' latency.
func report(b *testing.B, elapsed time.Duration, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(burst)/elapsed.Seconds(), "runs/s")
	b.ReportMetric(float64(lat[len(lat)/2])/float64(time.Millisecond), "ack-p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100])/float64(time.Millisecond), "ack-p99-ms")
}

func burstServer(b *testing.B, kind string) {
	b.StopTimer()
	defs := make([]*jobs.Job, burst)
	for i, d := range idleJobs(burst) {
		d.Command, d.Func = nil, func(ctx context.Context) (string, error) { return "", nil }
		defs[i] = d
	}
	s := startServer(b, newDatabase(b, kind), defs, maxRunning)
	defer s.stop()
	ctx := context.Background()
	b.StartTimer()
	start := time.Now()
	lat := fire(b, func(i int) error {
		_, err := s.jobs.Trigger(ctx, defs[i].ID)
		return err
	})
	// Until every run is recorded finished.
	for deadline := time.Now().Add(5 * time.Minute); !allSucceeded(s.jobs.List()); {
		if time.Now().After(deadline) {
			b.Fatal("the runs do not end in 5 minutes")
		}
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	report(b, elapsed, lat)
}

// allSucceeded reports whether every job's last run succeeded.
func allSucceeded(views []*jobsengine.View) bool {
	for _, v := range views {
		if v.LastRun == nil || v.LastRun.Status != jobs.RunSucceeded {
			return false
		}
	}
	return true
}

func burstRiver(b *testing.B, kind string) {
	b.StopTimer()
	r := startRiver(b, newDatabase(b, kind), true, riverConfig(nil, maxRunning))
	defer r.stop(b)
	completed, unsubscribe := r.client.SubscribeConfig(&river.SubscribeConfig{ChanSize: 2 * burst, Kinds: []river.EventKind{river.EventKindJobCompleted}})
	defer unsubscribe()
	ctx := context.Background()
	b.StartTimer()
	start := time.Now()
	lat := fire(b, func(i int) error {
		_, err := r.client.Insert(ctx, benchArgs{N: i}, nil)
		return err
	})
	timeout := time.After(5 * time.Minute)
	for range burst {
		select {
		case <-completed:
		case <-timeout:
			b.Fatal("the jobs are not completed in 5 minutes")
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	report(b, elapsed, lat)
}
