package app

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/proctest"
	"github.com/fsmgen/fsmgen/server/internal/api"
	"github.com/fsmgen/fsmgen/server/internal/pgtest"
)

// runOnce runs the server binary to its end (an administrative flag, or a
// start that is refused) and returns its output and exit code.
func runOnce(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, serverBinary(t), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "the server does not exit: %s", errOut.String())
	if err != nil {
		_, exited := err.(*exec.ExitError)
		require.True(t, exited, "run the server: %v", err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// resetAdmin runs -reset-token on db and returns the token it printed.
func resetAdmin(t *testing.T, db string) string {
	t.Helper()
	out, errOut, code := runOnce(t, storeFlag(db), db, "-reset-token")
	require.Equal(t, 0, code, "-reset-token: %s", errOut)
	m := tokenRE.FindAllStringSubmatch(out, -1)
	require.Len(t, m, 1, "one token printed: %q", out)
	return m[0][1]
}

// status is the status of a GET of path with tok.
func (p *proc) status(tok, path string) int {
	p.t.Helper()
	req, err := http.NewRequest("GET", p.url+path, nil)
	require.NoError(p.t, err)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := apiClient.Do(req)
	require.NoError(p.t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// refuses waits until p refuses tok (401), and returns how long that took.
// The bound, a second, is checked on a fake clock by server/internal/apikey's and
// server/internal/api/apitest's tests; here, between processes on a loaded machine,
// the wait is generous.
func (p *proc) refuses(tok string) time.Duration {
	p.t.Helper()
	start := time.Now()
	require.Eventually(p.t, func() bool { return p.status(tok, "/api/crons/monitors") == http.StatusUnauthorized },
		30*time.Second, 10*time.Millisecond, "%s still takes the token", p.addr)
	return time.Since(start)
}

// TestToken checks the admin key's token: printed on the first start
// only; -reset-token, run while the server runs, prints a new one and
// exits 0 (it starts no server), and the running server refuses the old
// one and takes the new one without a restart, as does the next start.
func TestToken(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	p := launch(t, db)
	first := p.token()
	p.call(first, "GET", "/api/crons/monitors", "", http.StatusOK, nil)
	require.Equal(t, 0, p.term(), p.stderr.String())

	p = launch(t, db)
	assert.Empty(t, p.tokens(), "a second start prints no token")
	p.call(first, "GET", "/api/crons/monitors", "", http.StatusOK, nil)
	second := resetAdmin(t, db)
	assert.NotEqual(t, first, second)
	p.call(second, "GET", "/api/crons/monitors", "", http.StatusOK, nil)
	t.Logf("the old token refused %s after -reset-token", p.refuses(first))
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	p.call(first, "GET", "/api/crons/monitors", "", http.StatusUnauthorized, &e)
	assert.Equal(t, "invalid_token", e.Error.Code)
	require.Equal(t, 0, p.term(), p.stderr.String())
	assert.Empty(t, p.tokens(), "the running server printed nothing")
	p.noErrors()

	p = launch(t, db)
	assert.Empty(t, p.tokens())
	p.call(second, "GET", "/api/crons/monitors", "", http.StatusOK, nil)
	p.call(first, "GET", "/api/crons/monitors", "", http.StatusUnauthorized, nil)
	require.Equal(t, 0, p.term(), p.stderr.String())
	p.noErrors()

	// -reset-token takes no flag of a running server.
	_, errOut, code := runOnce(t, storeFlag(db), db, "-reset-token", "-jobs", "jobs.yaml")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "-reset-token makes a new admin key and exits: it takes only -db or -postgres, not -jobs")
}

// TestOneServerPerDB starts a second server on the SQLite file of a
// running one (by its path, then through a symbolic link): it is refused,
// naming the file and the running one's PID. The running one killed with
// SIGKILL, a new one starts at once: no lock outlives its holder.
func TestOneServerPerDB(t *testing.T) {
	t.Parallel()
	if pgtest.OnPostgres() {
		t.Skip("servers share a Postgres database by design")
	}
	db := newDB(t)
	link := filepath.Join(t.TempDir(), "link.db")
	require.NoError(t, os.Symlink(db, link))
	for round := range 3 {
		a := launch(t, db)
		if round == 0 {
			a.token()
		}
		for _, path := range []string{db, link} {
			_, errOut, code := runOnce(t, "-addr", proctest.FreeAddr(t), "-db", path)
			assert.Equal(t, 2, code, "a second server on %s", path)
			assert.Contains(t, errOut, fmt.Sprintf("the database %s is in use by another server, pid %d (it holds the lock of %s.lock)", db, a.cmd.Process.Pid, db))
		}
		// -reset-token works while it runs; the new token at once.
		a.call(resetAdmin(t, db), "GET", "/api/crons/monitors", "", http.StatusOK, nil)
		a.kill9()
	}
	b := launch(t, db)
	b.call(resetAdmin(t, db), "GET", "/api/crons/monitors", "", http.StatusOK, nil)
	require.Equal(t, 0, b.term())
	b.noErrors()
}

// TestKeysOnEveryInstance runs two servers on one Postgres: a key made
// through one works through the other, its threads are its own on both,
// and revoked through one, or the admin key reset, the other refuses it.
func TestKeysOnEveryInstance(t *testing.T) {
	t.Parallel()
	if pgtest.OnPostgres() {
		t.Skip("runs on Postgres in the first run already")
	}
	db := pgtest.DB(t)
	a := launch(t, db)
	admin := a.token()
	b := launchShared(t, db, false)

	var ci, laptop api.KeyView
	a.call(admin, "POST", "/api/keys", `{"name": "ci", "scope": "read-only"}`, http.StatusCreated, &ci)
	b.call(admin, "POST", "/api/keys", `{"name": "laptop", "scope": "read-write"}`, http.StatusCreated, &laptop)
	for _, p := range []*proc{a, b} {
		p.call(ci.Token, "GET", "/api/crons/monitors", "", http.StatusOK, nil)
		p.call(ci.Token, "POST", "/api/crons/monitors", `{"slug": "x", "schedule": {"type": "interval", "seconds": 60}}`, http.StatusForbidden, nil)
		var list struct{ Keys []api.KeyView }
		p.call(admin, "GET", "/api/keys", "", http.StatusOK, &list)
		assert.Len(t, list.Keys, 3)
	}
	// A thread pushed through a is laptop's, on b too.
	a.call(laptop.Token, "PUT", "/api/threads/t-1", push(t, "t-1", 2), http.StatusOK, nil)
	b.call(laptop.Token, "GET", "/api/threads/t-1", "", http.StatusOK, nil)
	b.call(admin, "GET", "/api/threads/t-1", "", http.StatusNotFound, nil)
	b.call(ci.Token, "GET", "/api/threads/t-1", "", http.StatusNotFound, nil)

	// Revoked through b: a refuses it.
	b.call(admin, "DELETE", "/api/keys/"+ci.ID, "", http.StatusOK, nil)
	b.call(ci.Token, "GET", "/api/crons/monitors", "", http.StatusUnauthorized, nil)
	t.Logf("a revoked key refused by the other instance after %s", a.refuses(ci.Token))

	// The admin key reset while both run: both refuse the old token.
	reset := resetAdmin(t, db)
	for _, p := range []*proc{a, b} {
		t.Logf("the old admin token refused by %s after %s", p.addr, p.refuses(admin))
		p.call(reset, "GET", "/api/keys", "", http.StatusOK, nil)
		p.call(laptop.Token, "GET", "/api/threads/t-1", "", http.StatusOK, nil)
	}
	a.noErrors()
	b.noErrors()
}
