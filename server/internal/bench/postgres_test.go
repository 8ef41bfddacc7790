package bench_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/server/internal/api"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/pgtest"
	"github.com/fsmgen/fsmgen/server/internal/store/postgres"
)

// instance is one server of several on a Postgres database: its engine
// running, its API on a local HTTP server.
type instance struct {
	url    string
	engine *monitorengine.Engine
}

// serveShared starts n instances on the database at url; the first takes
// every shard, the others their share as they come.
func serveShared(b *testing.B, url string, n int) []*instance {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var out []*instance
	var closers []func()
	for i := range n {
		st, err := postgres.Open(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewUnstartedServer(nil)
		addr := "http://" + srv.Listener.Addr().String()
		e, err := monitorengine.New(ctx, monitorengine.Config{Store: st, Instance: string(rune('a' + i)), Addr: addr})
		if err != nil {
			b.Fatal(err)
		}
		wg.Go(func() { e.Run(ctx) })
		srv.Config.Handler = api.New(api.Config{Engine: e, PingRate: 1e9})
		srv.Start()
		out = append(out, &instance{url: srv.URL, engine: e})
		closers = append(closers, func() { srv.Close(); st.Close() })
	}
	b.Cleanup(func() {
		cancel()
		wg.Wait()
		for _, c := range closers {
			c()
		}
	})
	// Until they share the shards.
	for deadline := time.Now().Add(time.Minute); ; {
		total, all := 0, true
		for _, in := range out {
			held, _ := in.engine.Shards()
			total += held
			all = all && held > 0
		}
		if all && total == 64 {
			return out
		}
		if time.Now().After(deadline) {
			b.Fatal("the instances do not share the shards")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// BenchmarkPostgresDurablePings is BenchmarkDurablePings on two instances
// sharing one Postgres: 64 clients, each sending to either instance, half
// the pings forwarded to the instance that runs their monitor; each 200
// means the check-in is committed.
func BenchmarkPostgresDurablePings(b *testing.B) {
	for range b.N {
		ins := serveShared(b, pgtest.DB(b), 2)
		var keys []string
		for i, in := range ins {
			keys = append(keys, createNamed(b, in.engine, string(rune('a'+i)), 50, func(int) int { return 3600 }, func(int) int { return 60 })...)
		}
		const clients, perClient = 64, 300
		lat, elapsed, err := pingLoad(clients, perClient, func(c, i int) string {
			return ins[(c+i)%2].url + "/ping/" + keys[(c*perClient+i)%len(keys)]
		})
		if err != nil {
			b.Fatal(err)
		}
		reportPings(b, lat, elapsed)
	}
}

// BenchmarkPostgresStartup100k starts an instance on a database of
// 100,000 monitors, which it runs all (it claims every shard, loads their
// monitors and re-arms their timers), and reports the heap they hold;
// then a second instance, which takes half of them over from the first.
func BenchmarkPostgresStartup100k(b *testing.B) {
	url := pgtest.DB(b)
	prepareShared(b, url, 100_000)
	runtime.GC()
	b.ResetTimer()
	for i := range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		start := time.Now()
		st, err := postgres.Open(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		e, err := monitorengine.New(ctx, monitorengine.Config{Store: st, Instance: "start" + string(rune('a'+i)), Addr: "http://127.0.0.1:1"})
		if err != nil {
			b.Fatal(err)
		}
		reportStartup(b, time.Since(start), e)
		// It leaves: the next starts on free leases.
		var wg sync.WaitGroup
		wg.Go(func() { e.Run(ctx) })
		cancel()
		wg.Wait()
		st.Close()
	}
}

// prepareShared makes n monitors (interval 30 to 89 minutes, so that none
// is due while the benchmark runs) through an instance that leaves once
// they are made.
func prepareShared(b *testing.B, url string, n int) {
	ctx, cancel := context.WithCancel(context.Background())
	st, err := postgres.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	e, err := monitorengine.New(ctx, monitorengine.Config{Store: st, Instance: "prepare", Addr: "http://127.0.0.1:1"})
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { e.Run(ctx) })
	create(b, e, n, func(i int) int { return 1800 + 60*(i%60) }, func(int) int { return 60 })
	cancel()
	wg.Wait()
}

// BenchmarkPostgresMisses100k is BenchmarkMisses100k on two instances
// sharing one Postgres, each running half the monitors: how late each
// miss is published after its deadline.
func BenchmarkPostgresMisses100k(b *testing.B) {
	const n = 100_000
	for range b.N {
		ins := serveShared(b, pgtest.DB(b), 2)
		var wg sync.WaitGroup
		errs := make([]error, len(ins))
		for i, in := range ins {
			wg.Go(func() {
				_, errs[i] = makeMonitors(in.engine, string(rune('a'+i)), n/2, func(int) int { return 60 }, func(i int) int { return rand.IntN(30) })
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			b.Fatal(err)
		}
		var mu sync.Mutex
		var late []time.Duration
		var readers sync.WaitGroup
		var dropped atomic.Bool
		timeout := time.After(3 * time.Minute)
		stopAll := make(chan struct{})
		for _, in := range ins {
			events, stop := in.engine.Hub().Subscribe()
			readers.Go(func() {
				defer stop()
				for {
					select {
					case msg, ok := <-events:
						if !ok {
							dropped.Store(true)
							return
						}
						if at, ok := missedAt(msg); ok {
							mu.Lock()
							late = append(late, time.Since(at))
							mu.Unlock()
						}
					case <-stopAll:
						return
					}
				}
			})
		}
		for {
			mu.Lock()
			got := len(late)
			mu.Unlock()
			if got >= n {
				break
			}
			if dropped.Load() {
				close(stopAll)
				readers.Wait()
				b.Fatalf("the hub dropped a subscriber (it fell behind) after %d of %d misses", got, n)
			}
			select {
			case <-timeout:
				close(stopAll)
				readers.Wait()
				b.Fatalf("%d of %d misses in 3 minutes", got, n)
			case <-time.After(100 * time.Millisecond):
			}
		}
		close(stopAll)
		readers.Wait()
		reportLate(b, late)
	}
}
