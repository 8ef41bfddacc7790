package app

// These tests build the server and run it as a process: killed with
// SIGKILL at random moments and started again on the same database, under
// load, stopped with SIGTERM while requests are in flight.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/proctest"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/pgtest"
)

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// TestMain removes the server the tests built, and stops their Postgres.
func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// TestOnPostgres runs every other test again on Postgres, in a child
// process, beside the parallel tests of this one (after the serial ones,
// which measure how fast an instance takes another's leases over).
func TestOnPostgres(t *testing.T) {
	t.Parallel()
	pgtest.Again(t)
}

// newDB returns a new database for a server: a SQLite file, or the URL
// of a Postgres database in the run of TestOnPostgres.
func newDB(t *testing.T) string {
	t.Helper()
	if pgtest.OnPostgres() {
		return pgtest.DB(t)
	}
	return filepath.Join(t.TempDir(), "server.db")
}

// storeFlag is the flag that gives a server db.
func storeFlag(db string) string {
	if strings.HasPrefix(db, "postgres://") {
		return "-postgres"
	}
	return "-db"
}

// serverBinary builds ./cmd/server once for all the tests.
func serverBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "fsmgen-server-test-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "server")
		goBin, err := exec.LookPath("go")
		if err != nil {
			buildErr = err
			return
		}
		if out, err := exec.Command(goBin, "build", "-o", binPath, "../../cmd/server").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

// proc is a running server.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	addr   string
	url    string
	stdout proctest.Buffer
	stderr proctest.Buffer
	done   chan struct{} // closed once the process exited and its output is read
	err    error         // Wait's, once done
}

// launch starts the server on db, on a free port, and waits until it
// answers (on Postgres, with leases of a second, until it runs monitors:
// a server started again after a kill -9 waits for its predecessor's
// leases to run out).
func launch(t *testing.T, db string, args ...string) *proc {
	t.Helper()
	return launchShared(t, db, true, args...)
}

// launchShared is launch; it waits for the server to run monitors only
// when run says so.
func launchShared(t *testing.T, db string, run bool, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, addr: proctest.FreeAddr(t), done: make(chan struct{})}
	p.url = "http://" + p.addr
	flags := []string{"-addr", p.addr, storeFlag(db), db}
	if storeFlag(db) == "-postgres" {
		flags = append(flags, "-lease", "1s")
	}
	p.cmd = exec.Command(serverBinary(t), append(flags, args...)...)
	p.cmd.Stdout = &p.stdout
	p.cmd.Stderr = &p.stderr
	require.NoError(t, p.cmd.Start())
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("server %s stderr:\n%s", p.addr, p.stderr.String())
		}
	})
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-p.done:
			require.FailNow(t, "the server exited", "%v\n%s", p.err, p.stderr.String())
		default:
		}
		if resp, err := client.Get(p.url + "/health"); err == nil {
			var health struct {
				Components struct {
					Monitors struct {
						Shards *int `json:"shards"`
					} `json:"monitors"`
				} `json:"components"`
			}
			err := json.NewDecoder(resp.Body).Decode(&health)
			resp.Body.Close()
			shards := health.Components.Monitors.Shards
			if resp.StatusCode == http.StatusOK && err == nil && (!run || shards == nil || *shards > 0) {
				return p
			}
		}
		require.True(t, time.Now().Before(deadline), "the server does not answer: %s", p.stderr.String())
		time.Sleep(20 * time.Millisecond)
	}
}

var tokenRE = regexp.MustCompile(`(?m)^token: (fsm_[A-Za-z0-9_-]+)$`)

// tokens returns the tokens the server printed so far.
func (p *proc) tokens() []string {
	var out []string
	for _, m := range tokenRE.FindAllStringSubmatch(p.stdout.String(), -1) {
		out = append(out, m[1])
	}
	return out
}

// token waits for the token the server prints on its first start.
func (p *proc) token() string {
	p.t.Helper()
	var tok []string
	require.Eventually(p.t, func() bool { tok = p.tokens(); return len(tok) > 0 }, 30*time.Second, 10*time.Millisecond, "no token printed")
	require.Len(p.t, tok, 1)
	return tok[0]
}

// kill9 kills the server with SIGKILL.
func (p *proc) kill9() {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.done
}

// term stops the server with SIGTERM and returns its exit code.
func (p *proc) term() int {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(syscall.SIGTERM))
	return p.wait()
}

// wait waits for the process to exit, and returns its exit code.
func (p *proc) wait() int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		require.FailNow(p.t, "the server does not exit")
	}
	return p.cmd.ProcessState.ExitCode()
}

// noErrors checks that the server logged no error (a monitor refusing its
// timer, a failed write, a panic).
func (p *proc) noErrors() {
	p.t.Helper()
	for line := range strings.Lines(p.stderr.String()) {
		assert.NotContains(p.t, line, "level=ERROR")
	}
}

var apiClient = &http.Client{Timeout: 30 * time.Second}

// call sends a request with the token, and decodes its answer into out
// when it has status.
func (p *proc) call(token, method, path, body string, status int, out any) {
	p.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, p.url+path, r)
	require.NoError(p.t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := apiClient.Do(req)
	require.NoError(p.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(p.t, err)
	require.Equal(p.t, status, resp.StatusCode, "%s %s: %s", method, path, data)
	if out != nil {
		require.NoError(p.t, json.Unmarshal(data, out), "%s", data)
	}
}

func (p *proc) monitor(token, slug string) *monitorengine.View {
	p.t.Helper()
	var v monitorengine.View
	p.call(token, "GET", "/api/crons/monitors/"+slug, "", http.StatusOK, &v)
	return &v
}

// checkins returns a monitor's check-ins, oldest first.
func (p *proc) checkins(token, slug string) []monitorengine.CheckinView {
	p.t.Helper()
	var out struct {
		Checkins []monitorengine.CheckinView `json:"checkins"`
	}
	p.call(token, "GET", "/api/crons/monitors/"+slug+"/checkins?limit=10000", "", http.StatusOK, &out)
	require.Less(p.t, len(out.Checkins), 10000, "the list is whole")
	slices.Reverse(out.Checkins)
	return out.Checkins
}

// snapshot returns a monitor and its check-ins (oldest first) as one
// state: read again until no timer fired in between.
func (p *proc) snapshot(token, slug string) (*monitorengine.View, []monitorengine.CheckinView) {
	p.t.Helper()
	for range 100 {
		v := p.monitor(token, slug)
		list := p.checkins(token, slug)
		if p.monitor(token, slug).UpdatedAt.Equal(v.UpdatedAt) {
			return v, list
		}
	}
	require.FailNow(p.t, "the monitor never stood still", slug)
	return nil, nil
}

// pingServed pings as a cron job's client would: again, for up to 10 s,
// while the server answers 503 — which it does, by design, while it holds
// no lease of the monitor's shard (a renewal missed on a loaded machine,
// say; see server/internal/monitorengine' shards).
func pingServed(client *http.Client, url string) (int, string, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, id, err := ping(client, url)
		if err != nil || status != http.StatusServiceUnavailable || time.Now().After(deadline) {
			return status, id, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ping pings and returns the status and the check-in's id.
func ping(client *http.Client, url string) (int, string, error) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var out struct {
		CheckinID string `json:"checkin_id"`
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", err
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(data, &out); err != nil || out.CheckinID == "" {
			return resp.StatusCode, "", fmt.Errorf("a 200 without a check-in: %s", data)
		}
	}
	return resp.StatusCode, out.CheckinID, nil
}

// TestGracefulShutdown stops the server with SIGTERM while requests are in
// flight (their handlers are reading their bodies) and an event stream is
// open: the requests are answered and stored, the stream ends, the
// process exits 0.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	p := launch(t, db)
	tok := p.token()
	var v monitorengine.View
	p.call(tok, "POST", "/api/crons/monitors", `{"slug": "job", "schedule": {"type": "interval", "seconds": 3600}}`, http.StatusCreated, &v)

	// An event stream, open across the shutdown.
	stream, err := http.NewRequest("GET", p.url+"/api/crons/stream", nil)
	require.NoError(t, err)
	stream.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(stream)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	streamEnded := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		streamEnded <- err
	}()

	// Requests in flight: each sends its headers with Expect:
	// 100-continue and waits for the 100, which the server sends once the
	// handler reads the body.
	type inflight struct {
		conn net.Conn
		r    *bufio.Reader
		body string
	}
	requests := []struct{ path, auth, body string }{
		{"/ping/" + v.PingKey, "", "first output"},
		{"/ping/" + v.PingKey + "/fail", "", "second output"},
		{"/ping/" + v.PingKey + "/3", "", "exit 3"},
		{"/ping/" + v.PingKey + "/start", "", "a run starts"},
		{"/api/crons/monitors", tok, `{"slug": "created-during-shutdown", "schedule": {"type": "interval", "seconds": 60}}`},
	}
	var flying []inflight
	for _, rq := range requests {
		conn, err := net.Dial("tcp", p.addr)
		require.NoError(t, err)
		defer conn.Close()
		head := "POST " + rq.path + " HTTP/1.1\r\nHost: " + p.addr + "\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: " + strconv.Itoa(len(rq.body)) + "\r\n"
		if rq.auth != "" {
			head += "Authorization: Bearer " + rq.auth + "\r\n"
		}
		_, err = io.WriteString(conn, head+"\r\n")
		require.NoError(t, err)
		r := bufio.NewReader(conn)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
		cont, err := http.ReadResponse(r, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusContinue, cont.StatusCode, "%s: the handler reads the body", rq.path)
		flying = append(flying, inflight{conn, r, rq.body})
	}

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	// The listener closes first: then the shutdown has begun.
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", p.addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	}, 30*time.Second, 10*time.Millisecond, "the server still accepts connections")

	var ids []string
	for i, f := range flying {
		_, err := io.WriteString(f.conn, f.body)
		require.NoError(t, err)
		resp, err := http.ReadResponse(f.r, nil)
		require.NoError(t, err, "request %d is answered", i)
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		if requests[i].auth != "" {
			assert.Equal(t, http.StatusCreated, resp.StatusCode, "%s", data)
			continue
		}
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", data)
		var out struct {
			CheckinID string `json:"checkin_id"`
		}
		require.NoError(t, json.Unmarshal(data, &out))
		ids = append(ids, out.CheckinID)
	}
	select {
	case err := <-streamEnded:
		assert.NoError(t, err, "the event stream ends cleanly")
	case <-time.After(60 * time.Second):
		require.FailNow(t, "the event stream is still open")
	}
	require.Equal(t, 0, p.wait(), "exit status; stderr:\n%s", p.stderr.String())
	p.noErrors()

	// All of it was stored.
	p = launch(t, db)
	list := p.checkins(tok, "job")
	require.Len(t, list, len(ids))
	for i, c := range list {
		assert.Equal(t, ids[i], c.ID)
		require.NotNil(t, c.Output)
		assert.Equal(t, requests[i].body, *c.Output)
	}
	assert.Equal(t, []string{monitorengine.CheckinOK, monitorengine.CheckinError, monitorengine.CheckinError, monitorengine.CheckinInProgress},
		[]string{list[0].Status, list[1].Status, list[2].Status, list[3].Status})
	p.monitor(tok, "created-during-shutdown")
}

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
