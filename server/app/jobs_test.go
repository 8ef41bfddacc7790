package app

// The background jobs on the real server: SQLite, real processes, the
// HTTP API; killed with SIGKILL and stopped with SIGTERM during a run.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/jobengine"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	jobdefs "github.com/fsmgen/fsmgen/server/jobs"
)

// jobsFile writes a jobs file into dir and returns its path.
func jobsFile(t *testing.T, dir, text string) string {
	t.Helper()
	path := filepath.Join(dir, "jobs.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	return path
}

// job returns a job as GET /api/jobs lists it.
func (p *proc) job(token, id string) *jobengine.View {
	p.t.Helper()
	var out struct {
		Jobs []*jobengine.View `json:"jobs"`
	}
	p.call(token, "GET", "/api/jobs", "", http.StatusOK, &out)
	for _, j := range out.Jobs {
		if j.ID == id {
			return j
		}
	}
	require.FailNow(p.t, "no such job", id)
	return nil
}

// runs returns a job's runs, oldest first.
func (p *proc) runs(token, id string) []*jobengine.RunView {
	p.t.Helper()
	var out struct {
		Runs []*jobengine.RunView `json:"runs"`
	}
	p.call(token, "GET", "/api/jobs/"+id+"/runs?limit=1000", "", http.StatusOK, &out)
	for i, j := 0, len(out.Runs)-1; i < j; i, j = i+1, j-1 {
		out.Runs[i], out.Runs[j] = out.Runs[j], out.Runs[i]
	}
	return out.Runs
}

// trigger starts a manual run and returns it.
func (p *proc) trigger(token, id string) *jobengine.RunView {
	p.t.Helper()
	var out struct {
		Run *jobengine.RunView `json:"run"`
	}
	p.call(token, "POST", "/api/jobs/"+id+"/trigger", "", http.StatusAccepted, &out)
	return out.Run
}

// settled waits until job id has no run in progress and no retry waiting,
// and returns it.
func (p *proc) settled(token, id string) *jobengine.View {
	p.t.Helper()
	var j *jobengine.View
	require.Eventually(p.t, func() bool {
		j = p.job(token, id)
		return j.Status == jobengine.StatusScheduled || j.Status == jobengine.StatusDisabled
	}, 30*time.Second, 20*time.Millisecond)
	return j
}

// alertHook records the alerts posted to it.
type alertHook struct {
	mu     sync.Mutex
	alerts []jobengine.Alert
	url    string
}

func newAlertHook(t *testing.T) *alertHook {
	h := &alertHook{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var a jobengine.Alert
		if json.Unmarshal(data, &a) == nil && a.Job != "" {
			h.mu.Lock()
			h.alerts = append(h.alerts, a)
			h.mu.Unlock()
		}
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

func (h *alertHook) events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, a := range h.alerts {
		out = append(out, a.Event+" "+a.Job+" "+strconv.Itoa(a.ConsecutiveFailures))
	}
	return out
}

// gone reports whether process pid has ended (a zombie has).
func gone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return strings.HasPrefix(rest, "Z")
}

// readPID waits for a command to write its pid into path.
func readPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil && pid > 0
	}, 30*time.Second, 10*time.Millisecond)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// TestJobRetries checks a failing command job through the API: it is
// retried with its backoff, each attempt recorded with its output and exit
// code, its health falls to unhealthy with one alert, its monitor records
// each run, and a good run makes it healthy again, with one more alert.
func TestJobRetries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	flag := filepath.Join(dir, "works")
	hook := newAlertHook(t)
	p := launch(t, filepath.Join(dir, "server.db"), "-alert-webhook", hook.url, "-webhook-allow", "127.0.0.1", "-jobs", jobsFile(t, dir, `
jobs:
  - id: flaky
    name: Flaky job
    command: [sh, -c, "echo out; echo err >&2; test -e `+flag+` || exit 3"]
    schedule: {type: interval, seconds: 3600}
    timeout: 10s
    retries: 2
    backoff: {base: 200ms, cap: 300ms}
`))
	tok := p.token()
	before := p.job(tok, "flaky")
	assert.Equal(t, jobdefs.HealthHealthy, before.Health)
	assert.Equal(t, jobengine.StatusScheduled, before.Status)
	require.NotNil(t, before.NextRunAt)
	assert.Nil(t, before.LastRun)

	first := p.trigger(tok, "flaky")
	assert.Equal(t, "manual", first.TriggeredBy)
	assert.Equal(t, "running", first.Status)
	j := p.settled(tok, "flaky")
	runs := p.runs(tok, "flaky")
	require.Len(t, runs, 3, "a first try and two retries")
	three := 3
	for i, r := range runs {
		assert.Equal(t, "failed", r.Status, "run %d", i)
		assert.Equal(t, i, r.Attempt)
		assert.Equal(t, &three, r.ExitCode)
		assert.Equal(t, "sh: exit status 3", r.Error)
		assert.Equal(t, "out\nerr\n", r.Output)
		require.NotNil(t, r.FinishedAt)
		require.NotNil(t, r.DurationMS)
	}
	assert.Equal(t, first.ID, runs[0].ID)
	assert.Equal(t, []string{"manual", "retry", "retry"}, []string{runs[0].TriggeredBy, runs[1].TriggeredBy, runs[2].TriggeredBy})
	// Each retry starts no sooner than its backoff after the failure before
	// it: 200 ms, then 400 ms capped at 300 ms (server/internal/jobengine's tests check
	// the exact times with a fake clock).
	assert.GreaterOrEqual(t, runs[1].StartedAt.Sub(*runs[0].FinishedAt), 200*time.Millisecond)
	assert.GreaterOrEqual(t, runs[2].StartedAt.Sub(*runs[1].FinishedAt), 300*time.Millisecond)
	assert.Equal(t, 3, j.ConsecutiveFailures)
	assert.Equal(t, jobdefs.HealthUnhealthy, j.Health)
	assert.Equal(t, runs[2].ID, j.LastRun.ID)

	var health struct {
		Status     string `json:"status"`
		Components map[string]struct {
			Status    string `json:"status"`
			Unhealthy int    `json:"unhealthy"`
		} `json:"components"`
	}
	p.call("", "GET", "/health", "", http.StatusOK, &health)
	assert.Equal(t, "degraded", health.Status)
	assert.Equal(t, "degraded", health.Components["jobs"].Status)
	assert.Equal(t, 1, health.Components["jobs"].Unhealthy)
	assert.Equal(t, "ok", health.Components["store"].Status)

	// Each run checked in to the job's monitor.
	require.Eventually(t, func() bool { return len(p.checkins(tok, "job-flaky")) == 3 }, 10*time.Second, 20*time.Millisecond)
	for _, c := range p.checkins(tok, "job-flaky") {
		assert.Equal(t, monitorengine.CheckinError, c.Status)
		assert.Equal(t, monitorengine.SourceJob, c.Source)
	}
	m := p.monitor(tok, "job-flaky")
	assert.Equal(t, 70, m.MaxRuntimeSeconds, "max_runtime: the timeout and a minute")
	assert.Equal(t, monitorengine.HealthFailing, m.Health, "failing with the job, at its third failure")

	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	p.trigger(tok, "flaky")
	j = p.settled(tok, "flaky")
	assert.Equal(t, jobdefs.HealthHealthy, j.Health)
	assert.Zero(t, j.ConsecutiveFailures)
	assert.Equal(t, "succeeded", j.LastRun.Status)
	require.Eventually(t, func() bool { return len(hook.events()) == 2 }, 30*time.Second, 20*time.Millisecond)
	assert.Equal(t, []string{"job_failing flaky 3", "job_recovered flaky 0"}, hook.events(), "one alert per streak, in order")
	p.noErrors()
}

// TestJobTriggerCancelTimeout checks a manual run refused while one runs,
// a cancel that kills the run's process group, and a timeout that does
// too: a grandchild that ignores SIGTERM and would outlive its parent is
// gone.
func TestJobTriggerCancelTimeout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	p := launch(t, filepath.Join(dir, "server.db"), "-jobs", jobsFile(t, dir, `
jobs:
  - id: sleepy
    command: [sh, -c, "trap '' TERM; sleep 60 & echo $! > `+pidFile+`; wait"]
    schedule: {type: cron, expression: "0 3 * * *", timezone: Europe/Paris}
    timeout: 1s
    retries: 0
`))
	tok := p.token()

	run := p.trigger(tok, "sleepy")
	grandchild := readPID(t, pidFile)
	p.call(tok, "POST", "/api/jobs/sleepy/trigger", "", http.StatusConflict, nil)
	var cancelled struct {
		Run *jobengine.RunView `json:"run"`
	}
	p.call(tok, "POST", "/api/jobs/runs/"+run.ID+"/cancel", "", http.StatusOK, &cancelled)
	assert.Equal(t, "cancelled", cancelled.Run.Status)
	require.Eventually(t, func() bool { return gone(grandchild) }, 10*time.Second, 20*time.Millisecond, "the group is killed")
	p.call(tok, "POST", "/api/jobs/runs/"+run.ID+"/cancel", "", http.StatusConflict, nil)
	p.call(tok, "POST", "/api/jobs/runs/nope/cancel", "", http.StatusNotFound, nil)
	p.call(tok, "POST", "/api/jobs/nope/trigger", "", http.StatusNotFound, nil)
	j := p.job(tok, "sleepy")
	assert.Equal(t, jobengine.StatusScheduled, j.Status)
	assert.Equal(t, jobdefs.HealthHealthy, j.Health, "a cancelled run is no failure")

	require.NoError(t, os.Remove(pidFile))
	run = p.trigger(tok, "sleepy")
	grandchild = readPID(t, pidFile)
	j = p.settled(tok, "sleepy")
	require.Eventually(t, func() bool { return gone(grandchild) }, 10*time.Second, 20*time.Millisecond, "the group is killed")
	runs := p.runs(tok, "sleepy")
	require.Len(t, runs, 2)
	assert.Equal(t, run.ID, runs[1].ID)
	assert.Equal(t, "failed", runs[1].Status)
	assert.Equal(t, "timed out after 1s", runs[1].Error)
	assert.Equal(t, int64(1000), *runs[1].DurationMS)
	assert.Equal(t, 1, j.ConsecutiveFailures)
	assert.Equal(t, jobdefs.HealthDegraded, j.Health)
	// The run's result comes after the timeout, once the run's process
	// group is killed: its check-in on the job's monitor closes. It
	// changed nothing (the engine's TestEngineTimeoutRetryLateResult
	// checks that on the bubble's clock).
	require.Eventually(t, func() bool {
		list := p.checkins(tok, "job-sleepy")
		return len(list) == 2 && list[1].Status != monitorengine.CheckinInProgress
	}, 30*time.Second, 20*time.Millisecond, "the result of the run timed out never comes")
	assert.Len(t, p.runs(tok, "sleepy"), 2)
	p.noErrors()
}

// TestJobKill9 kills the server during a run: after the restart the run is
// failed "interrupted by a restart", the job retries, and nothing is
// recorded twice.
func TestJobKill9(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "server.db")
	pidFile, leaderFile := filepath.Join(dir, "pid"), filepath.Join(dir, "leader")
	mark := filepath.Join(dir, "ran")
	file := jobsFile(t, dir, `
jobs:
  - id: long
    command: [sh, -c, "test -e `+mark+` && exit 0; touch `+mark+`; echo $$ > `+leaderFile+`; sleep 60 & echo $! > `+pidFile+`; wait"]
    schedule: {type: interval, seconds: 3600}
    timeout: 1m
    retries: 3
    backoff: {base: 100ms}
`)
	p := launch(t, db, "-jobs", file)
	tok := p.token()
	run := p.trigger(tok, "long")
	child := readPID(t, pidFile)
	leader := readPID(t, leaderFile)
	p.kill9()
	// The command dies with the server (its parent-death signal); the
	// process it started is left, until the next start kills it before
	// the retry runs.
	require.Eventually(t, func() bool { return gone(leader) }, 10*time.Second, 20*time.Millisecond, "the command dies with the server")
	require.False(t, gone(child), "the command's child outlives the server")

	p = launch(t, db, "-jobs", file)
	require.Eventually(t, func() bool { return gone(child) }, 10*time.Second, 20*time.Millisecond, "the restart kills what the run left")
	j := p.settled(tok, "long")
	runs := p.runs(tok, "long")
	require.Len(t, runs, 2, "the interrupted run and its retry, once each")
	assert.Equal(t, run.ID, runs[0].ID)
	assert.Equal(t, "failed", runs[0].Status)
	assert.Equal(t, jobengine.ErrInterrupted, runs[0].Error)
	assert.Equal(t, "retry", runs[1].TriggeredBy)
	assert.Equal(t, 1, runs[1].Attempt)
	assert.Equal(t, "succeeded", runs[1].Status)
	assert.Equal(t, jobdefs.HealthHealthy, j.Health)

	// Another restart records nothing more.
	p.term()
	p = launch(t, db, "-jobs", file)
	assert.Len(t, p.runs(tok, "long"), 2)
	p.noErrors()
}

// TestJobSIGTERM stops the server gracefully during a run: the run is
// recorded cancelled and its process group killed.
func TestJobSIGTERM(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "server.db")
	pidFile := filepath.Join(dir, "pid")
	file := jobsFile(t, dir, `
jobs:
  - id: long
    command: [sh, -c, "sleep 60 & echo $! > `+pidFile+`; wait"]
    schedule: {type: interval, seconds: 3600}
    timeout: 1m
`)
	p := launch(t, db, "-jobs", file)
	tok := p.token()
	run := p.trigger(tok, "long")
	grandchild := readPID(t, pidFile)
	assert.Equal(t, 0, p.term())
	require.Eventually(t, func() bool { return gone(grandchild) }, 5*time.Second, 10*time.Millisecond, "the run's processes end with the server")

	p = launch(t, db, "-jobs", file)
	runs := p.runs(tok, "long")
	require.Len(t, runs, 1)
	assert.Equal(t, run.ID, runs[0].ID)
	assert.Equal(t, "cancelled", runs[0].Status)
	j := p.job(tok, "long")
	assert.Equal(t, jobengine.StatusScheduled, j.Status)
	assert.Equal(t, jobdefs.HealthHealthy, j.Health)
	p.noErrors()
}
