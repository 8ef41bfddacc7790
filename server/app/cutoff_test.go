package app

// The test of an instance that runs but cannot reach Postgres: its
// connections go through a proxy that stops forwarding (a network that
// drops packets), so it cannot renew its leases.

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/jobengine"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/pgtest"
)

// pgProxy forwards TCP connections on loopback to a Postgres server's
// Unix socket; paused, it forwards nothing, in either direction, and
// keeps the connections open: what is sent waits.
type pgProxy struct {
	ln     net.Listener
	socket string
	mu     sync.Mutex
	open   chan struct{} // closed while forwarding
	conns  []net.Conn
	wg     sync.WaitGroup
}

// startProxy starts a proxy to the server of the database at dbURL (a
// pgtest URL) and returns it with the URL of the database through it;
// it stops when the test ends.
func startProxy(t *testing.T, dbURL string) (*pgProxy, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	q := u.Query()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &pgProxy{ln: ln, socket: filepath.Join(q.Get("host"), ".s.PGSQL."+q.Get("port")), open: make(chan struct{})}
	close(p.open)
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		ln.Close()
		p.resume()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	through := url.URL{Scheme: "postgres", User: url.User(q.Get("user")), Host: ln.Addr().String(), Path: u.Path, RawQuery: "sslmode=disable"}
	return p, through.String()
}

func (p *pgProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("unix", p.socket)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		p.wg.Go(func() { p.pipe(up, c) })
		p.wg.Go(func() { p.pipe(c, up) })
	}
}

// pipe copies src to dst while the proxy forwards, then closes both.
func (p *pgProxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			open := p.open
			p.mu.Unlock()
			<-open
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// pause stops forwarding; resume forwards again what waited, and the rest.
func (p *pgProxy) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.open = make(chan struct{})
}

func (p *pgProxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
	default:
		close(p.open)
	}
}

// loggedAt returns the times of the lines of a server's log whose message
// starts with msg.
func loggedAt(t *testing.T, p *proc, msg string) []time.Time {
	t.Helper()
	re := regexp.MustCompile(`(?m)^time=(\S+) level=\w+ msg="?` + regexp.QuoteMeta(msg))
	var out []time.Time
	for _, m := range re.FindAllStringSubmatch(p.stderr.String(), -1) {
		at, err := time.Parse(time.RFC3339Nano, m[1])
		require.NoError(t, err)
		out = append(out, at)
	}
	return out
}

// TestCutOffInstance cuts the instance that runs the jobs and half the
// monitors from Postgres while a run is in progress (the proxy between
// them stops forwarding): it cannot renew its leases, and stands down
// before they run out — it stops running its shards and kills the run's
// process — so that the other instance, which takes them over when they
// expire, never runs what it runs; the other closes the run as
// interrupted and retries it. Reconnected, it writes nothing of what it
// did and takes its share again.
func TestCutOffInstance(t *testing.T) {
	if pgtest.OnPostgres() {
		t.Skip("runs on Postgres in the first run already")
	}
	if testing.Short() {
		t.Skip("cuts a server from its database")
	}
	const lease = 2 * time.Second
	dir := t.TempDir()
	pidFile, mark := filepath.Join(dir, "pid"), filepath.Join(dir, "ran")
	file := jobsFile(t, dir, `
jobs:
  - id: short
    command: [sh, -c, "exit 0"]
    schedule: {type: cron, expression: "0 3 * * *"}
  - id: long
    command: [sh, -c, "test -e `+mark+` && exit 0; touch `+mark+`; echo $$ > `+pidFile+`; sleep 60"]
    schedule: {type: cron, expression: "0 3 * * *"}
    timeout: 1m
    retries: 3
    backoff: {base: 100ms}
`)
	ctx := context.Background()
	dbURL := pgtest.DB(t)
	proxy, through := startProxy(t, dbURL)
	args := []string{"-lease", lease.String(), "-jobs", file}
	// a starts alone and takes every shard, the jobs' too; it keeps that
	// one when b takes its share.
	a := launch(t, through, args...)
	tok := a.token()
	b := launchShared(t, dbURL, false, args...)
	sharing(t, a, b, 20*time.Second)
	require.True(t, a.runsJobs(), "a runs the jobs")
	db, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer db.Close(ctx)
	var aID string
	require.NoError(t, db.QueryRow(ctx, `SELECT owner FROM leases WHERE shard = 0`).Scan(&aID))
	var mon monitorengine.View
	a.call(tok, "POST", "/api/crons/monitors", `{"slug": "here", "schedule": {"type": "interval", "seconds": 3600}}`, http.StatusCreated, &mon)
	run := a.trigger(tok, "long")
	pid := readPID(t, pidFile)

	proxy.pause()
	// A ping and a trigger that a takes while cut off: each engine waits on
	// its write when its lease must end.
	answers := make(chan string, 2)
	for _, req := range []struct{ method, url, token string }{
		{"GET", a.url + "/ping/" + mon.PingKey, ""},
		{"POST", a.url + "/api/jobs/short/trigger", tok},
	} {
		go func() {
			r, err := http.NewRequest(req.method, req.url, nil)
			if err != nil {
				answers <- err.Error()
				return
			}
			if req.token != "" {
				r.Header.Set("Authorization", "Bearer "+req.token)
			}
			resp, err := apiClient.Do(r)
			if err != nil {
				answers <- err.Error()
				return
			}
			resp.Body.Close()
			answers <- fmt.Sprintf("%s %d", req.method, resp.StatusCode)
		}()
	}
	// a's leases as the database has them until b holds them all: a can
	// renew none once cut off, so the last expiry seen is its last.
	expiry := map[int]time.Time{}
	var killed time.Time
	deadline := time.Now().Add(3*lease + 10*time.Second)
	for bHolds := 0; bHolds < 64; {
		require.True(t, time.Now().Before(deadline), "b does not take a's shards over")
		rows, err := db.Query(ctx, `SELECT shard, coalesce(owner, ''), expires_at, expires_at > clock_timestamp() FROM leases`)
		require.NoError(t, err)
		bHolds = 0
		for rows.Next() {
			var shard int
			var owner string
			var at time.Time
			var live bool
			require.NoError(t, rows.Scan(&shard, &owner, &at, &live))
			switch {
			case owner == aID && at.After(expiry[shard]):
				expiry[shard] = at
			case owner != aID && owner != "" && live:
				bHolds++
			}
		}
		require.NoError(t, rows.Err())
		if killed.IsZero() && gone(pid) {
			killed = time.Now()
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.Contains(t, expiry, 0, "a held the jobs' shard")
	first := slices.MinFunc(slices.Collect(maps.Values(expiry)), func(x, y time.Time) int { return x.Compare(y) })
	t.Logf("a's leases ran out from %s (the jobs' at %s)", first.Format(time.StampMilli), expiry[0].Format(time.StampMilli))

	// a stood down before its leases ran out: its monitors, its run.
	if assert.False(t, killed.IsZero(), "a killed its run before b took every shard") {
		assert.True(t, killed.Before(expiry[0]), "a killed its run (seen at %s) before its lease of the jobs ran out", killed.Format(time.StampMilli))
	}
	for _, msg := range []string{"leases not renewed in time", "the jobs' lease was lost or not renewed in time"} {
		at := loggedAt(t, a, msg)
		if assert.NotEmpty(t, at, "a logs %q", msg) {
			assert.True(t, at[0].Before(first), "a stood down (%q at %s) before its first lease ran out", msg, at[0].Format(time.StampMilli))
		}
	}

	for range 2 {
		assert.Contains(t, []string{"GET 503", "POST 503"}, <-answers, "what a took while cut off is not acknowledged")
	}

	// b runs the jobs: the run a left is closed once, and retried.
	require.Eventually(t, b.runsJobs, 10*time.Second, 20*time.Millisecond)
	b.settled(tok, "long")
	runs := checkRuns(t, b, tok, "long")
	require.Len(t, runs, 2, "the interrupted run and its retry")
	assert.Equal(t, run.ID, runs[0].ID)
	assert.Equal(t, []string{"failed", jobengine.ErrInterruptedInstance}, []string{runs[0].Status, runs[0].Error}, "closed by b, not by a")
	assert.Equal(t, []any{"retry", 1, "succeeded"}, []any{runs[1].TriggeredBy, runs[1].Attempt, runs[1].Status})

	// Reconnected, a writes nothing of what it did, and takes its share.
	proxy.resume()
	sharing(t, a, b, 20*time.Second)
	runs = checkRuns(t, b, tok, "long")
	assert.Len(t, runs, 2, "a wrote no run")
	assert.Equal(t, []string{"failed", jobengine.ErrInterruptedInstance}, []string{runs[0].Status, runs[0].Error}, "a did not record the run it killed")
	assert.Empty(t, b.runs(tok, "short"), "a did not record the trigger it took while cut off")
	assert.Empty(t, b.checkins(tok, "here"), "a did not record the ping it took while cut off")
	b.noErrors()
}
