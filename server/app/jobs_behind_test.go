package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/pgtest"
	jobdefs "github.com/fsmgen/fsmgen/server/jobs"
)

// TestJobsBehindSurvivesKill kills the server (SIGKILL) while a run of an
// overlap: queue job is in progress with a manual run queued behind it:
// started again, the server closes the killed run as interrupted and
// starts the run that waited, which runs once, to its end.
func TestJobsBehindSurvivesKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gate := filepath.Join(dir, "go")
	run := `echo start >> ` + dir + `/$0; while [ ! -e ` + gate + ` ]; do sleep 0.02; done; echo end >> ` + dir + `/$0`
	jobs := jobsFile(t, dir, `
jobs:
  - id: queueing
    command: [sh, -c, '`+run+`', queueing]
    schedule: {type: cron, expression: "0 3 1 1 *"}
    overlap: queue
`)
	db := newDB(t)
	p := launch(t, db, "-jobs", jobs)
	tok := p.token()
	if pgtest.OnPostgres() {
		require.Eventually(t, p.runsJobs, time.Minute, 20*time.Millisecond, "the server takes the jobs")
	}
	first := p.trigger(tok, "queueing")
	require.Equal(t, jobdefs.RunRunning, first.Status)
	behind := p.trigger(tok, "queueing")
	require.Equal(t, jobdefs.RunQueued, behind.Status)
	p.kill9()

	p = launch(t, db, "-jobs", jobs)
	if pgtest.OnPostgres() {
		require.Eventually(t, p.runsJobs, time.Minute, 20*time.Millisecond, "the server takes the jobs")
	}
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	require.Eventually(t, func() bool {
		runs := p.runs(tok, "queueing")
		return len(runs) == 2 && runs[1].Status == jobdefs.RunSucceeded
	}, time.Minute, 20*time.Millisecond, "the run that waited runs")
	p.settled(tok, "queueing")
	runs := p.runs(tok, "queueing")
	require.Len(t, runs, 2, "the killed run and the one that waited, no other")
	assert.Equal(t, []string{first.ID, behind.ID}, []string{runs[0].ID, runs[1].ID})
	assert.Equal(t, jobdefs.RunFailed, runs[0].Status, "the killed run is closed as interrupted")
	assert.Equal(t, jobdefs.TriggerManual, runs[1].TriggeredBy)
	marks, err := os.ReadFile(filepath.Join(dir, "queueing"))
	require.NoError(t, err)
	// The killed run may have been killed before it wrote its start.
	assert.Equal(t, 1, strings.Count(string(marks), "end"), "the run that waited ran once, to its end: %q", marks)
	assert.True(t, strings.HasSuffix(string(marks), "start\nend\n"), "%q", marks)
	p.noErrors()
}
