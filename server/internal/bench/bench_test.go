// Package bench measures the server (make bench-server):
// durable pings a second and their latency through the real HTTP stack
// and SQLite (and run pings, a start and its finish, with a page's
// subscriber to the event stream and without); the start-up of 100,000 monitors (every deadline re-armed)
// and the memory they take; how late 100,000 monitors' misses are
// recorded; and the background jobs' overhead per run, from a trigger to
// the run starting. docs/performance.md writes the results up. Each benchmark is
// a whole scenario: run them with -benchtime=1x and -count.
package bench_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/server/internal/api"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/pgtest"
	"github.com/fsmgen/fsmgen/server/internal/store/sqlite"
)

// serve starts the real stack on a database in dir: the engine running,
// the API on a local HTTP server. It returns the server's URL and the
// engine.
func serve(b *testing.B, dir string) (string, *monitorengine.Engine) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := sqlite.Open(ctx, filepath.Join(dir, "s.db"))
	if err != nil {
		b.Fatal(err)
	}
	e, err := monitorengine.New(ctx, monitorengine.Config{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { e.Run(ctx) })
	srv := httptest.NewServer(api.New(api.Config{Engine: e, Store: st, PingRate: 1e9}))
	b.Cleanup(func() {
		srv.Close()
		cancel()
		wg.Wait()
		st.Close()
	})
	return srv.URL, e
}

// create makes n interval monitors through the engine, many at a time;
// interval(i) and margin(i) give each one's settings.
func create(b *testing.B, e *monitorengine.Engine, n int, interval, margin func(i int) int) []string {
	b.Helper()
	return createNamed(b, e, "m", n, interval, margin)
}

// createNamed is create, the monitors' slugs starting with prefix.
func createNamed(b *testing.B, e *monitorengine.Engine, prefix string, n int, interval, margin func(i int) int) []string {
	b.Helper()
	keys, err := makeMonitors(e, prefix, n, interval, margin)
	if err != nil {
		b.Fatal(err)
	}
	return keys
}

// makeMonitors is createNamed for any goroutine: it returns the first
// error instead of failing the benchmark.
func makeMonitors(e *monitorengine.Engine, prefix string, n int, interval, margin func(i int) int) ([]string, error) {
	keys := make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range 256 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				slug, sec, m := fmt.Sprintf("%s%06d", prefix, i), interval(i), margin(i)
				v, err := e.Create(context.Background(), &monitorengine.Input{Slug: &slug, Schedule: &monitorengine.Schedule{Type: "interval", Seconds: sec}, CheckinMarginSeconds: &m})
				if err != nil {
					failed.Store(err)
					return
				}
				keys[i] = v.PingKey
			}
		})
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		return nil, err
	}
	return keys, nil
}

// BenchmarkDurablePings sends pings from 64 clients over keep-alive
// connections to 100 monitors; each 200 means the check-in is synced to
// disk. It reports pings a second and the latency's median and 99th
// percentile.
func BenchmarkDurablePings(b *testing.B) {
	for range b.N {
		url, e := serve(b, b.TempDir())
		keys := create(b, e, 100, func(int) int { return 3600 }, func(int) int { return 60 })
		const clients, perClient = 64, 500
		lat, elapsed, err := pingLoad(clients, perClient, func(c, i int) string {
			return url + "/ping/" + keys[(c*perClient+i)%len(keys)]
		})
		if err != nil {
			b.Fatal(err)
		}
		reportPings(b, lat, elapsed)
	}
}

// pingLoad sends perClient GETs from each of clients goroutines over
// keep-alive connections, client c's i-th to url(c, i), and returns the
// latency of each answered 200, sorted, and how long they all took; an
// error when any failed or was answered otherwise.
func pingLoad(clients, perClient int, url func(c, i int) string) ([]time.Duration, time.Duration, error) {
	lat := make([][]time.Duration, clients)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	var errs atomic.Int64
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			for i := range perClient {
				t0 := time.Now()
				resp, err := client.Get(url(c, i))
				if err != nil {
					errs.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errs.Add(1)
					continue
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	if n := errs.Load(); n > 0 {
		return all, elapsed, fmt.Errorf("%d pings failed", n)
	}
	return all, elapsed, nil
}

// reportPings reports the pings a second and the median and 99th
// percentile of their latencies lat (sorted).
func reportPings(b *testing.B, lat []time.Duration, elapsed time.Duration) {
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "pings/s")
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
}

// reportStartup reports how long e took to start, the heap it holds, and
// the timers it armed.
func reportStartup(b *testing.B, elapsed time.Duration, e *monitorengine.Engine) {
	runtime.GC()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	b.ReportMetric(elapsed.Seconds(), "startup-s")
	b.ReportMetric(float64(mem.HeapAlloc)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(e.Timers()), "timers")
}

// reportLate reports the median, 99th percentile and largest of how late
// the misses were published.
func reportLate(b *testing.B, late []time.Duration) {
	slices.Sort(late)
	b.ReportMetric(ms(late[len(late)/2]), "p50-late-ms")
	b.ReportMetric(ms(late[len(late)*99/100]), "p99-late-ms")
	b.ReportMetric(ms(late[len(late)-1]), "max-late-ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// prepared is a database of 100,000 monitors (interval 30 to 89 minutes,
// so that none is due while the benchmark runs), made once.
var prepared struct {
	once sync.Once
	dir  string
	err  error
}

func prepare(b *testing.B) string {
	prepared.once.Do(func() {
		prepared.dir, prepared.err = os.MkdirTemp("", "fsmgen-bench-")
		if prepared.err != nil {
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		st, err := sqlite.Open(ctx, filepath.Join(prepared.dir, "s.db"))
		if err != nil {
			prepared.err = err
			return
		}
		defer st.Close()
		e, err := monitorengine.New(ctx, monitorengine.Config{Store: st})
		if err != nil {
			prepared.err = err
			return
		}
		var wg sync.WaitGroup
		wg.Go(func() { e.Run(ctx) })
		create(b, e, 100_000, func(i int) int { return 1800 + 60*(i%60) }, func(int) int { return 60 })
		cancel()
		wg.Wait()
	})
	if prepared.err != nil {
		b.Fatal(prepared.err)
	}
	return prepared.dir
}

// BenchmarkStartup100k loads 100,000 monitors and re-arms their timers,
// as the server does when it starts, and reports the heap they hold.
func BenchmarkStartup100k(b *testing.B) {
	dir := prepare(b)
	runtime.GC()
	b.ResetTimer()
	for range b.N {
		ctx := context.Background()
		start := time.Now()
		st, err := sqlite.Open(ctx, filepath.Join(dir, "s.db"))
		if err != nil {
			b.Fatal(err)
		}
		e, err := monitorengine.New(ctx, monitorengine.Config{Store: st})
		if err != nil {
			b.Fatal(err)
		}
		reportStartup(b, time.Since(start), e)
		runtime.KeepAlive(e)
		st.Close()
	}
}

// TestMain removes the prepared database once every benchmark has run,
// and stops the Postgres server, durable (fsync on, as in production),
// which the benchmarks on Postgres share.
func TestMain(m *testing.M) {
	code := pgtest.Main(m, pgtest.Options{Durable: true})
	if prepared.dir != "" {
		os.RemoveAll(prepared.dir)
	}
	os.Exit(code)
}

// BenchmarkMisses100k makes 100,000 monitors whose runs are due 60 to 90
// seconds later and never check in, and measures how late each miss is
// published after its deadline (the end of the margin).
func BenchmarkMisses100k(b *testing.B) {
	const n = 100_000
	for range b.N {
		_, e := serve(b, b.TempDir())
		// Each monitor's run is due its interval after its creation; the
		// margins spread the deadlines over 30 seconds.
		create(b, e, n, func(int) int { return 60 }, func(i int) int { return rand.IntN(30) })
		events, stop := e.Hub().Subscribe()
		var late []time.Duration
		timeout := time.After(3 * time.Minute)
		for len(late) < n {
			select {
			case msg, ok := <-events:
				if !ok {
					b.Fatal("the hub dropped the subscriber: it fell behind")
				}
				if at, ok := missedAt(msg); ok {
					late = append(late, time.Since(at))
				}
			case <-timeout:
				b.Fatalf("%d of %d misses in 3 minutes", len(late), n)
			}
		}
		stop()
		reportLate(b, late)
	}
}
