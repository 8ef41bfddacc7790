package riverbench_test

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"
)

// The profiles of the timed starts alone (the setup, a first start
// before a restart, left out): -startup.cpuprofile writes their processor
// profile, -startup.memprofile the allocations they made (pprof's allocs
// profile taken after them, with -diff_base the one taken before, written
// beside it as FILE.base). Run one benchmark at a time with them.
var (
	startCPUProfile = flag.String("startup.cpuprofile", "", "write the processor profile of the timed starts to `file`")
	startMemProfile = flag.String("startup.memprofile", "", "write the allocations of the timed starts to `file` (and those before them to file.base)")
)

// profileStarts starts the profiles the flags ask for, and returns what
// stops them.
func profileStarts(b *testing.B) func() {
	b.Helper()
	write := func(path string) {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
	}
	if *startMemProfile != "" {
		runtime.MemProfileRate = 64 << 10
		write(*startMemProfile + ".base")
	}
	if *startCPUProfile != "" {
		f, err := os.Create(*startCPUProfile)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		return func() {
			pprof.StopCPUProfile()
			f.Close()
			if *startMemProfile != "" {
				write(*startMemProfile)
			}
		}
	}
	return func() {
		if *startMemProfile != "" {
			write(*startMemProfile)
		}
	}
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

// BenchmarkStartup starts a server with n idle jobs, from nothing (first:
// an empty database, the jobs' rows and monitors made) and again
// (restart: nothing changed), until it runs them; and river, with n
// periodic jobs of the same schedule, from an empty database (its schema
// migrated first) and again, until Start returns. The time is sec/op;
// cpu-s the processor time the benchmark's process spent in it (all its
// threads: on a machine shared with other work, the wall time grows with
// the load, the processor time much less); heap-MiB the live heap once
// started; for the server, open-s, monitors-s, jobs-s and ready-s the
// wall time of each step of the start (see startServer).
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
	var took phases
	up := func() func() {
		if impl == "river" {
			r := startRiver(b, d, first, riverConfig(periodic, 100))
			return func() { r.stop(b) }
		}
		s := startServer(b, d, defs, 100)
		took = s.phases
		return s.stop
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
		stopProfiles := profileStarts(b)
		b.StartTimer()
		stop := up()
		b.StopTimer()
		stopProfiles()
		b.ReportMetric((cpuTime() - cpu0).Seconds(), "cpu-s")
		if impl == "fsmgen" {
			// The steps of the start, as in cmd/server: opening the
			// store, the monitors engine's New (on SQLite it loads every
			// monitor), the jobs engine's New (on SQLite it loads every
			// job) and its Run until Ready (the jobs' monitors made; on
			// Postgres the shards claimed, their monitors and the jobs
			// loaded).
			b.ReportMetric(took.open.Seconds(), "open-s")
			b.ReportMetric(took.monitors.Seconds(), "monitors-s")
			b.ReportMetric(took.jobs.Seconds(), "jobs-s")
			b.ReportMetric(took.ready.Seconds(), "ready-s")
		}
		runtime.GC()
		var mem runtime.MemStats
		runtime.ReadMemStats(&mem)
		b.ReportMetric(float64(mem.HeapAlloc)/(1<<20), "heap-MiB")
		stop()
	}
}
