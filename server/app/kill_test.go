package app

// These tests build the server and run it as a process: killed with
// SIGKILL at random moments and started again on the same database, under
// load, stopped with SIGTERM while requests are in flight.

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
)

// TestKillRestartCycles kills the server with SIGKILL at random moments
// (before, at and after its monitors' deadlines, with runs in progress),
// keeps it down for a while, and starts it again on the same database.
// In the end every run each monitor expected is there exactly once: its
// missed check-in recorded at the end of its margin, whether the server
// was up then or not; every run started times out at its maximum
// runtime, once.
func TestKillRestartCycles(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills and restarts the server for half a minute")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	const (
		margin     = time.Second
		maxRuntime = 2 * time.Second
	)
	mons := []struct {
		slug     string
		interval time.Duration
		starts   bool // gets start pings
	}{
		{"a", 2 * time.Second, false},
		{"b", 3 * time.Second, false},
		{"c", 2 * time.Second, true},
		{"d", 3 * time.Second, true},
	}
	db := newDB(t)
	p := launch(t, db)
	tok := p.token()
	created := map[string]*monitorengine.View{}
	for _, m := range mons {
		var v monitorengine.View
		p.call(tok, "POST", "/api/crons/monitors", fmt.Sprintf(`{"slug": %q, "schedule": {"type": "interval", "seconds": %d}, "checkin_margin_seconds": 1, "max_runtime_seconds": 2}`,
			m.slug, int(m.interval/time.Second)), http.StatusCreated, &v)
		created[m.slug] = &v
	}

	started := map[string][]string{} // acknowledged starts, by monitor
	client := &http.Client{Timeout: 30 * time.Second}
	for cycle := range 8 {
		// Up for up to 2.5 s, a start ping somewhere in it (every other
		// cycle just before the kill: the run is in progress when it
		// comes).
		up := time.Duration(rng.IntN(2500)) * time.Millisecond
		before := time.Duration(rng.Int64N(int64(up) + 1))
		if cycle%2 == 1 {
			before = max(up-time.Duration(rng.IntN(200))*time.Millisecond, 0)
		}
		time.Sleep(before)
		m := mons[2+rng.IntN(2)]
		status, id, err := pingServed(client, p.url+"/ping/"+created[m.slug].PingKey+"/start")
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status)
		started[m.slug] = append(started[m.slug], id)
		time.Sleep(up - before)
		p.kill9()
		p.noErrors()
		// Down for up to 2 s: deadlines pass.
		down := time.Duration(rng.IntN(2000)) * time.Millisecond
		t.Logf("cycle %d: up %s (start of %s at %s), down %s", cycle, up, m.slug, before, down)
		time.Sleep(down)
		p = launch(t, db)
	}

	// Every run started times out (the last ones at most 2 s after the
	// kill), and the monitors are missed from then on.
	require.Eventually(t, func() bool {
		for _, m := range mons {
			for _, c := range p.checkins(tok, m.slug) {
				if c.Status == monitorengine.CheckinInProgress {
					return false
				}
			}
		}
		return true
	}, 60*time.Second, 50*time.Millisecond, "a run is still in progress")

	for _, m := range mons {
		t.Run(m.slug, func(t *testing.T) {
			v, list := p.snapshot(tok, m.slug)
			var missed int
			ids := map[string]bool{}
			for i, c := range list {
				assert.False(t, ids[c.ID], "check-in %s twice", c.ID)
				ids[c.ID] = true
				// next is the run the monitor expected after the
				// check-in before this one: a missed check-in is that
				// run's, and a start comes before its margin ends
				// (else its miss comes first). No run is missed twice,
				// none is skipped.
				var next time.Time
				prev := "none"
				switch {
				case i == 0:
					next = created[m.slug].CreatedAt.Add(m.interval)
				case list[i-1].Status == monitorengine.CheckinMissed:
					prev = "missed"
					next = list[i-1].ExpectedAt.Add(m.interval)
				case list[i-1].Status == monitorengine.CheckinTimeout:
					prev = "timeout" // the run's end
					next = list[i-1].FinishedAt.Add(m.interval)
				default:
					prev = list[i-1].Status // superseded: by this start
					assert.NotEqual(t, monitorengine.CheckinMissed, c.Status, "check-in %d: a miss while a run is in progress", i)
				}
				switch c.Status {
				case monitorengine.CheckinMissed:
					missed++
					assert.Equal(t, monitorengine.SourceSystem, c.Source)
					require.NotNil(t, c.ExpectedAt)
					assert.Equal(t, next, *c.ExpectedAt, "check-in %d: the run after the %s one", i, prev)
					assert.Equal(t, c.ExpectedAt.Add(margin), c.CreatedAt, "check-in %d: missed at the end of its margin", i)
				case monitorengine.CheckinTimeout, monitorengine.CheckinError:
					// A start.
					assert.Equal(t, monitorengine.SourcePing, c.Source)
					if !next.IsZero() {
						assert.True(t, c.CreatedAt.Before(next.Add(margin)), "check-in %d: a start at %s after the run of %s was missed, unrecorded", i, c.CreatedAt, next)
					}
					require.NotNil(t, c.FinishedAt)
					require.NotNil(t, c.DurationMS)
					if c.Status == monitorengine.CheckinTimeout {
						assert.Equal(t, c.CreatedAt.Add(maxRuntime), *c.FinishedAt, "check-in %d: timed out at its maximum runtime", i)
						assert.EqualValues(t, maxRuntime.Milliseconds(), *c.DurationMS)
						break
					}
					require.NotNil(t, c.Output)
					assert.Equal(t, "superseded by a new start", *c.Output)
					require.Less(t, i+1, len(list), "superseded by a start")
					assert.Equal(t, list[i+1].CreatedAt, *c.FinishedAt, "superseded by the next start")
				default:
					assert.Fail(t, "a check-in "+c.Status, "check-in %d", i)
				}
			}
			for _, id := range started[m.slug] {
				assert.True(t, ids[id], "the start %s was acknowledged and is lost", id)
			}
			if !m.starts {
				assert.Positive(t, missed)
				assert.Len(t, list, missed, "nothing but missed runs")
			}

			// The monitor expects the run after the last one recorded.
			last := list[len(list)-1]
			require.NotNil(t, v.NextExpectedAt)
			switch last.Status {
			case monitorengine.CheckinMissed:
				assert.Equal(t, monitorengine.HealthMissed, v.Health)
				assert.Equal(t, last.ExpectedAt.Add(m.interval), *v.NextExpectedAt)
			case monitorengine.CheckinTimeout:
				assert.Contains(t, []string{monitorengine.HealthTimeout, monitorengine.HealthLate}, v.Health, "timed out, then late when the next run is due")
				assert.Equal(t, last.FinishedAt.Add(m.interval), *v.NextExpectedAt)
			}
			t.Logf("%s: %d check-ins, %d missed, %d starts", m.slug, len(list), missed, len(started[m.slug]))
		})
	}
	p.noErrors()
}

// TestPingLoadKill pings a few monitors as fast as several clients can
// while the server is killed with SIGKILL and started again: every ping
// it acknowledged is stored, and no check-in is stored twice.
func TestPingLoadKill(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("loads and kills the server")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	db := newDB(t)
	p := launch(t, db, "-ping-rate", "1000000")
	tok := p.token()
	slugs := []string{"x", "y", "z"}
	keys := map[string]string{}
	for _, s := range slugs {
		var v monitorengine.View
		p.call(tok, "POST", "/api/crons/monitors", `{"slug": "`+s+`", "schedule": {"type": "interval", "seconds": 3600}}`, http.StatusCreated, &v)
		keys[s] = v.PingKey
	}

	type ack struct {
		slug, kind, id string
		status         string // what a finishing ping records; "" for a start
	}
	const maxAcks = 15000 // each monitor's check-ins stay under the list's limit of 10000
	var (
		base    atomic.Pointer[string]
		acked   atomic.Int64
		stop    = make(chan struct{})
		wg      sync.WaitGroup
		mu      sync.Mutex
		acks    []ack
		refused []string
	)
	base.Store(&p.url)
	for g := range 6 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			runs := map[string]string{} // this client's last start, by monitor
			for acked.Load() < maxAcks {
				select {
				case <-stop:
					return
				default:
				}
				slug := slugs[rng.IntN(len(slugs))]
				kind, path, want := "ok", "", monitorengine.CheckinOK
				switch rng.IntN(6) {
				case 0:
					kind, path, want = "fail", "/fail", monitorengine.CheckinError
				case 1:
					kind, path, want = "start", "/start", ""
				case 2:
					code := rng.IntN(3)
					kind, path = "exit", "/"+strconv.Itoa(code)
					if code != 0 {
						want = monitorengine.CheckinError
					}
				case 3:
					if runs[slug] != "" {
						kind, path = "finish", "?checkin_id="+runs[slug]
					}
				}
				status, id, err := ping(client, *base.Load()+"/ping/"+keys[slug]+path)
				switch {
				case err != nil:
					time.Sleep(5 * time.Millisecond) // killed: wait for the next one
				case status == http.StatusOK:
					acked.Add(1)
					mu.Lock()
					acks = append(acks, ack{slug, kind, id, want})
					mu.Unlock()
					if kind == "start" {
						runs[slug] = id
					} else if kind == "finish" {
						delete(runs, slug)
					}
				case status == http.StatusConflict && kind == "finish":
					delete(runs, slug) // superseded by another client's start, or closed by its ping
				default:
					mu.Lock()
					refused = append(refused, fmt.Sprintf("%s %s: %d", kind, slug, status))
					mu.Unlock()
				}
			}
		})
	}
	rng := rand.New(rand.NewPCG(seed, 100))
	var before int64
	// servedAgain waits until the server (started again) acknowledged
	// pings since the last kill.
	servedAgain := func(what string) {
		require.Eventually(t, func() bool { return acked.Load() > before }, 60*time.Second, time.Millisecond, "%s: no ping acknowledged since the last kill", what)
	}
	for kill := range 3 {
		servedAgain(fmt.Sprintf("kill %d", kill))
		// Then the kill, at a moment of the load up to a second later.
		time.Sleep(time.Duration(rng.IntN(1000)) * time.Millisecond)
		p.kill9()
		n := acked.Load()
		require.Less(t, n, int64(maxAcks), "kill %d: under load", kill)
		before = n
		t.Logf("kill %d after %d acknowledged pings", kill, n)
		p = launch(t, db, "-ping-rate", "1000000")
		base.Store(&p.url)
	}
	servedAgain("after the last kill")
	close(stop)
	wg.Wait()
	assert.Empty(t, refused, "pings refused")
	require.Greater(t, len(acks), 100, "the server was under load")

	all := map[string]monitorengine.CheckinView{}
	stored := map[string]map[string]monitorengine.CheckinView{}
	for _, s := range slugs {
		stored[s] = map[string]monitorengine.CheckinView{}
		for _, c := range p.checkins(tok, s) {
			_, twice := all[c.ID]
			assert.False(t, twice, "check-in %s stored twice", c.ID)
			all[c.ID] = c
			stored[s][c.ID] = c
		}
	}
	lost := 0
	finished := map[string]bool{}
	for _, a := range acks {
		c, ok := stored[a.slug][a.id]
		if !ok {
			lost++
			continue
		}
		if a.kind != "start" {
			// The ping recorded a check-in, or closed the run in
			// progress, with its status; nothing closes it again.
			assert.Equal(t, a.status, c.Status, "check-in %s (%s)", a.id, a.kind)
			assert.False(t, finished[a.id], "check-in %s finished twice", a.id)
			finished[a.id] = true
		}
	}
	assert.Zero(t, lost, "acknowledged pings lost, of %d", len(acks))
	t.Logf("%d pings acknowledged, %d check-ins stored", len(acks), len(all))
	p.noErrors()
}
