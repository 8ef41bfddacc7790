package jobengine

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/store/memory"
	"github.com/fsmgen/fsmgen/server/jobs"
	"github.com/fsmgen/fsmgen/server/monitors"
)

// TestEngineGroupCommit sends a burst of triggers to a running engine
// while the write of a round is in flight: every trigger that arrived
// meanwhile is written in the next round, one batch for all, and each is
// answered only once it is stored. The limit on runs at once holds
// throughout, and every run ends.
func TestEngineGroupCommit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const n, limit = 100, 8
		st := &counting{Store: memory.New()}
		var mu sync.Mutex
		running, most := 0, 0
		var defs []*jobs.Job
		for i := range n {
			defs = append(defs, &jobs.Job{ID: fmt.Sprintf("j%03d", i), Name: "j", Enabled: true,
				Settings: jobs.Settings{Schedule: monitors.Schedule{Type: "cron", Expression: "0 3 1 1 *"}, Timezone: "UTC", Timeout: time.Hour, BackoffBase: time.Second, BackoffCap: time.Second},
				Func: func(ctx context.Context) (string, error) {
					mu.Lock()
					running++
					most = max(most, running)
					mu.Unlock()
					time.Sleep(time.Second) // the bubble's clock
					mu.Lock()
					running--
					mu.Unlock()
					return "", nil
				},
			})
		}
		e, err := New(context.Background(), Config{Store: st, Jobs: defs, MaxRunning: limit})
		require.NoError(t, err)
		st.written()
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() { e.Run(ctx); close(stopped) }()
		<-e.Ready()

		hold := make(chan struct{})
		st.hold.Store(&hold)
		var wg sync.WaitGroup
		answered := make([]*RunView, n)
		wg.Go(func() { answered[0], _ = e.Trigger(ctx, "j000") })
		synctest.Wait() // the first round's write is in flight
		for i := 1; i < n; i++ {
			wg.Go(func() { answered[i], _ = e.Trigger(ctx, fmt.Sprintf("j%03d", i)) })
		}
		synctest.Wait() // the others wait for an answer
		for _, a := range answered {
			assert.Nil(t, a, "answered before it is stored")
		}
		st.hold.Store(nil)
		close(hold)
		wg.Wait()
		batches := st.written()
		require.GreaterOrEqual(t, len(batches), 2)
		assert.Equal(t, 1, batches[0]["InsertRun"], "the first trigger alone")
		assert.Equal(t, n-1, batches[1]["InsertRun"], "the burst in one batch")
		for i, a := range answered {
			require.NotNil(t, a, "trigger %d", i)
		}
		assert.Equal(t, n-limit, countQueued(answered), "the runs beyond the limit queued")

		// Every run ends, no more than the limit at once.
		for {
			synctest.Wait()
			if counts(e)[StatusScheduled] == n {
				break
			}
			time.Sleep(time.Second)
		}
		assert.Equal(t, limit, most)
		runs, err := st.LastRuns(context.Background())
		require.NoError(t, err)
		require.Len(t, runs, n)
		for _, r := range runs {
			assert.Equal(t, jobs.RunSucceeded, r.Status, r.JobID)
		}
		cancel()
		<-stopped
	})
}

// countQueued counts the runs answered queued.
func countQueued(runs []*RunView) int {
	n := 0
	for _, r := range runs {
		if r != nil && r.Status == jobs.RunQueued {
			n++
		}
	}
	return n
}

// counts counts the jobs by status.
func counts(e *Engine) map[string]int {
	out := map[string]int{}
	for _, v := range e.List() {
		out[v.Status]++
	}
	return out
}
