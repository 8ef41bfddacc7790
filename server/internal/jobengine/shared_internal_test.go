package jobengine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// TestTakeOverFailed checks how a failed takeover is logged: a warning
// when this instance was too slow for its lease or paused, or when the
// engine refused a write (and logged why), an error when the store failed
// within the lease.
func TestTakeOverFailed(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name  string
		err   error
		until time.Time
		want  slog.Level
	}{
		{"the lease ran out while loading", fmt.Errorf("read the jobs: %w", context.DeadlineExceeded), now, slog.LevelWarn},
		{"paused in a transaction", fmt.Errorf("write: %w: %w", store.ErrPaused, errors.New("FATAL")), now.Add(time.Second), slog.LevelWarn},
		{"a write refused", ErrStopped, now.Add(time.Second), slog.LevelWarn},
		{"the store failed within the lease", errors.New("read the jobs: connection refused"), now.Add(time.Second), slog.LevelError},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			level, msg := takeOverFailed(tt.err, tt.until, now)
			assert.Equal(t, tt.want, level)
			assert.Contains(t, msg, "take the jobs over")
		})
	}
}
