package schedule

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewInterval(t *testing.T) {
	for _, tt := range []struct {
		seconds int
		want    time.Duration
		err     string
	}{
		{1, time.Second, ""},
		{300, 5 * time.Minute, ""},
		{366 * 24 * 3600, 366 * 24 * time.Hour, ""},
		{0, 0, "interval of 0 seconds: must be at least 1 second"},
		{-60, 0, "interval of -60 seconds: must be at least 1 second"},
		{366*24*3600 + 1, 0, "interval of 31622401 seconds: must be at most 31622400 seconds (366 days)"},
		{math.MaxInt, 0, fmt.Sprintf("interval of %d seconds: must be at most 31622400 seconds (366 days)", math.MaxInt)},
	} {
		i, err := NewInterval(tt.seconds)
		if tt.err != "" {
			assert.EqualError(t, err, tt.err)
			assert.Zero(t, i)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tt.want, i.Every)
	}
}

func TestIntervalNext(t *testing.T) {
	ny := load(t, "America/New_York")
	i, err := NewInterval(3600)
	require.NoError(t, err)
	// Real time: an hour after 01:30 EDT on the fall-back day is 01:30 EST.
	from := utc(t, "2025-11-02T05:30:00Z").In(ny)
	got := i.Next(from)
	assert.Equal(t, "2025-11-02T01:30:00-05:00", got.Format(time.RFC3339))
	assert.Equal(t, ny, got.Location())
	assert.Equal(t, []string{"2025-11-02T06:30:00Z", "2025-11-02T07:30:00Z", "2025-11-02T08:30:00Z"}, format(Preview(i, from, 3)))

	assert.True(t, Interval{}.Next(from).IsZero(), "the zero Interval has no run times")
	assert.True(t, Interval{Every: -time.Second}.Next(from).IsZero())
	assert.Empty(t, Preview(Interval{}, from, 3))
}

func TestPreview(t *testing.T) {
	c := mustCron(t, "0 0 * * *", time.UTC)
	from := utc(t, "2025-06-01T12:00:00Z")
	assert.Nil(t, Preview(c, from, 0))
	assert.Nil(t, Preview(c, from, -1))
	assert.Equal(t, []string{"2025-06-02T00:00:00Z"}, format(Preview(c, from, 1)))
	assert.Len(t, Preview(c, from, 400), 400)
}
