package app

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/proctest"
	"github.com/fsmgen/fsmgen/server/jobs"
	"github.com/fsmgen/fsmgen/server/monitors"
)

// sweepJob is a Go job whose runs say what they did.
func sweepJob(id string) jobs.Job {
	return jobs.Job{ID: id, Name: "Sweep", Enabled: true,
		Settings: jobs.Settings{Schedule: monitors.Schedule{Type: "cron", Expression: "0 3 * * *"}, Timezone: "UTC",
			Timeout: time.Minute, Retries: 1, BackoffBase: time.Second, BackoffCap: time.Second},
		Func: func(ctx context.Context) (string, error) { return "swept 3 files", nil },
	}
}

// TestGoJobs runs the server as a program of its own does (Main with
// WithJobs, through run): its Go job runs beside the file's command job
// when triggered through the API, and its run records the function's
// output.
func TestGoJobs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "jobs.yaml")
	require.NoError(t, os.WriteFile(file, []byte("jobs:\n  - id: echo\n    command: [\"echo\", \"hello\"]\n    schedule: {type: cron, expression: \"0 4 * * *\"}\n"), 0o644))
	var ex extras
	WithJobs(sweepJob("sweep"))(&ex)

	ctx, cancel := context.WithCancel(context.Background())
	out, outW := io.Pipe()
	addr := proctest.FreeAddr(t)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", addr, "-db", filepath.Join(dir, "server.db"), "-jobs", file}, outW, io.Discard, ex)
		outW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	go io.Copy(io.Discard, out)
	token, ok := strings.CutPrefix(strings.TrimSpace(line), "token: ")
	require.True(t, ok, "the server's first line: %q", line)

	p := &proc{t: t, addr: addr, url: "http://" + addr}
	require.Eventually(t, func() bool {
		resp, err := http.Get(p.url + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 20*time.Millisecond, "the server serves")
	assert.Equal(t, "Sweep", p.job(token, "sweep").Name, "the Go job is listed")
	assert.Equal(t, "echo", p.job(token, "echo").ID, "beside the file's")
	p.trigger(token, "sweep")
	p.settled(token, "sweep")
	runs := p.runs(token, "sweep")
	require.Len(t, runs, 1)
	assert.Equal(t, jobs.RunSucceeded, runs[0].Status)
	assert.Equal(t, "swept 3 files", runs[0].Output)
}

// TestGoJobsRefused checks that a Go job whose id the file has too, or
// that does not check, stops the server at start, saying why.
func TestGoJobsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "jobs.yaml")
	require.NoError(t, os.WriteFile(file, []byte("jobs:\n  - id: sweep\n    command: [\"true\"]\n    schedule: {type: cron, expression: \"0 4 * * *\"}\n"), 0o644))
	noFunc := sweepJob("nofunc")
	noFunc.Func = nil
	tests := []struct {
		name string
		job  jobs.Job
		want string
	}{
		{"an id of the file's", sweepJob("sweep"), `the program's Go jobs: job "sweep" is registered twice`},
		{"neither a command nor a function", noFunc, `the program's Go jobs: job "nofunc"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ex extras
			WithJobs(tt.job)(&ex)
			err := run(context.Background(), []string{"-addr", proctest.FreeAddr(t), "-db", filepath.Join(t.TempDir(), "server.db"), "-jobs", file}, io.Discard, io.Discard, ex)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
