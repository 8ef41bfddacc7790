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
