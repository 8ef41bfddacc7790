package app

// These tests build the server and run it as a process: killed with
// SIGKILL at random moments and started again on the same database, under
// load, stopped with SIGTERM while requests are in flight.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/proctest"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
)

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

// testLease is the servers' lease on Postgres, but in the tests that
// measure how fast an instance takes another's leases over, which give
// their own (a second).
const testLease = 3 * time.Second

// launch starts the server on db, on a free port, and waits until it
// answers (on Postgres, with leases of testLease, until it runs the
// monitors of every shard: a server started again after a kill -9 waits
// for its predecessor's leases to run out, and while the dead
// predecessor's heartbeat outlives its leases it counts as a live
// instance and the new one claims only its fair half at first, answering
// 503 monitor_unowned for the rest until the next round).
func launch(t *testing.T, db string, args ...string) *proc {
	t.Helper()
	return launchShared(t, db, true, args...)
}

// launchShared is launch; it waits for the server to run every shard's
// monitors only when run says so (it is the only instance).
func launchShared(t *testing.T, db string, run bool, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, addr: proctest.FreeAddr(t), done: make(chan struct{})}
	p.url = "http://" + p.addr
	flags := []string{"-addr", p.addr, storeFlag(db), db}
	if storeFlag(db) == "-postgres" {
		// Leases long enough for a server starved of processor time on a
		// loaded machine (a test may give its own: the last -lease wins).
		flags = append(flags, "-lease", testLease.String())
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
			if resp.StatusCode == http.StatusOK && err == nil && (!run || shards == nil || *shards == 64) {
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
