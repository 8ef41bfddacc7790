package app

// The tests of an instance that stops answering while it holds leases on
// Postgres: frozen with SIGSTOP (a stopped VM, a long pause) under ping
// load, and cut from the database while it runs (its renewals blocked by
// a proxy that stops forwarding).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/pgtest"
)

// freeze stops the server with SIGSTOP; thaw lets it go on (SIGCONT).
func (p *proc) freeze() { p.t.Helper(); require.NoError(p.t, p.cmd.Process.Signal(syscall.SIGSTOP)) }
func (p *proc) thaw()   { p.t.Helper(); require.NoError(p.t, p.cmd.Process.Signal(syscall.SIGCONT)) }

// standDownRE matches the lines a server logs when it stops running
// shards it may no longer hold.
var standDownRE = regexp.MustCompile(`(?m)msg="(leases not renewed in time[^"]*|lost leases)"`)

// standDowns counts the lines a server logged so far where it stopped
// running shards it may no longer hold.
func (p *proc) standDowns() int { return len(standDownRE.FindAllString(p.stderr.String(), -1)) }

// sharing waits until both servers run monitors, 64 shards between them.
func sharing(t *testing.T, a, b *proc, within time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool {
		na, nb := a.shards(), b.shards()
		return na > 0 && nb > 0 && na+nb == 64
	}, within, 20*time.Millisecond, "the instances share the shards")
}

// pingLoad pings monitors through two servers from several clients until
// stopped, recording what each ping got.
type pingLoad struct {
	mu    sync.Mutex
	acks  map[string]string // check-in id → monitor
	fails []failedPing      // 503s
	stop  chan struct{}
	wg    sync.WaitGroup
}

// failedPing is a ping answered 503.
type failedPing struct {
	via  string
	sent time.Time
	code string
}

// startPings starts clients pinging keys (slug → key) through the servers,
// each ping through one of them, as fast as they answer.
func startPings(t *testing.T, seed uint64, keys map[string]string, servers ...*proc) *pingLoad {
	l := &pingLoad{acks: map[string]string{}, stop: make(chan struct{})}
	slugs := slices.Sorted(maps.Keys(keys))
	for g := range 4 {
		l.wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			// A frozen server does not answer: the client gives up.
			client := &http.Client{Timeout: time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				slug := slugs[rng.IntN(len(slugs))]
				via := servers[rng.IntN(len(servers))]
				sent := time.Now()
				resp, err := client.Get(via.url + "/ping/" + keys[slug])
				if err != nil {
					continue
				}
				var body struct {
					CheckinID string `json:"checkin_id"`
					Code      string `json:"code"`
				}
				decodeErr := jsonDecode(resp, &body)
				l.mu.Lock()
				switch {
				case resp.StatusCode == http.StatusOK && decodeErr == nil && body.CheckinID != "":
					l.acks[body.CheckinID] = slug
				case resp.StatusCode == http.StatusServiceUnavailable:
					l.fails = append(l.fails, failedPing{via.addr, sent, body.Code})
				default:
					t.Errorf("ping %s through %s: %d %s (%v)", slug, via.addr, resp.StatusCode, body.Code, decodeErr)
				}
				l.mu.Unlock()
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	return l
}

// jsonDecode reads an answer's body into out, and closes it.
func jsonDecode(resp *http.Response, out any) error {
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// end stops the clients.
func (l *pingLoad) end() {
	close(l.stop)
	l.wg.Wait()
}

// failedSince returns the 503s of pings sent through via from since to
// until.
func (l *pingLoad) failedSince(via *proc, since, until time.Time) []failedPing {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []failedPing
	for _, f := range l.fails {
		if f.via == via.addr && !f.sent.Before(since) && f.sent.Before(until) {
			out = append(out, f)
		}
	}
	return out
}

// lastMisses returns, for each monitor whose slug starts with prefix, the
// expected time of its last missed run recorded (zero: none).
func lastMisses(t *testing.T, db *pgx.Conn, prefix string) map[string]time.Time {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT m.slug, coalesce(max(c.expected_at), 'epoch') FROM monitors m
		LEFT JOIN checkins c ON c.monitor_id = m.id AND c.status = 'missed'
		WHERE m.slug LIKE $1 || '%' GROUP BY m.slug`, prefix)
	require.NoError(t, err)
	out := map[string]time.Time{}
	for rows.Next() {
		var slug string
		var at time.Time
		require.NoError(t, rows.Scan(&slug, &at))
		out[slug] = at
	}
	require.NoError(t, rows.Err())
	return out
}

// TestFrozenInstance freezes one of two servers (SIGSTOP) for longer than
// its lease while clients ping monitors through both, ten times in a row,
// the two in turn: within the lease (and a margin) of the freeze the other
// runs every shard, answers every ping, and has recorded the runs the
// frozen one's monitors missed; woken (SIGCONT), the frozen one stands
// down and writes nothing: no ping it acknowledged is lost, no check-in or
// missed run is recorded twice.
func TestFrozenInstance(t *testing.T) {
	if pgtest.OnPostgres() {
		t.Skip("runs on Postgres in the first run already")
	}
	if testing.Short() {
		t.Skip("freezes servers under load for most of a minute")
	}
	const (
		lease    = 2 * time.Second
		margin   = time.Second // the claim, the load of the monitors, the round that fires their timers
		interval = time.Second // of the monitors that miss their runs
		cycles   = 10
	)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	ctx := context.Background()
	url := pgtest.DB(t)
	args := []string{"-lease", lease.String(), "-ping-rate", "1000000"}
	a := launch(t, url, args...)
	tok := a.token()
	b := launchShared(t, url, false, args...)
	sharing(t, a, b, 20*time.Second)
	db, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer db.Close(ctx)

	// A monitor on every shard that misses a run every second (after a
	// first ping), and a few that clients ping.
	for i := range 64 {
		via := []*proc{a, b}[i%2]
		var v monitorengine.View
		via.call(tok, "POST", "/api/crons/monitors", fmt.Sprintf(`{"slug": "silent-%02d", "schedule": {"type": "interval", "seconds": %d}, "checkin_margin_seconds": 0}`, i, int(interval/time.Second)), http.StatusCreated, &v)
		status, _, err := pingServed(http.DefaultClient, via.url+"/ping/"+v.PingKey)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status)
	}
	var covered int
	require.NoError(t, db.QueryRow(ctx, `SELECT count(DISTINCT shard) FROM monitors WHERE slug LIKE 'silent-%'`).Scan(&covered))
	require.Equal(t, 64, covered, "a silent monitor on every shard")
	keys := map[string]string{}
	for i := range 8 {
		var v monitorengine.View
		slug := fmt.Sprintf("pinged-%d", i)
		[]*proc{a, b}[i%2].call(tok, "POST", "/api/crons/monitors", `{"slug": "`+slug+`", "schedule": {"type": "interval", "seconds": 3600}}`, http.StatusCreated, &v)
		keys[slug] = v.PingKey
	}
	load := startPings(t, seed, keys, a, b)
	stopped := false
	defer func() {
		if !stopped {
			load.end()
		}
	}()

	var took []time.Duration
	for cycle := range cycles {
		frozen, live := a, b
		if cycle%2 == 1 {
			frozen, live = b, a
		}
		sharing(t, a, b, 15*time.Second)
		time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond) // at any moment of its rounds
		downs := frozen.standDowns()
		frozen.freeze()
		at := time.Now()

		// The live one takes every shard over within the lease.
		require.Eventually(t, func() bool { return live.shards() == 64 }, lease+margin+5*time.Second, 10*time.Millisecond,
			"cycle %d: the live instance takes every shard over", cycle)
		owned := time.Now()
		took = append(took, owned.Sub(at))
		assert.Less(t, owned.Sub(at), lease+margin, "cycle %d: taken over within the lease", cycle)
		// The runs missed during the freeze are recorded.
		require.Eventually(t, func() bool {
			for _, last := range lastMisses(t, db, "silent-") {
				if last.Before(at) {
					return false
				}
			}
			return true
		}, margin, 10*time.Millisecond, "cycle %d: every shard's missed runs are recorded after the takeover", cycle)
		// Every monitor answers through the live one, at once.
		for slug, key := range keys {
			status, id, err := ping(http.DefaultClient, live.url+"/ping/"+key)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, status, "cycle %d: %s pinged through the live instance", cycle, slug)
			load.mu.Lock()
			load.acks[id] = slug
			load.mu.Unlock()
		}
		woken := time.Now()
		assert.Empty(t, load.failedSince(live, owned, woken), "cycle %d: pings through the live instance once it took over", cycle)
		frozen.thaw()
		require.Eventually(t, func() bool { return frozen.standDowns() > downs }, 10*time.Second, 10*time.Millisecond,
			"cycle %d: the woken instance stands down", cycle)
	}
	sharing(t, a, b, 15*time.Second)
	load.end()
	stopped = true
	t.Logf("every shard taken over %v after the freeze", took)

	// Every ping acknowledged is stored, once.
	stored := map[string]string{}
	for slug := range keys {
		for _, c := range b.checkins(tok, slug) {
			_, twice := stored[c.ID]
			assert.False(t, twice, "check-in %s stored twice", c.ID)
			stored[c.ID] = slug
		}
	}
	lost := 0
	for id, slug := range load.acks {
		if stored[id] != slug {
			lost++
		}
	}
	assert.Zero(t, lost, "acknowledged pings lost, of %d", len(load.acks))
	t.Logf("%d pings acknowledged, %d 503s", len(load.acks), len(load.fails))

	// Every run missed is recorded once, none skipped.
	rows, err := db.Query(ctx, `SELECT m.slug, c.expected_at FROM checkins c JOIN monitors m ON m.id = c.monitor_id
		WHERE m.slug LIKE 'silent-%' AND c.status = 'missed' ORDER BY m.slug, c.expected_at`)
	require.NoError(t, err)
	misses := map[string][]time.Time{}
	for rows.Next() {
		var slug string
		var at time.Time
		require.NoError(t, rows.Scan(&slug, &at))
		misses[slug] = append(misses[slug], at)
	}
	require.NoError(t, rows.Err())
	require.Len(t, misses, 64)
	now := time.Now()
	for slug, list := range misses {
		for i := 1; i < len(list); i++ {
			if !assert.Equal(t, interval, list[i].Sub(list[i-1]), "%s: missed run %d: each once, none skipped", slug, i) {
				break
			}
		}
		assert.Less(t, now.Sub(list[len(list)-1]), interval+lease+margin, "%s: a run due is left unrecorded", slug)
	}
	for _, p := range []*proc{a, b} {
		for line := range strings.Lines(p.stderr.String()) {
			if strings.Contains(line, "level=ERROR") {
				t.Logf("%s: %s", p.addr, line)
			}
		}
	}
}
