// Package monitors is the cron monitors' behaviour, written by hand: the
// settings a monitor checks its job against, and the guards and effects
// of the generated machine (package gen/monitor) as pure functions of
// values.
package monitors

import "time"

// Settings are what a monitor checks its job against.
type Settings struct {
	// Schedule says when the job runs.
	Schedule Schedule `json:"schedule"`
	// Timezone names the IANA time zone a cron schedule is read in.
	Timezone string `json:"timezone"`
	// Margin is how long after its expected time a check-in may arrive.
	Margin time.Duration `json:"margin"`
	// MaxRuntime is how long a started run may take.
	MaxRuntime time.Duration `json:"max_runtime"`
	// FailureThreshold is how many consecutive failed check-ins make the
	// job failing; RecoveryThreshold how many consecutive good ones make
	// it healthy again.
	FailureThreshold  int `json:"failure_threshold"`
	RecoveryThreshold int `json:"recovery_threshold"`
}

// Schedule is a cron expression or an interval.
type Schedule struct {
	// Type is "cron" or "interval".
	Type string `json:"type"`
	// Expression is the cron expression of a "cron" schedule.
	Expression string `json:"expression,omitempty"`
	// Seconds is the period of an "interval" schedule.
	Seconds int `json:"seconds,omitempty"`
}
