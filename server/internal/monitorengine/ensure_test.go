package monitorengine

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEnsure makes the monitors of many jobs at once: in rounds of
// ensureChunk, a paused one paused in the same round; again with nothing
// changed, in no round at all; then one changed, in one round. A bad
// input is reported and the others are made.
func TestEnsure(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	rounds := 0
	dispatch := b.e.dispatch
	b.e.dispatch = func(ctx context.Context, r *request) result {
		rounds++
		return dispatch(ctx, r)
	}
	n := ensureChunk + 10
	input := func(i int, status string) *Input {
		slug, name, tz, runtime := fmt.Sprintf("job-%05d", i), fmt.Sprintf("Job: %d", i), "UTC", 60
		return &Input{Slug: &slug, Name: &name, Schedule: &Schedule{Type: "interval", Seconds: 3600}, Timezone: &tz, MaxRuntimeSeconds: &runtime, Status: &status}
	}
	var ins []*Input
	for i := range n {
		status := StatusActive
		if i == 3 {
			status = StatusPaused
		}
		ins = append(ins, input(i, status))
	}
	require.NoError(t, b.e.Ensure(context.Background(), ins, 0))
	assert.Equal(t, 2, rounds, "%d monitors in rounds of %d", n, ensureChunk)
	assert.Equal(t, n, b.e.Monitors())
	assert.Equal(t, StatusPaused, b.get("job-00003").Status)
	v := b.get(fmt.Sprintf("job-%05d", n-1))
	assert.Equal(t, StatusActive, v.Status)
	assert.Equal(t, 60, v.MaxRuntimeSeconds)
	assert.Equal(t, HealthUnknown, v.Health)

	// The same again: nothing to do.
	rounds = 0
	require.NoError(t, b.e.Ensure(context.Background(), ins, 0))
	assert.Zero(t, rounds)

	// One changed, one resumed, one bad.
	rounds = 0
	ins[7] = input(7, StatusActive)
	ins[7].Schedule.Seconds = 600
	ins[3] = input(3, StatusActive)
	bad := input(n, StatusActive)
	bad.Schedule.Type = "weekly"
	err := b.e.Ensure(context.Background(), append(ins, bad), 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("monitor job-%05d", n))
	assert.Equal(t, 1, rounds)
	assert.Equal(t, 600, b.get("job-00007").Schedule.Seconds)
	assert.Equal(t, StatusActive, b.get("job-00003").Status)
	assert.Equal(t, n, b.e.Monitors())

	// What it made is stored: a restart loads it.
	b.load()
	assert.Equal(t, n, b.e.Monitors())
	assert.Equal(t, 600, b.get("job-00007").Schedule.Seconds)
}
