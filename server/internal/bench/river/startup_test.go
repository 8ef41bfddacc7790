package riverbench_test

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the processor time the process has spent, user and
// system.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// BenchmarkStartup starts a server with n idle jobs, from nothing (first:
// an empty database, the jobs' rows and monitors made) and again
// (restart: nothing changed), until it runs them; and river, with n
// periodic jobs of the same schedule, from an empty database (its schema
// migrated first) and again, until Start returns. The time is sec/op;
// cpu-s the processor time the benchmark's process spent in it (all its
// threads: on a machine shared with other work, the wall time grows with
// the load, the processor time much less); heap-MiB the live heap once
// started.
func BenchmarkStartup(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		for _, n := range []int{10_000, 100_000} {
			for _, start := range []string{"first", "restart"} {
				for _, impl := range []string{"fsmgen", "river"} {
					b.Run(fmt.Sprintf("db=%s/jobs=%d/start=%s/impl=%s", kind, n, start, impl), func(b *testing.B) {
						benchStartup(b, kind, n, start == "first", impl)
					})
				}
			}
		}
	}
}

func benchStartup(b *testing.B, kind string, n int, first bool, impl string) {
	b.StopTimer()
	defs, periodic := idleJobs(n), periodicJobs(n)
	var d database
	up := func() func() {
		if impl == "river" {
			r := startRiver(b, d, first, riverConfig(periodic, 100))
			return func() { r.stop(b) }
		}
		return startServer(b, d, defs, 100).stop
	}
	if !first {
		// The database a first start left.
		d = newDatabase(b, kind)
		if impl == "river" {
			startRiver(b, d, true, riverConfig(periodic, 100)).stop(b)
		} else {
			startServer(b, d, defs, 100).stop()
		}
	}
	for range b.N {
		if first {
			d = newDatabase(b, kind)
		}
		runtime.GC()
		cpu0 := cpuTime()
		b.StartTimer()
		stop := up()
		b.StopTimer()
		b.ReportMetric((cpuTime() - cpu0).Seconds(), "cpu-s")
		runtime.GC()
		var mem runtime.MemStats
		runtime.ReadMemStats(&mem)
		b.ReportMetric(float64(mem.HeapAlloc)/(1<<20), "heap-MiB")
		stop()
	}
}
