package cpuclock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/bench/cpuclock"
)

// burn spends at least d of the process's processor time.
func burn(t *testing.T, d time.Duration) {
	t.Helper()
	start, ok := cpuclock.Process()
	require.True(t, ok)
	x := 0
	for {
		for i := range 100_000 {
			x += i
		}
		now, ok := cpuclock.Process()
		require.True(t, ok)
		if now-start >= d {
			break
		}
	}
	_ = x
}

// TestTimer checks that a Timer adds up its stretches and leaves out the
// time between them. It is not parallel: the process's processor time
// would count the other tests'.
func TestTimer(t *testing.T) {
	before, ok := cpuclock.Process()
	require.True(t, ok)
	var tm cpuclock.Timer
	tm.Start()
	burn(t, 3*time.Millisecond)
	tm.Stop()
	burn(t, 20*time.Millisecond) // between the stretches: not counted
	tm.Start()
	burn(t, 3*time.Millisecond)
	tm.Stop()
	after, _ := cpuclock.Process()

	total, ok := tm.Total()
	require.True(t, ok)
	assert.GreaterOrEqual(t, total, 6*time.Millisecond)
	assert.Less(t, total, after-before-20*time.Millisecond+time.Millisecond, "the time between the stretches is left out")
}
