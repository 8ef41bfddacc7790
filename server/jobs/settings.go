package jobs

import (
	"time"

	"github.com/fsmgen/fsmgen/server/monitors"
)

// Settings are what a job's machine (package gen/job) decides with: when
// the job runs, how long a run may take and how a failed run is retried.
type Settings struct {
	// Schedule says when the job runs; Timezone names the IANA time zone
	// a cron schedule is read in.
	Schedule monitors.Schedule `json:"schedule"`
	Timezone string            `json:"timezone"`
	// Timeout is how long a run may take.
	Timeout time.Duration `json:"timeout"`
	// Retries is how many times a failed run is tried again.
	Retries int `json:"retries"`
	// BackoffBase is the wait before the first retry; it doubles for each
	// retry, up to BackoffCap.
	BackoffBase time.Duration `json:"backoff_base"`
	BackoffCap  time.Duration `json:"backoff_cap"`
	// Overlap says what happens to a run that becomes due while the job's
	// run is in progress (runs of one job never overlap): OverlapSkip (the
	// zero value) skips it, OverlapQueue has it wait behind the run.
	Overlap string `json:"overlap,omitempty"`
}

// The overlap of a job's settings.
const (
	// OverlapSkip: a manual run is refused and a scheduled time passes
	// without a run while the job's run is in progress. It is the zero
	// value, so that the settings saved before there was an overlap read
	// as they were; Registry.Register takes "skip" (OverlapSkipName) for
	// it.
	OverlapSkip = ""
	// OverlapQueue: one run at most waits behind the run in progress (a
	// manual run, or a cron schedule's time that passed during it) and
	// starts as soon as it ends.
	OverlapQueue = "queue"
	// OverlapSkipName is OverlapSkip as the jobs file and the API name it.
	OverlapSkipName = "skip"
)

// OverlapName is the overlap of s as the jobs file and the API name it:
// skip or queue.
func (s Settings) OverlapName() string {
	if s.Overlap == OverlapSkip {
		return OverlapSkipName
	}
	return s.Overlap
}
