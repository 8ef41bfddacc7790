package app

// The background jobs on two servers sharing one Postgres: one instance
// runs them, the other forwards to it, and takes them over when it is
// killed with SIGKILL during a run.

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/jobengine"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/pgtest"
)

// runsJobs reports whether a server says it runs the jobs.
func (p *proc) runsJobs() bool {
	p.t.Helper()
	var h struct {
		Components struct {
			Jobs struct {
				Status string `json:"status"`
				Active *bool  `json:"active"`
			} `json:"jobs"`
		} `json:"components"`
	}
	p.call("", "GET", "/health", "", http.StatusOK, &h)
	require.NotNil(p.t, h.Components.Jobs.Active, "a server on Postgres says whether it runs the jobs")
	assert.Equal(p.t, "ok", h.Components.Jobs.Status, "the jobs are healthy, whichever instance runs them")
	return *h.Components.Jobs.Active
}

// checkRuns checks a job's history: each run recorded once, no two
// overlapping, at most one interrupted; it returns the runs.
func checkRuns(t *testing.T, p *proc, token, id string) []*jobengine.RunView {
	t.Helper()
	runs := p.runs(token, id)
	seen := map[string]bool{}
	interrupted := 0
	for i, r := range runs {
		assert.False(t, seen[r.ID], "%s: run %s recorded twice", id, r.ID)
		seen[r.ID] = true
		if r.Error == jobengine.ErrInterruptedInstance {
			interrupted++
		}
		if i > 0 {
			prev := runs[i-1]
			if assert.NotNil(t, prev.FinishedAt, "%s: run %d is not the last, and still runs", id, i-1) {
				assert.False(t, r.StartedAt.Before(*prev.FinishedAt), "%s: run %d starts before run %d ended", id, i, i-1)
			}
		}
	}
	assert.LessOrEqual(t, interrupted, 1, "%s: closed as interrupted once at most", id)
	return runs
}

// checkLog checks the lines the runs of a job appended: each start
// followed by its end, never by another start (two runs at once), but for
// at most cut runs killed before their end (with the instance that ran
// them); it returns how many runs started.
func checkLog(t *testing.T, path string, cut int) int {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Fields(string(data))
	starts, unfinished := 0, 0
	for i, l := range lines {
		if l == "start" {
			starts++
			if i > 0 && lines[i-1] != "end" {
				unfinished++
			}
		}
	}
	assert.LessOrEqual(t, unfinished, cut, "runs that started while another ran, or that never ended: %q", lines)
	return starts
}

// TestJobsSeveralInstances runs two servers with the same jobs on one
// Postgres (leases of a second): one instance runs the jobs, each
// scheduled run once, none overlapping, checking in to the job's monitor
// wherever it was created; a trigger through the other instance runs once
// on the first; then the first is killed with SIGKILL during that run, and
// the other takes the jobs over within the lease time, closes the
// interrupted run once, retries it, and records nothing twice.
func TestJobsSeveralInstances(t *testing.T) {
	if pgtest.OnPostgres() {
		t.Skip("runs on Postgres in the first run already")
	}
	const (
		lease = time.Second
		slack = 1500 * time.Millisecond // the instance's last renewal, the claim, the load
	)
	dir := t.TempDir()
	tickLog := filepath.Join(dir, "ticks")
	pidFile := filepath.Join(dir, "pid")
	mark := filepath.Join(dir, "ran")
	file := jobsFile(t, dir, `
jobs:
  - id: tick
    command: [sh, -c, "echo start >> `+tickLog+`; sleep 0.3; echo end >> `+tickLog+`"]
    schedule: {type: interval, seconds: 1}
    timeout: 10s
    backoff: {base: 100ms}
  - id: long
    command: [sh, -c, "test -e `+mark+` && exit 0; touch `+mark+`; echo $$ > `+pidFile+`; sleep 60"]
    schedule: {type: cron, expression: "0 3 * * *"}
    timeout: 1m
    retries: 3
    backoff: {base: 100ms}
`)
	db := pgtest.DB(t)
	a := launch(t, db, "-lease", lease.String(), "-jobs", file)
	tok := a.token()
	b := launchShared(t, db, false, "-lease", lease.String(), "-jobs", file)
	require.Eventually(t, func() bool {
		na, nb := a.shards(), b.shards()
		return na > 0 && nb > 0 && na+nb == 64
	}, 20*time.Second, 50*time.Millisecond, "the instances share the shards")
	var holder, other *proc
	require.Eventually(t, func() bool {
		switch ra, rb := a.runsJobs(), b.runsJobs(); {
		case ra && !rb:
			holder, other = a, b
		case rb && !ra:
			holder, other = b, a
		default:
			return false
		}
		return true
	}, 10*time.Second, 50*time.Millisecond, "one instance runs the jobs")

	// The scheduled runs: once each, one at a time, on one instance.
	require.Eventually(t, func() bool { return len(other.runs(tok, "tick")) >= 3 }, 20*time.Second, 50*time.Millisecond)
	for _, p := range []*proc{a, b} {
		assert.Equal(t, jobengine.StatusScheduled, p.job(tok, "long").Status, "both instances list the jobs from the database")
	}
	checkRuns(t, other, tok, "tick")
	runs := len(holder.runs(tok, "tick"))
	starts := checkLog(t, tickLog, 0)
	assert.Contains(t, []int{starts, starts + 1}, runs, "each run recorded once (the last may not have started its process yet)")
	checkins := other.checkins(tok, "job-tick")
	assert.GreaterOrEqual(t, len(checkins), runs-1, "the runs check in to the job's monitor")
	for _, c := range checkins {
		assert.Equal(t, monitorengine.SourceJob, c.Source)
	}

	// A trigger through the other instance runs once, on the holder.
	run := other.trigger(tok, "long")
	orphan := readPID(t, pidFile)
	assert.Equal(t, "running", run.Status)
	longRuns := other.runs(tok, "long")
	require.Len(t, longRuns, 1, "the trigger ran once")
	assert.Equal(t, run.ID, longRuns[0].ID)
	assert.Equal(t, jobengine.StatusRunning, other.job(tok, "long").Status)
	other.call(tok, "POST", "/api/jobs/long/trigger", "", http.StatusConflict, nil)

	// The holder dies during the run; the other takes the jobs over.
	holder.kill9()
	killed := time.Now()
	// The run's command dies with the holder (its parent-death signal).
	require.Eventually(t, func() bool { return gone(orphan) }, 10*time.Second, 20*time.Millisecond, "the run's command dies with its instance")
	require.Eventually(t, other.runsJobs, lease+slack+2*time.Second, 20*time.Millisecond)
	took := time.Since(killed)
	t.Logf("took the jobs over %s after the kill", took)
	assert.Less(t, took, lease+slack, "taken over within the lease time")

	j := other.settled(tok, "long")
	longRuns = checkRuns(t, other, tok, "long")
	require.Len(t, longRuns, 2, "the interrupted run and its retry, once each")
	assert.Equal(t, run.ID, longRuns[0].ID)
	assert.Equal(t, "failed", longRuns[0].Status)
	assert.Equal(t, jobengine.ErrInterruptedInstance, longRuns[0].Error)
	assert.Equal(t, []any{"retry", 1, "succeeded"}, []any{longRuns[1].TriggeredBy, longRuns[1].Attempt, longRuns[1].Status})
	assert.Zero(t, j.ConsecutiveFailures, "the retry succeeded")

	// The scheduled runs go on, on the survivor alone.
	before := len(other.runs(tok, "tick"))
	require.Eventually(t, func() bool { return len(other.runs(tok, "tick")) >= before+2 }, 20*time.Second, 50*time.Millisecond)
	ticks := checkRuns(t, other, tok, "tick")
	assert.True(t, slices.ContainsFunc(ticks, func(r *jobengine.RunView) bool { return r.StartedAt.After(killed) && r.Status != "running" }), "ticks after the takeover")
	// A tick that ran when the holder was killed died with it (its
	// command gets SIGKILL with the server), before its end.
	checkLog(t, tickLog, 1)
	other.noErrors()
}
