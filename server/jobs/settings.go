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
}
