package jobs_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/jobs"
	"github.com/fsmgen/fsmgen/server/monitors"
)

func TestParse(t *testing.T) {
	t.Parallel()
	got, err := jobs.Parse("jobs.yaml", []byte(`
jobs:
  - id: backup
    name: Nightly backup
    command: [/usr/local/bin/backup, --full, "two words"]
    schedule: {type: cron, expression: "30 2 * * *", timezone: Europe/Paris}
    timeout: 30m
    retries: 5
    backoff: {base: 1s, cap: 1m}
    overlap: queue
    enabled: false
  - id: sync
    command: [sync]
    schedule: {type: interval, seconds: 90}
  - id: skipping
    command: [skipping]
    schedule: {type: interval, seconds: 90}
    overlap: skip
`))
	require.NoError(t, err)
	assert.Equal(t, []jobs.Job{
		{ID: "backup", Name: "Nightly backup", Command: []string{"/usr/local/bin/backup", "--full", "two words"},
			Settings: jobs.Settings{Schedule: monitors.Schedule{Type: "cron", Expression: "30 2 * * *"}, Timezone: "Europe/Paris",
				Timeout: 30 * time.Minute, Retries: 5, BackoffBase: time.Second, BackoffCap: time.Minute, Overlap: jobs.OverlapQueue}},
		{ID: "sync", Name: "sync", Command: []string{"sync"}, Enabled: true,
			Settings: jobs.Settings{Schedule: monitors.Schedule{Type: "interval", Seconds: 90}, Timezone: "UTC",
				Timeout: jobs.DefaultTimeout, Retries: jobs.DefaultRetries, BackoffBase: jobs.DefaultBackoffBase, BackoffCap: jobs.DefaultBackoffCap}},
		{ID: "skipping", Name: "skipping", Command: []string{"skipping"}, Enabled: true,
			Settings: jobs.Settings{Schedule: monitors.Schedule{Type: "interval", Seconds: 90}, Timezone: "UTC",
				Timeout: jobs.DefaultTimeout, Retries: jobs.DefaultRetries, BackoffBase: jobs.DefaultBackoffBase, BackoffCap: jobs.DefaultBackoffCap, Overlap: jobs.OverlapSkip}},
	}, got)
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text, want string
	}{
		{"empty", ``, `jobs.yaml:1: the file is empty: give a list of jobs under jobs:`},
		{"not yaml", "jobs: [\n", "jobs.yaml:1: invalid YAML: did not find expected node content"},
		{"unknown top key", "job: []\n", `jobs.yaml:1: unknown key "job": the keys here are jobs`},
		{"jobs not a list", "jobs: 3\n", `jobs.yaml:1: want a list of jobs, each a mapping with an id`},
		{"job not a mapping", "jobs:\n  - 3\n", `jobs.yaml:2: want a mapping of keys, found a number`},
		{"unknown job key", "jobs:\n  - id: a\n    colour: red\n", `jobs.yaml:3: unknown key "colour": the keys here are id, name, command, schedule, timeout, retries, backoff, overlap, enabled`},
		{"unknown schedule key", "jobs:\n  - id: a\n    command: [a]\n    schedule: {type: interval, every: 5}\n", `jobs.yaml:4: unknown key "every": the keys here are type, expression, timezone, seconds`},
		{"no id", "jobs:\n  - command: [a]\n    schedule: {type: interval, seconds: 5}\n", `jobs.yaml:2: job 1 has no id: give it one, as in id: nightly-backup`},
		{"bad id", "jobs:\n  - id: Big Job\n    command: [a]\n    schedule: {type: interval, seconds: 5}\n", `jobs.yaml:2: id "Big Job": give 1 to 64 of a-z, 0-9, - and _, starting with a letter or digit`},
		{"no command", "jobs:\n  - id: a\n    schedule: {type: interval, seconds: 5}\n", `jobs.yaml:2: job "a" has no command: give the program and its arguments, as in command: [/usr/bin/backup, --full]`},
		{"command a string", "jobs:\n  - id: a\n    command: backup --full\n    schedule: {type: interval, seconds: 5}\n", `jobs.yaml:3: command: give a list, the program and its arguments, as in [/usr/bin/backup, --full] (no shell runs it)`},
		{"no schedule", "jobs:\n  - id: a\n    command: [a]\n", `jobs.yaml:2: job "a" has no schedule: give {type: cron, expression: "0 3 * * *"} or {type: interval, seconds: 3600}`},
		{"bad schedule type", "jobs:\n  - id: a\n    command: [a]\n    schedule: {type: weekly}\n", `jobs.yaml:4: schedule type "weekly": give cron (with an expression) or interval (with seconds)`},
		{"bad cron", "jobs:\n  - id: a\n    command: [a]\n    schedule: {type: cron, expression: \"60 * * * *\"}\n", `jobs.yaml:4: schedule: "60 * * * *": minute field "60": 60 is out of range 0-59`},
		{"bad zone", "jobs:\n  - id: a\n    command: [a]\n    schedule: {type: cron, expression: \"@daily\", timezone: Mars/Olympus}\n", `jobs.yaml:4: schedule: "Mars/Olympus" is not an IANA time zone name such as Europe/Berlin or UTC`},
		{"cron without expression", "jobs:\n  - id: a\n    command: [a]\n    schedule: {type: cron}\n", `jobs.yaml:4: schedule: a cron schedule needs an expression, as in expression: "30 2 * * *"`},
		{"interval with expression", "jobs:\n  - id: a\n    command: [a]\n    schedule: {type: interval, expression: \"@daily\"}\n", `jobs.yaml:4: schedule: an interval schedule takes only seconds: give type: cron for an expression`},
		{"zero interval", "jobs:\n  - id: a\n    command: [a]\n    schedule: {type: interval, seconds: 0}\n", `jobs.yaml:4: schedule: interval of 0 seconds: must be at least 1 second`},
		{"bad timeout", "jobs:\n  - id: a\n    command: [a]\n    schedule: {type: interval, seconds: 5}\n    timeout: 5x\n", `jobs.yaml:5: timeout: "5x" is not a duration: give one like 30s, 5m or 1h30m`},
		{"negative timeout", "jobs:\n  - id: a\n    command: [a]\n    schedule: {type: interval, seconds: 5}\n    timeout: -1s\n", `jobs.yaml:5: timeout: -1s is not positive: give a duration like 30s, 5m or 1h30m`},
		{"bad retries", "jobs:\n  - id: a\n    command: [a]\n    schedule: {type: interval, seconds: 5}\n    retries: many\n", `jobs.yaml:5: retries: "many" is not a whole number`},
		{"too many retries", "jobs:\n  - id: a\n    command: [a]\n    schedule: {type: interval, seconds: 5}\n    retries: 101\n", `jobs.yaml:5: retries: 101 is not between 0 and 100`},
		{"cap below base", "jobs:\n  - id: a\n    command: [a]\n    schedule: {type: interval, seconds: 5}\n    backoff: {base: 1m, cap: 1s}\n", `jobs.yaml:5: backoff cap: 1s is below the base 1m0s: give a cap at least the base`},
		{"bad overlap", "jobs:\n  - id: a\n    command: [a]\n    schedule: {type: interval, seconds: 5}\n    overlap: parallel\n", `jobs.yaml:5: overlap: "parallel" is not skip or queue (what becomes due while the job's run is in progress: skipped, or run once it ends)`},
		{"overlap a list", "jobs:\n  - id: a\n    command: [a]\n    schedule: {type: interval, seconds: 5}\n    overlap: [queue]\n", `jobs.yaml:5: overlap: give skip or queue`},
		{"bad enabled", "jobs:\n  - id: a\n    command: [a]\n    schedule: {type: interval, seconds: 5}\n    enabled: yes\n", `jobs.yaml:5: enabled: "yes" is not true or false`},
		{"twice", "jobs:\n  - id: a\n    command: [a]\n    schedule: {type: interval, seconds: 5}\n  - id: a\n    command: [b]\n    schedule: {type: interval, seconds: 5}\n", `jobs.yaml:5: job "a" is declared twice (first at line 2): give each job its own id`},
		{"every problem", "jobs:\n  - id: a\n    command: [a]\n    schedule: {type: interval, seconds: 5}\n    timeout: soon\n    retries: -1\n", "jobs.yaml:5: timeout: \"soon\" is not a duration: give one like 30s, 5m or 1h30m\njobs.yaml:6: retries: -1 is not between 0 and 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := jobs.Parse("jobs.yaml", []byte(tc.text))
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	_, err := jobs.Load(filepath.Join(t.TempDir(), "missing.yaml"))
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "read the jobs file: ")
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	var r jobs.Registry
	s := jobs.Settings{Schedule: monitors.Schedule{Type: "interval", Seconds: 60}, Timeout: time.Minute, Retries: 3, BackoffBase: time.Second, BackoffCap: time.Minute}
	noop := func(ctx context.Context) (string, error) { return "", nil }
	require.NoError(t, r.Register(jobs.Job{ID: "go-job", Func: noop, Settings: s, Enabled: true}))
	for _, tc := range []struct {
		name string
		job  jobs.Job
		want string
	}{
		{"twice", jobs.Job{ID: "go-job", Func: noop, Settings: s}, `job "go-job" is registered twice: give each job its own id`},
		{"nothing to run", jobs.Job{ID: "x", Settings: s}, `job "x": no command: give the program and its arguments, as in [/usr/bin/backup, --full]`},
		{"both", jobs.Job{ID: "x", Func: noop, Command: []string{"a"}, Settings: s}, `job "x": both a command and a Go function: give one`},
		{"no timeout", jobs.Job{ID: "x", Func: noop, Settings: jobs.Settings{Schedule: s.Schedule, Retries: 0}}, `job "x": timeout 0s: give a positive duration, as in 30m`},
		{"bad schedule", jobs.Job{ID: "x", Func: noop, Settings: jobs.Settings{Timeout: time.Second}}, `job "x": schedule: no type: give "cron" with an expression, or "interval" with seconds`},
		{"bad overlap", jobs.Job{ID: "x", Func: noop, Settings: withOverlap(s, "allow")}, `job "x": overlap "allow": give skip or queue`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := r.Register(tc.job)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
	require.NoError(t, r.Register(jobs.Job{ID: "skipping", Func: noop, Settings: withOverlap(s, "skip"), Enabled: true}))
	require.NoError(t, r.Register(jobs.Job{ID: "queueing", Func: noop, Settings: withOverlap(s, "queue"), Enabled: true}))
	require.Len(t, r.Jobs(), 3)
	assert.Equal(t, "go-job", r.Jobs()[0].Name, "the name defaults to the id")
	assert.Equal(t, jobs.OverlapSkip, r.Jobs()[1].Settings.Overlap, "skip is the zero value")
	assert.Equal(t, "skip", r.Jobs()[1].Settings.OverlapName())
	assert.Equal(t, jobs.OverlapQueue, r.Jobs()[2].Settings.Overlap)
}

func withOverlap(s jobs.Settings, overlap string) jobs.Settings {
	s.Overlap = overlap
	return s
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	b := &jobs.Behavior{}
	s := jobs.Settings{BackoffBase: 5 * time.Second, BackoffCap: 30 * time.Second}
	for attempt, want := range map[int]time.Duration{1: 5 * time.Second, 2: 10 * time.Second, 3: 20 * time.Second, 4: 30 * time.Second, 60: 30 * time.Second} {
		assert.Equal(t, want, b.Backoff(s, attempt), "retry %d", attempt)
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		failures int
		enabled  bool
		want     string
	}{
		{0, true, jobs.HealthHealthy},
		{1, true, jobs.HealthDegraded},
		{2, true, jobs.HealthDegraded},
		{3, true, jobs.HealthUnhealthy},
		{9, true, jobs.HealthUnhealthy},
		{0, false, jobs.HealthDegraded},
		{3, false, jobs.HealthUnhealthy},
	} {
		assert.Equal(t, tc.want, jobs.Health(tc.failures, tc.enabled), "%d failures, enabled %v", tc.failures, tc.enabled)
	}
}
