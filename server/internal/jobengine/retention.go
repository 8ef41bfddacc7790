package jobengine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/jobs"
	"github.com/fsmgen/fsmgen/server/monitors"
)

// RetentionID is the id of the built-in retention job.
const RetentionID = "retention"

// Retention is the built-in job that deletes the runs, and the check-ins
// of the jobs' monitors, older than keep; it runs every hour.
func Retention(st store.Store, keep time.Duration, now func() time.Time) *jobs.Job {
	return &jobs.Job{
		ID:      RetentionID,
		Name:    "Delete old runs and job check-ins",
		Enabled: true,
		Settings: jobs.Settings{
			Schedule: monitors.Schedule{Type: monitors.ScheduleInterval, Seconds: 3600}, Timezone: "UTC",
			Timeout: 5 * time.Minute, Retries: jobs.DefaultRetries,
			BackoffBase: jobs.DefaultBackoffBase, BackoffCap: jobs.DefaultBackoffCap,
		},
		Func: func(ctx context.Context) (string, error) {
			before := now().Add(-keep)
			mons, err := st.Monitors(ctx)
			if err != nil {
				return "", fmt.Errorf("list the monitors: %w", err)
			}
			b := &store.Batch{}
			b.Add(store.DeleteRuns{Before: before})
			n := 0
			for _, m := range mons {
				if strings.HasPrefix(m.Slug, "job-") {
					b.Add(store.DeleteCheckins{MonitorID: m.ID, Before: before})
					n++
				}
			}
			if err := st.Apply(ctx, b); err != nil {
				return "", fmt.Errorf("delete the old runs: %w", err)
			}
			return fmt.Sprintf("deleted the runs, and the check-ins of %d job monitors, from before %s", n, before.UTC().Format(time.RFC3339)), nil
		},
	}
}
