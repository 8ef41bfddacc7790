package bench_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkRunPings sends runs, a start ping and its finishing ping
// (?checkin_id=), from 64 clients, each to its own monitor, with no
// subscriber to the event stream and with one (a page open): a finished
// run's event is the check-in read back from the store once its round is
// written, which only a subscriber costs. It reports pings a second.
func BenchmarkRunPings(b *testing.B) {
	for _, watched := range []bool{false, true} {
		b.Run(fmt.Sprintf("subscriber=%v", watched), func(b *testing.B) {
			for range b.N {
				url, e := serve(b, b.TempDir())
				const clients, runs = 64, 150
				keys := create(b, e, clients, func(int) int { return 3600 }, func(int) int { return 60 })
				var events atomic.Int64
				var drained sync.WaitGroup
				if watched {
					ch, stop := e.Hub().Subscribe()
					defer stop()
					drained.Go(func() {
						for range ch {
							events.Add(1)
						}
					})
				}
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
				var errs atomic.Int64
				get := func(u string) string {
					resp, err := client.Get(u)
					if err != nil {
						errs.Add(1)
						return ""
					}
					defer resp.Body.Close()
					var out struct {
						CheckinID string `json:"checkin_id"`
					}
					data, _ := io.ReadAll(resp.Body)
					if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &out) != nil {
						errs.Add(1)
					}
					return out.CheckinID
				}
				var wg sync.WaitGroup
				start := time.Now()
				for c := range clients {
					wg.Go(func() {
						for range runs {
							id := get(url + "/ping/" + keys[c] + "/start")
							get(url + "/ping/" + keys[c] + "?checkin_id=" + id)
						}
					})
				}
				wg.Wait()
				elapsed := time.Since(start)
				if n := errs.Load(); n > 0 {
					b.Fatalf("%d pings failed", n)
				}
				b.ReportMetric(float64(2*clients*runs)/elapsed.Seconds(), "pings/s")
				// Each check-in's event (published after its answer).
				for deadline := time.Now().Add(10 * time.Second); watched && events.Load() < 2*clients*runs; time.Sleep(10 * time.Millisecond) {
					if time.Now().After(deadline) {
						b.Fatalf("%d events for %d check-ins", events.Load(), 2*clients*runs)
					}
				}
			}
		})
	}
}
