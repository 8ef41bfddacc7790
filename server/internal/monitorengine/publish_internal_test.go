package monitorengine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/store/memory"
)

// TestStopDuringBacklog stops Run while it works through a backlog of
// misses (a monitor whose runs were missed for 150,000 minutes, as after
// a long stop): the backlog's rounds go on to its end, more of them than
// the publisher's queue holds, and Run returns all the same. The
// publisher stops when Run does; it used to stop when Run's context
// ended, and Run then waited for it forever once the queue was full
// (make bench-server hung so in BenchmarkMisses100k's cleanup).
func TestStopDuringBacklog(t *testing.T) {
	t.Parallel()
	const minutes = 150_000 // 293 rounds of maxRound misses, more than publishQueue
	now := t0
	st := &missCounter{Store: memory.New()}
	e, err := New(context.Background(), Config{Store: st, Now: func() time.Time { return now }})
	require.NoError(t, err)
	// Created with the clock at t0, outside Run: Create is applied in a
	// round of the test's own.
	e.dispatch = func(ctx context.Context, r *request) result {
		r.done = make(chan result, 1)
		e.round(ctx, []*request{r})
		return <-r.done
	}
	_, err = e.Create(context.Background(), &Input{Slug: ptr("backlog"), Schedule: &Schedule{Type: "interval", Seconds: 60}, CheckinMarginSeconds: ptr(0)})
	require.NoError(t, err)
	now = t0.Add(minutes * time.Minute)

	events, stop := e.Hub().Subscribe()
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- e.Run(ctx) }()
	<-events // the backlog's first round is published: Run is in the backlog
	cancel()
	select {
	case err := <-stopped:
		require.NoError(t, err)
	case <-time.After(2 * time.Minute): // a bound on a hang, far above the backlog's time
		require.FailNow(t, "Run does not return: it waits for a publisher that stopped")
	}
	assert.EqualValues(t, minutes, st.missed.Load(), "the whole backlog was recorded")
}

// missCounter is the memory store, which counts the missed check-ins
// it is given instead of keeping them (it copies every check-in it holds
// at every write: 150,000 would take minutes).
type missCounter struct {
	*memory.Store
	missed atomic.Int64
}

func (s *missCounter) Apply(ctx context.Context, b *store.Batch) error {
	kept := &store.Batch{Fence: b.Fence}
	for _, op := range b.Ops {
		if c, ok := op.(store.InsertCheckin); ok && c.Checkin.Status == CheckinMissed {
			s.missed.Add(1)
			continue
		}
		kept.Ops = append(kept.Ops, op)
	}
	return s.Store.Apply(ctx, kept)
}
