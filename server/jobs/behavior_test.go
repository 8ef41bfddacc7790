package jobs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/server/jobs"
	"github.com/fsmgen/fsmgen/server/monitors"
)

// TestRunNext checks when a run starts as soon as the run in progress
// ends: one waits behind it (whatever the overlap), or, with overlap
// queue, a cron time came during it; never for an interval, which counts
// from the run's end.
func TestRunNext(t *testing.T) {
	t.Parallel()
	b := &jobs.Behavior{}
	hourly := monitors.Schedule{Type: monitors.ScheduleCron, Expression: "0 * * * *"}
	interval := monitors.Schedule{Type: monitors.ScheduleInterval, Seconds: 60}
	start := time.Date(2026, 11, 26, 3, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		schedule monitors.Schedule
		overlap  string
		queued   bool
		took     time.Duration
		want     bool
	}{
		{"skip, none behind", hourly, jobs.OverlapSkip, false, 2 * time.Hour, false},
		{"skip, one behind", hourly, jobs.OverlapSkip, true, time.Minute, true},
		{"queue, one behind", hourly, jobs.OverlapQueue, true, time.Minute, true},
		{"queue, no time came", hourly, jobs.OverlapQueue, false, 29 * time.Minute, false},
		{"queue, a time came at the end", hourly, jobs.OverlapQueue, false, 30 * time.Minute, true},
		{"queue, a time came", hourly, jobs.OverlapQueue, false, 45 * time.Minute, true},
		{"queue, interval", interval, jobs.OverlapQueue, false, time.Hour, false},
		{"queue, interval, one behind", interval, jobs.OverlapQueue, true, time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := jobs.Settings{Schedule: tc.schedule, Timezone: "UTC", Timeout: tc.took, Overlap: tc.overlap}
			assert.Equal(t, tc.want, b.RunNext(s, tc.queued, start, start.Add(tc.took)))
			assert.Equal(t, tc.want, b.RunNextAtTimeout(s, tc.queued, start), "at the timeout")
		})
	}
}

// TestCanQueue checks that one manual run at most waits behind the run in
// progress, and only with overlap queue.
func TestCanQueue(t *testing.T) {
	t.Parallel()
	b := &jobs.Behavior{}
	queue := jobs.Settings{Overlap: jobs.OverlapQueue}
	assert.True(t, b.CanQueue(queue, false))
	assert.False(t, b.CanQueue(queue, true), "one at most")
	assert.False(t, b.CanQueue(jobs.Settings{}, false), "skip")
}
