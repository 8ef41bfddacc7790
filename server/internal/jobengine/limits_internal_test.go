package jobengine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/store/memory"
	"github.com/fsmgen/fsmgen/server/jobs"
	"github.com/fsmgen/fsmgen/server/monitors"
)

// gated are Go jobs whose runs wait until the test lets them end (one
// token each); each counts its runs.
type gated struct {
	mu    sync.Mutex
	gates map[string]chan struct{}
	runs  map[string]*atomic.Int32
}

func newGated() *gated {
	return &gated{gates: map[string]chan struct{}{}, runs: map[string]*atomic.Int32{}}
}

// job returns job id: yearly, no retries; its runs end when end(id) says.
func (g *gated) job(id string) *jobs.Job {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gates[id] = make(chan struct{}, 100)
	g.runs[id] = &atomic.Int32{}
	return &jobs.Job{ID: id, Name: id, Enabled: true,
		Settings: jobs.Settings{Schedule: monitors.Schedule{Type: "cron", Expression: "0 3 1 1 *"}, Timezone: "UTC", Timeout: time.Hour, BackoffBase: time.Second, BackoffCap: time.Second},
		Func: func(ctx context.Context) (string, error) {
			g.mu.Lock()
			gate := g.gates[id]
			g.runs[id].Add(1)
			g.mu.Unlock()
			select {
			case <-gate:
				return "done", nil
			case <-ctx.Done():
				return "", context.Cause(ctx)
			}
		},
	}
}

// end lets a run of job id end: the one in progress, or the next.
func (g *gated) end(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gates[id] <- struct{}{}
}

// started reports how many runs of job id began.
func (g *gated) started(id string) int32 { return g.runs[id].Load() }

// statuses returns the jobs' statuses, in order.
func statuses(e *Engine) []string {
	var out []string
	for _, v := range e.List() {
		out = append(out, v.Status)
	}
	return out
}

// TestEngineMaxRunning checks the limit on runs at once: runs due beyond
// it wait queued (stored, and listed, as queued), start in the order they
// were queued as runs end, keep their whole timeout from their start, and
// a queued run can be cancelled (it never runs); a job with a run queued
// refuses another trigger.
func TestEngineMaxRunning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	c := newClock(t0)
	g := newGated()
	e, err := New(ctx, Config{Store: st, Jobs: []*jobs.Job{g.job("a"), g.job("b"), g.job("c"), g.job("d")}, MaxRunning: 2, Now: c.now})
	require.NoError(t, err)

	// Three triggers in one round: two run, the third waits.
	answers := call(e, e.triggering("c"), e.triggering("a"), e.triggering("b"))
	for _, a := range answers {
		require.NoError(t, a.err)
	}
	assert.Equal(t, jobs.RunRunning, answers[0].v.(*RunView).Status)
	assert.Equal(t, jobs.RunRunning, answers[1].v.(*RunView).Status)
	queuedB := answers[2].v.(*RunView)
	assert.Equal(t, jobs.RunQueued, queuedB.Status)
	assert.Equal(t, []string{StatusRunning, StatusQueued, StatusRunning, StatusScheduled}, statuses(e))
	runs, err := st.Runs(ctx, "b", 10)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, store.Run{ID: queuedB.ID, JobID: "b", Status: jobs.RunQueued, TriggeredBy: jobs.TriggerManual, StartedAt: t0}, *runs[0], "stored queued")
	assert.Equal(t, jobs.RunQueued, e.List()[1].LastRun.Status)
	assert.Nil(t, e.List()[1].NextRunAt)

	// A queued job takes no second trigger; d queues after b.
	c.set(t0.Add(time.Second))
	r := call(e, e.triggering("b"))[0]
	require.Error(t, r.err)
	assert.Equal(t, "job_running", monitorengine.AsError(r.err).Code)
	assert.Contains(t, r.err.Error(), "has a run queued ("+queuedB.ID+")")
	queuedD := trigger(t, e, "d")
	assert.Equal(t, jobs.RunQueued, queuedD.Status)

	// A run ends at +10 s: b, queued first, starts then, with its whole
	// timeout from then.
	g.end("c")
	settle(t, e, c, 9*time.Second)
	assert.Equal(t, []string{StatusRunning, StatusRunning, StatusScheduled, StatusQueued}, statuses(e))
	require.Eventually(t, func() bool { return g.started("b") == 1 }, 10*time.Second, time.Millisecond, "b's code runs")
	b, err := st.Run(ctx, queuedB.ID)
	require.NoError(t, err)
	assert.Equal(t, jobs.RunRunning, b.Status)
	assert.Equal(t, t0.Add(10*time.Second), b.StartedAt, "started when the slot freed")
	timeout := e.byID["b"].timers[0].Deadline
	assert.Equal(t, t0.Add(10*time.Second+time.Hour), timeout)

	// d's queued run is cancelled: recorded so, never run.
	r = call(e, e.cancelling(ctx, queuedD.ID))[0]
	require.NoError(t, r.err)
	assert.Equal(t, jobs.RunCancelled, r.v.(*RunView).Status)
	d, err := st.Run(ctx, queuedD.ID)
	require.NoError(t, err)
	assert.Equal(t, jobs.RunCancelled, d.Status)
	assert.Equal(t, StatusScheduled, e.List()[3].Status)
	g.end("a")
	settle(t, e, c, 0)
	assert.Equal(t, []string{StatusScheduled, StatusRunning, StatusScheduled, StatusScheduled}, statuses(e))
	assert.Zero(t, g.started("d"))
	g.end("b")
	settle(t, e, c, 0)
	assert.Equal(t, []string{StatusScheduled, StatusScheduled, StatusScheduled, StatusScheduled}, statuses(e))
}

// TestEngineQueuedRestart kills the server with a run in progress and two
// queued: at the next start the run is interrupted (to retry) and the
// queued runs wait again, with their ids, and start in their order.
func TestEngineQueuedRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	c := newClock(t0)
	g := newGated()
	defs := []*jobs.Job{g.job("a"), g.job("b"), g.job("c")}
	defs[0].Settings.Retries = 1
	e, err := New(ctx, Config{Store: st, Jobs: defs, MaxRunning: 1, Now: c.now})
	require.NoError(t, err)
	trigger(t, e, "a")
	c.set(t0.Add(time.Second))
	queuedC := trigger(t, e, "c")
	c.set(t0.Add(2 * time.Second))
	queuedB := trigger(t, e, "b")
	require.Equal(t, []string{StatusRunning, StatusQueued, StatusQueued}, statuses(e))
	// The server is killed: its run ends, and is never recorded.
	g.end("a")
	<-e.results

	c.set(t0.Add(time.Minute))
	e, err = New(ctx, Config{Store: st, Jobs: defs, MaxRunning: 1, Now: c.now})
	require.NoError(t, err)
	assert.Equal(t, []string{StatusWaitingToRetry, StatusQueued, StatusQueued}, statuses(e))
	tick(e)
	assert.Equal(t, []string{StatusWaitingToRetry, StatusQueued, StatusRunning}, statuses(e), "c was queued first")
	assert.Equal(t, queuedC.ID, e.List()[2].LastRun.ID)
	c.set(t0.Add(time.Minute + time.Second))
	tick(e)
	assert.Equal(t, []string{StatusQueued, StatusQueued, StatusRunning}, statuses(e), "a's retry waits behind b")
	g.end("c")
	settle(t, e, c, 0)
	assert.Equal(t, []string{StatusQueued, StatusRunning, StatusScheduled}, statuses(e))
	assert.Equal(t, queuedB.ID, e.List()[1].LastRun.ID)
	g.end("b")
	settle(t, e, c, 0)
	assert.Equal(t, []string{StatusRunning, StatusScheduled, StatusScheduled}, statuses(e))
	assert.Equal(t, jobs.TriggerRetry, e.List()[0].LastRun.TriggeredBy)
	g.end("a")
	settle(t, e, c, 0)
	runs, err := st.Runs(ctx, "a", 10)
	require.NoError(t, err)
	require.Len(t, runs, 2)
	assert.Equal(t, []string{jobs.RunSucceeded, jobs.RunFailed}, []string{runs[0].Status, runs[1].Status})
	assert.Equal(t, ErrInterrupted, runs[1].Error)
}

// counting is a store that counts the batches written and their writes,
// and can hold them until the test lets them through.
type counting struct {
	store.Store
	mu      sync.Mutex
	batches []map[string]int // each batch's writes, by type
	hold    atomic.Pointer[chan struct{}]
}

func (s *counting) Apply(ctx context.Context, b *store.Batch) error {
	if h := s.hold.Load(); h != nil {
		<-*h
	}
	n := map[string]int{}
	for _, op := range b.Ops {
		n[fmt.Sprintf("%T", op)[len("store."):]]++
	}
	s.mu.Lock()
	s.batches = append(s.batches, n)
	s.mu.Unlock()
	return s.Store.Apply(ctx, b)
}

// written returns the batches written since the last call.
func (s *counting) written() []map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.batches
	s.batches = nil
	return out
}

// TestEngineStartupWrites starts 2,000 jobs: the first start writes them
// in one batch, a restart with nothing changed writes nothing, and one
// with two jobs changed writes those two.
func TestEngineStartupWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := &counting{Store: memory.New()}
	c := newClock(t0)
	var defs []*jobs.Job
	for i := range 2000 {
		defs = append(defs, &jobs.Job{ID: fmt.Sprintf("j%04d", i), Name: "j", Enabled: i%10 != 0, Command: []string{"/bin/true"},
			Settings: jobs.Settings{Schedule: monitors.Schedule{Type: "interval", Seconds: 3600 + i}, Timezone: "UTC", Timeout: time.Minute, Retries: 1, BackoffBase: time.Second, BackoffCap: time.Second}})
	}
	e, err := New(ctx, Config{Store: st, Jobs: defs, Now: c.now})
	require.NoError(t, err)
	assert.Equal(t, []map[string]int{{"SaveJob": 2000}}, st.written())
	assert.Equal(t, StatusDisabled, e.List()[0].Status)
	assert.Equal(t, t0.Add(3601*time.Second), *e.List()[1].NextRunAt)

	c.set(t0.Add(time.Minute))
	e, err = New(ctx, Config{Store: st, Jobs: defs, Now: c.now})
	require.NoError(t, err)
	assert.Empty(t, st.written(), "nothing changed, nothing written")
	assert.Equal(t, t0.Add(3601*time.Second), *e.List()[1].NextRunAt, "the saved deadline")

	defs[1].Settings.Schedule.Seconds = 60
	defs[0].Enabled = true
	_, err = New(ctx, Config{Store: st, Jobs: defs, Now: c.now})
	require.NoError(t, err)
	assert.Equal(t, []map[string]int{{"SaveJob": 2}}, st.written())
}
