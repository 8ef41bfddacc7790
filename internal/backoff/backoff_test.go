package backoff_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/backoff"
)

func TestExponential(t *testing.T) {
	t.Parallel()
	const maxDuration = time.Duration(math.MaxInt64)
	tests := []struct {
		name        string
		base, limit time.Duration
		attempt     int
		want        time.Duration
	}{
		{"the first retry waits the base", time.Second, time.Minute, 1, time.Second},
		{"the second doubles it", time.Second, time.Minute, 2, 2 * time.Second},
		{"the fifth", time.Second, time.Minute, 5, 16 * time.Second},
		{"the doubling that passes the limit stops at it", time.Second, time.Minute, 7, time.Minute},
		{"and stays there", time.Second, time.Minute, 1000, time.Minute},
		{"an attempt below 1 waits the base", time.Second, time.Minute, 0, time.Second},
		{"a base over the limit is cut to it", time.Hour, time.Minute, 1, time.Minute},
		{"a base equal to the limit", time.Minute, time.Minute, 3, time.Minute},
		{"a limit that is no power of two times the base", 30 * time.Second, 6 * time.Hour, 10, 4*time.Hour + 16*time.Minute},
		{"past it", 30 * time.Second, 6 * time.Hour, 11, 6 * time.Hour},
		{"a limit near the largest duration does not overflow", time.Nanosecond, maxDuration, 64, maxDuration},
		{"nor at the bit before", time.Nanosecond, maxDuration, 63, 1 << 62},
		{"a zero base stays zero", 0, time.Minute, 5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, backoff.Exponential(tt.base, tt.limit, tt.attempt))
		})
	}
}
