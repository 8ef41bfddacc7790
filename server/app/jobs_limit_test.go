package app

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/jobengine"
	"github.com/fsmgen/fsmgen/server/internal/pgtest"
	jobdefs "github.com/fsmgen/fsmgen/server/jobs"
)

// TestJobsMaxRunning runs the server with -jobs-max-running 1 and two
// command jobs that wait for a file: the second trigger is answered
// queued, /health counts it, it starts when the first run ends, and a
// queued run is cancelled without running.
func TestJobsMaxRunning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gate := filepath.Join(dir, "go")
	marks := filepath.Join(dir, "marks")
	wait := `while [ ! -e ` + gate + ` ]; do sleep 0.02; done; echo "$0" >> ` + marks
	p := launch(t, newDB(t), "-jobs-max-running", "1", "-jobs", jobsFile(t, dir, `
jobs:
  - id: first
    command: [sh, -c, '`+wait+`', first]
    schedule: {type: cron, expression: "0 3 1 1 *"}
  - id: second
    command: [sh, -c, '`+wait+`', second]
    schedule: {type: cron, expression: "0 3 1 1 *"}
  - id: third
    command: [sh, -c, '`+wait+`', third]
    schedule: {type: cron, expression: "0 3 1 1 *"}
`))
	tok := p.token()
	if pgtest.OnPostgres() {
		require.Eventually(t, p.runsJobs, time.Minute, 20*time.Millisecond, "the server takes the jobs")
	}

	first := p.trigger(tok, "first")
	assert.Equal(t, jobdefs.RunRunning, first.Status)
	second := p.trigger(tok, "second")
	assert.Equal(t, jobdefs.RunQueued, second.Status)
	third := p.trigger(tok, "third")
	assert.Equal(t, jobdefs.RunQueued, third.Status)
	assert.Equal(t, jobengine.StatusQueued, p.job(tok, "second").Status)
	p.call(tok, "POST", "/api/jobs/second/trigger", "", http.StatusConflict, nil)
	var health struct {
		Components struct {
			Jobs struct {
				Running int `json:"running"`
				Queued  int `json:"queued"`
			} `json:"jobs"`
		} `json:"components"`
	}
	p.call("", "GET", "/health", "", http.StatusOK, &health)
	assert.Equal(t, 1, health.Components.Jobs.Running)
	assert.Equal(t, 2, health.Components.Jobs.Queued)

	var cancelled struct {
		Run *jobengine.RunView `json:"run"`
	}
	p.call(tok, "POST", "/api/jobs/runs/"+third.ID+"/cancel", "", http.StatusOK, &cancelled)
	assert.Equal(t, jobdefs.RunCancelled, cancelled.Run.Status)

	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	p.settled(tok, "first")
	p.settled(tok, "second")
	runs := p.runs(tok, "second")
	require.Len(t, runs, 1)
	assert.Equal(t, second.ID, runs[0].ID)
	assert.Equal(t, jobdefs.RunSucceeded, runs[0].Status)
	firstRuns := p.runs(tok, "first")
	require.Len(t, firstRuns, 1)
	assert.False(t, runs[0].StartedAt.Before(*firstRuns[0].FinishedAt), "second started once first had ended")
	out, err := os.ReadFile(marks)
	require.NoError(t, err)
	assert.Equal(t, "first\nsecond\n", string(out), "third, cancelled while queued, never ran")
	assert.Equal(t, jobdefs.RunCancelled, p.runs(tok, "third")[0].Status)
	p.noErrors()
}

// TestJobsOverlap runs two command jobs that wait for a file, one with
// overlap: queue and one with the default (skip), through the API: a
// trigger during a run is answered queued for the first and 409 for the
// second, a third is refused, and the run that waited starts once the
// first has ended, never beside it.
func TestJobsOverlap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gate := filepath.Join(dir, "go")
	run := `echo start >> ` + dir + `/$0; while [ ! -e ` + gate + ` ]; do sleep 0.02; done; echo end >> ` + dir + `/$0`
	p := launch(t, newDB(t), "-jobs", jobsFile(t, dir, `
jobs:
  - id: queueing
    command: [sh, -c, '`+run+`', queueing]
    schedule: {type: cron, expression: "0 3 1 1 *"}
    overlap: queue
  - id: skipping
    command: [sh, -c, '`+run+`', skipping]
    schedule: {type: cron, expression: "0 3 1 1 *"}
`))
	tok := p.token()
	if pgtest.OnPostgres() {
		require.Eventually(t, p.runsJobs, time.Minute, 20*time.Millisecond, "the server takes the jobs")
	}
	assert.Equal(t, "queue", p.job(tok, "queueing").Overlap)
	assert.Equal(t, "skip", p.job(tok, "skipping").Overlap)

	first := p.trigger(tok, "queueing")
	assert.Equal(t, jobdefs.RunRunning, first.Status)
	behind := p.trigger(tok, "queueing")
	assert.Equal(t, jobdefs.RunQueued, behind.Status)
	j := p.job(tok, "queueing")
	assert.Equal(t, jobengine.StatusRunning, j.Status)
	assert.Equal(t, behind.ID, j.LastRun.ID)
	var refused struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	p.call(tok, "POST", "/api/jobs/queueing/trigger", "", http.StatusConflict, &refused)
	assert.Equal(t, "job_running", refused.Error.Code)
	assert.Contains(t, refused.Error.Message, "one queued behind it ("+behind.ID+")")

	assert.Equal(t, jobdefs.RunRunning, p.trigger(tok, "skipping").Status)
	p.call(tok, "POST", "/api/jobs/skipping/trigger", "", http.StatusConflict, &refused)
	assert.Contains(t, refused.Error.Message, "with overlap: queue in the jobs file")

	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	require.Eventually(t, func() bool {
		runs := p.runs(tok, "queueing")
		return len(runs) == 2 && runs[1].Status == jobdefs.RunSucceeded
	}, 30*time.Second, 20*time.Millisecond, "the run that waited runs")
	p.settled(tok, "queueing")
	p.settled(tok, "skipping")
	runs := p.runs(tok, "queueing")
	require.Len(t, runs, 2)
	assert.Equal(t, []string{first.ID, behind.ID}, []string{runs[0].ID, runs[1].ID})
	assert.Equal(t, jobdefs.TriggerManual, runs[1].TriggeredBy)
	assert.False(t, runs[1].StartedAt.Before(*runs[0].FinishedAt), "the second started once the first had ended")
	marks, err := os.ReadFile(filepath.Join(dir, "queueing"))
	require.NoError(t, err)
	assert.Equal(t, "start\nend\nstart\nend\n", string(marks), "one run at a time")
	assert.Len(t, p.runs(tok, "skipping"), 1)
	p.noErrors()
}
