package monitorengine

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/store/sqlite"
)

// t0 is when the tests' monitors are created.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// bench is an engine on a real SQLite file, driven by hand: requests are
// applied at once, and time moves only when the test says.
type bench struct {
	t     *testing.T
	path  string
	store store.Store
	e     *Engine
	now   time.Time
	// config, when set, changes the engine's Config before it is made.
	config func(*Config)
}

func newBench(t *testing.T) *bench {
	t.Helper()
	b := &bench{t: t, path: filepath.Join(t.TempDir(), "s.db"), now: t0}
	b.open()
	return b
}

// open opens the database and loads an engine from it, as a restart does.
func (b *bench) open() {
	b.t.Helper()
	st, err := sqlite.Open(context.Background(), b.path)
	require.NoError(b.t, err)
	b.t.Cleanup(func() { st.Close() })
	b.store = st
	b.load()
}

// load makes a new engine on the store: a restart after a kill -9 (the
// old engine is dropped, whatever it was doing).
func (b *bench) load() {
	b.t.Helper()
	c := Config{Store: b.store, Now: func() time.Time { return b.now }}
	if b.config != nil {
		b.config(&c)
	}
	e, err := New(context.Background(), c)
	require.NoError(b.t, err)
	e.dispatch = func(ctx context.Context, r *request) result {
		r.done = make(chan result, 1)
		e.round(ctx, []*request{r})
		return <-r.done
	}
	b.e = e
}

// at moves the clock to t0+d and fires every timer due.
func (b *bench) at(d time.Duration) {
	b.now = t0.Add(d)
	for {
		next := b.e.timers.Next()
		if next == nil || next.Deadline.After(b.now) {
			return
		}
		b.e.round(context.Background(), nil)
	}
}

func (b *bench) create(in string) *View {
	b.t.Helper()
	var input Input
	require.NoError(b.t, json.Unmarshal([]byte(in), &input))
	v, err := b.e.Create(context.Background(), &input)
	require.NoError(b.t, err)
	return v
}

func (b *bench) get(slug string) *View {
	b.t.Helper()
	v, err := b.e.Get(context.Background(), slug)
	require.NoError(b.t, err)
	return v
}

func (b *bench) ping(key, kind, checkin string) (string, error) {
	return b.e.Check(context.Background(), Ping{Key: key, Kind: kind, Checkin: checkin, Source: SourcePing})
}

func (b *bench) checkins(slug string) []CheckinView {
	b.t.Helper()
	list, err := b.e.Checkins(context.Background(), slug, 100)
	require.NoError(b.t, err)
	return list
}

// statuses returns the check-ins' statuses, oldest first.
func statuses(list []CheckinView) []string {
	var out []string
	for i := len(list) - 1; i >= 0; i-- {
		out = append(out, list[i].Status)
	}
	return out
}

func TestLateMissedAndBack(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	v := b.create(`{"slug": "backup", "schedule": {"type": "interval", "seconds": 60}, "checkin_margin_seconds": 10}`)
	assert.Equal(t, HealthUnknown, v.Health)
	assert.Equal(t, t0.Add(time.Minute), *v.NextExpectedAt)
	assert.Equal(t, 2, b.e.Timers(), "the miss and the late timers")

	b.at(59 * time.Second)
	assert.Equal(t, HealthUnknown, b.get("backup").Health)
	b.at(60 * time.Second)
	assert.Equal(t, HealthLate, b.get("backup").Health)
	b.at(70 * time.Second)
	v = b.get("backup")
	assert.Equal(t, HealthMissed, v.Health)
	assert.Equal(t, t0.Add(2*time.Minute), *v.NextExpectedAt, "the next run is expected")
	list := b.checkins("backup")
	require.Len(t, list, 1)
	assert.Equal(t, CheckinMissed, list[0].Status)
	assert.Equal(t, SourceSystem, list[0].Source)
	assert.Equal(t, t0.Add(time.Minute), *list[0].ExpectedAt)
	assert.Equal(t, t0.Add(70*time.Second), list[0].CreatedAt, "recorded at the end of the margin")

	// Missed stays missed (no late in between) and records each run missed.
	b.at(125 * time.Second)
	assert.Equal(t, HealthMissed, b.get("backup").Health)
	b.at(130 * time.Second)
	assert.Equal(t, []string{CheckinMissed, CheckinMissed}, statuses(b.checkins("backup")))

	_, err := b.ping(v.PingKey, PingOK, "")
	require.NoError(t, err)
	v = b.get("backup")
	assert.Equal(t, HealthHealthy, v.Health)
	assert.Equal(t, t0.Add(190*time.Second), *v.NextExpectedAt, "an interval counts from the check-in")
	assert.Equal(t, t0.Add(130*time.Second), *v.LastCheckinAt)
}

func TestRunTimesOut(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	v := b.create(`{"slug": "etl", "schedule": {"type": "cron", "expression": "0 * * * *"}, "max_runtime_seconds": 300}`)
	b.at(time.Hour)
	run, err := b.ping(v.PingKey, PingStart, "")
	require.NoError(t, err)
	v = b.get("etl")
	assert.Equal(t, "Running", v.State)
	assert.Equal(t, run, v.RunningCheckinID)
	b.at(time.Hour + 299*time.Second)
	assert.Equal(t, "Running", b.get("etl").State)
	b.at(time.Hour + 300*time.Second)
	v = b.get("etl")
	assert.Equal(t, HealthTimeout, v.Health)
	assert.Equal(t, t0.Add(2*time.Hour), *v.NextExpectedAt)
	list := b.checkins("etl")
	require.Len(t, list, 1)
	assert.Equal(t, CheckinTimeout, list[0].Status)
	require.NotNil(t, list[0].DurationMS)
	assert.EqualValues(t, 300_000, *list[0].DurationMS)

	// The run's finishing ping comes too late.
	_, err = b.ping(v.PingKey, PingOK, run)
	assert.Equal(t, "checkin_finished", AsError(err).Code)
	_, err = b.ping(v.PingKey, PingOK, "0123")
	assert.Equal(t, "checkin_not_found", AsError(err).Code)
}

func TestFinishingPing(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	v := b.create(`{"slug": "sync", "schedule": {"type": "interval", "seconds": 600}}`)
	b.at(10 * time.Second)
	run, err := b.ping(v.PingKey, PingStart, "")
	require.NoError(t, err)
	b.at(42 * time.Second)
	code := 3
	id, err := b.e.Check(context.Background(), Ping{Key: v.PingKey, Kind: PingOK, ExitCode: &code, Checkin: run, Source: SourcePing})
	require.NoError(t, err)
	assert.Equal(t, run, id, "the ping closes the run")
	v = b.get("sync")
	assert.Equal(t, HealthFailing, v.Health, "a non-zero exit code fails")
	assert.Equal(t, 1, v.ConsecutiveFailures)
	list := b.checkins("sync")
	require.Len(t, list, 1)
	assert.Equal(t, CheckinError, list[0].Status)
	assert.EqualValues(t, 32_000, *list[0].DurationMS)
	assert.Equal(t, 3, *list[0].ExitCode)

	// A second start supersedes a run in progress.
	first, err := b.ping(v.PingKey, PingStart, "")
	require.NoError(t, err)
	second, err := b.ping(v.PingKey, PingStart, "")
	require.NoError(t, err)
	list = b.checkins("sync")
	require.Len(t, list, 3)
	assert.Equal(t, second, list[0].ID)
	assert.Equal(t, CheckinInProgress, list[0].Status)
	assert.Equal(t, first, list[1].ID)
	assert.Equal(t, CheckinError, list[1].Status)
	assert.Equal(t, "superseded by a new start", *list[1].Output)
}

func TestThresholds(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	v := b.create(`{"slug": "flaky", "schedule": {"type": "interval", "seconds": 3600}, "failure_threshold": 2, "recovery_threshold": 2}`)
	tests := []struct {
		kind     string
		health   string
		failures int
	}{
		{PingFail, HealthHealthy, 1},
		{PingFail, HealthFailing, 2},
		{PingOK, HealthFailing, 0},
		{PingFail, HealthFailing, 1},
		{PingOK, HealthFailing, 0},
		{PingOK, HealthHealthy, 0},
		{PingOK, HealthHealthy, 0},
	}
	for i, tt := range tests {
		_, err := b.ping(v.PingKey, tt.kind, "")
		require.NoError(t, err)
		got := b.get("flaky")
		assert.Equal(t, tt.health, got.Health, "after check-in %d (%s)", i+1, tt.kind)
		assert.Equal(t, tt.failures, got.ConsecutiveFailures, "after check-in %d (%s)", i+1, tt.kind)
	}
}

func TestPauseDisableResume(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	v := b.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 60}, "checkin_margin_seconds": 0}`)
	status := func(s string) *View {
		v, err := b.e.Patch(context.Background(), "job", &Input{Status: &s})
		require.NoError(t, err)
		return v
	}
	p := status(StatusPaused)
	assert.Equal(t, StatusPaused, p.Status)
	assert.Nil(t, p.NextExpectedAt)
	assert.Zero(t, b.e.Timers(), "a paused monitor expects nothing")
	b.at(time.Hour)
	_, err := b.ping(v.PingKey, PingFail, "")
	require.NoError(t, err, "a paused monitor records check-ins")
	assert.Equal(t, HealthUnknown, b.get("job").Health, "and changes nothing")

	status(StatusDisabled)
	_, err = b.ping(v.PingKey, PingOK, "")
	assert.Equal(t, "monitor_disabled", AsError(err).Code)
	assert.Equal(t, []string{CheckinError}, statuses(b.checkins("job")))

	r := status(StatusActive)
	assert.Equal(t, StatusActive, r.Status)
	assert.Equal(t, t0.Add(61*time.Minute), *r.NextExpectedAt)
	b.at(61 * time.Minute)
	assert.Equal(t, HealthMissed, b.get("job").Health)
}

func TestReconfigure(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	b.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 60}}`)
	b.at(30 * time.Second)
	cron := Schedule{Type: "cron", Expression: "0 3 * * *"}
	tz := "Europe/Berlin"
	v, err := b.e.Patch(context.Background(), "job", &Input{Schedule: &cron, Timezone: &tz})
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 3, 3, 2, 0, 0, 0, time.UTC), *v.NextExpectedAt, "03:00 in Berlin (UTC+1)")
	assert.Equal(t, 2, b.e.Timers(), "the old timers are gone")

	bad := Schedule{Type: "cron", Expression: "60 0 * * *"}
	_, err = b.e.Patch(context.Background(), "job", &Input{Schedule: &bad})
	assert.Equal(t, "invalid_schedule", AsError(err).Code)
	assert.Contains(t, AsError(err).Message, "minute")
}

// TestRestartKeepsDeadlines drops the engine at moments around its
// deadlines, as a kill -9 would, and loads it again: the deadlines do not
// move, an overdue one fires at once at its own time, and a miss is
// recorded once.
func TestRestartKeepsDeadlines(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	b.create(`{"slug": "backup", "schedule": {"type": "interval", "seconds": 60}, "checkin_margin_seconds": 10}`)
	b.at(30 * time.Second)
	b.load() // killed mid-deadline
	assert.Equal(t, 2, b.e.Timers())
	b.at(65 * time.Second)
	assert.Equal(t, HealthLate, b.get("backup").Health)
	b.load() // killed while late
	assert.Equal(t, HealthLate, b.get("backup").Health)

	// Down past the end of the margin and the next run's: each miss fires
	// at its own deadline once the engine is back.
	b.now = t0.Add(135 * time.Second)
	b.load()
	b.at(135 * time.Second)
	list := b.checkins("backup")
	require.Len(t, list, 2)
	assert.Equal(t, t0.Add(130*time.Second), list[0].CreatedAt)
	assert.Equal(t, t0.Add(70*time.Second), list[1].CreatedAt)
	b.load()
	b.at(136 * time.Second)
	assert.Len(t, b.checkins("backup"), 2, "no miss is recorded twice")
	assert.Equal(t, t0.Add(180*time.Second), *b.get("backup").NextExpectedAt)
}

// failing is a store whose writes fail while broken is set.
type failing struct {
	store.Store
	mu     sync.Mutex
	broken bool
}

func (f *failing) Apply(ctx context.Context, b *store.Batch) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.broken {
		return errors.New("disk full")
	}
	return f.Store.Apply(ctx, b)
}

// TestFailedWriteChangesNothing breaks the database under a round: the
// requests fail with 503, and the monitors, their timers and the check-ins
// are as they were; the next round works.
func TestFailedWriteChangesNothing(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	f := &failing{Store: b.store}
	b.store = f
	b.load()
	v := b.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 60}, "checkin_margin_seconds": 10}`)
	f.broken = true
	_, err := b.ping(v.PingKey, PingStart, "")
	assert.Equal(t, 503, AsError(err).Status)
	_, err = b.e.Create(context.Background(), &Input{Slug: ptr("other"), Schedule: &Schedule{Type: "interval", Seconds: 5}})
	assert.Equal(t, 503, AsError(err).Status)
	assert.Equal(t, "Fresh", b.get("job").State)
	_, err = b.e.Get(context.Background(), "other")
	assert.Error(t, err, "the monitor whose creation failed is gone")
	b.now = t0.Add(70 * time.Second)
	b.e.round(context.Background(), nil) // the miss cannot be written either
	assert.Equal(t, HealthUnknown, b.get("job").Health)
	assert.Equal(t, 2, b.e.Timers(), "the timers are armed again")

	f.broken = false
	b.at(70 * time.Second)
	assert.Equal(t, HealthMissed, b.get("job").Health)
	assert.Equal(t, []string{CheckinMissed}, statuses(b.checkins("job")))
	assert.Equal(t, t0.Add(70*time.Second), b.checkins("job")[0].CreatedAt, "at its deadline")
}

func ptr[T any](v T) *T { return &v }

// TestTimersBeforeRequests checks that a round fires the timers due before
// it applies its requests: a deadline that passed before the round (the
// engine was busy, or down) happened before the round's pings, and a ping
// that comes after a run was missed does not erase the miss.
func TestTimersBeforeRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		restart bool
	}{
		{"a busy engine", false},
		{"a restart", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBench(t)
			v := b.create(`{"slug": "backup", "schedule": {"type": "interval", "seconds": 60}, "checkin_margin_seconds": 10}`)
			b.now = t0.Add(135 * time.Second) // the timers due are not fired yet
			if tt.restart {
				b.load()
			}
			_, err := b.ping(v.PingKey, PingOK, "")
			require.NoError(t, err)
			list := b.checkins("backup")
			assert.Equal(t, []string{CheckinMissed, CheckinMissed, CheckinOK}, statuses(list))
			require.Len(t, list, 3)
			assert.Equal(t, t0.Add(70*time.Second), list[2].CreatedAt)
			assert.Equal(t, t0.Add(130*time.Second), list[1].CreatedAt)
			got := b.get("backup")
			assert.Equal(t, HealthHealthy, got.Health)
			assert.Equal(t, t0.Add(195*time.Second), *got.NextExpectedAt)
		})
	}
}

// TestBacklogBeforeRequests stops the engine for longer than a round's
// worth of deadlines: the misses fire in rounds of their own, every one
// at its time, before the ping that comes after them.
func TestBacklogBeforeRequests(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	v := b.create(`{"slug": "fast", "schedule": {"type": "interval", "seconds": 1}, "checkin_margin_seconds": 0}`)
	const misses = 3*maxRound + 7
	b.now = t0.Add(misses * time.Second)
	b.load()
	_, err := b.ping(v.PingKey, PingOK, "")
	require.NoError(t, err)
	list, err := b.e.Checkins(context.Background(), "fast", 10000)
	require.NoError(t, err)
	require.Equal(t, misses+1, len(list))
	assert.Equal(t, CheckinOK, list[0].Status, "the ping comes last")
	for i, c := range list[1:] {
		n := misses - i // newest first
		require.Equal(t, CheckinMissed, c.Status, "check-in %d", n)
		assert.Equal(t, t0.Add(time.Duration(n)*time.Second), *c.ExpectedAt)
		assert.Equal(t, t0.Add(time.Duration(n)*time.Second), c.CreatedAt)
	}
	assert.Equal(t, HealthHealthy, b.get("fast").Health)
}

// TestFailedRenameKeepsSlug renames a monitor in a round whose write
// fails: the monitor keeps its slug, and the new one names nothing.
func TestFailedRenameKeepsSlug(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	f := &failing{Store: b.store}
	b.store = f
	b.load()
	b.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 60}}`)
	f.broken = true
	_, err := b.e.Patch(context.Background(), "job", &Input{Slug: ptr("renamed")})
	assert.Equal(t, 503, AsError(err).Status)
	assert.Equal(t, "job", b.get("job").Slug)
	_, err = b.e.Get(context.Background(), "renamed")
	assert.Error(t, err, "the new slug names nothing")
	f.broken = false
	v, err := b.e.Patch(context.Background(), "job", &Input{Slug: ptr("renamed")})
	require.NoError(t, err)
	assert.Equal(t, "renamed", v.Slug)
	_, err = b.e.Get(context.Background(), "job")
	assert.Error(t, err)
}

// TestStoppedEngine checks the answers of requests the engine cannot
// apply: after Run stopped (503 shutting_down, at once), and when the
// client left (503 request_cancelled, not a server failure).
func TestStoppedEngine(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	b.e.dispatch = b.e.submit // the real Run
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- b.e.Run(ctx) }()
	v, err := b.e.Create(context.Background(), &Input{Slug: ptr("job"), Schedule: &Schedule{Type: "interval", Seconds: 60}})
	require.NoError(t, err)

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = b.e.Check(gone, Ping{Key: v.PingKey, Kind: PingOK, Source: SourcePing})
	require.NotNil(t, AsError(err), "%v", err)
	assert.Equal(t, "request_cancelled", AsError(err).Code)

	stop()
	require.NoError(t, <-stopped)
	wait, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = b.e.Check(wait, Ping{Key: v.PingKey, Kind: PingOK, Source: SourcePing})
	require.NotNil(t, AsError(err), "%v", err)
	assert.Equal(t, 503, AsError(err).Status)
	assert.Equal(t, "shutting_down", AsError(err).Code)
	assert.NoError(t, wait.Err(), "answered without waiting for the client")
}

// TestFinishClosedInTheSameRound sends a finishing ping for a run that
// the same round closed (timed out, superseded by a start), before the
// round is written: the store still has it in progress, but the ping is
// refused as for a run closed earlier, not acknowledged and dropped.
func TestFinishClosedInTheSameRound(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	v := b.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 600}, "max_runtime_seconds": 60}`)
	round := func(pings ...Ping) []result {
		var reqs []*request
		for _, p := range pings {
			reqs = append(reqs, &request{apply: func(e *Engine, rs *roundState) (result, error) { return e.check(rs, p) }, done: make(chan result, 1)})
		}
		b.e.round(context.Background(), reqs)
		var out []result
		for _, r := range reqs {
			out = append(out, <-r.done)
		}
		return out
	}
	start := Ping{Key: v.PingKey, Kind: PingStart, Source: SourcePing}
	finish := func(id string) Ping { return Ping{Key: v.PingKey, Kind: PingOK, Checkin: id, Source: SourcePing} }

	// Superseded by a start of the same round.
	first := round(start)[0]
	require.NoError(t, first.err)
	res := round(start, finish(first.checkin))
	require.NoError(t, res[0].err)
	require.Error(t, res[1].err)
	assert.Equal(t, "checkin_finished", AsError(res[1].err).Code)
	assert.Contains(t, AsError(res[1].err).Message, "(error)")

	// Started and superseded in the same round.
	var started string
	reqs := []*request{
		{apply: func(e *Engine, rs *roundState) (result, error) {
			res, err := e.check(rs, start)
			started = res.checkin
			return res, err
		}},
		{apply: func(e *Engine, rs *roundState) (result, error) { return e.check(rs, start) }},
		{apply: func(e *Engine, rs *roundState) (result, error) { return e.check(rs, finish(started)) }},
	}
	for _, r := range reqs {
		r.done = make(chan result, 1)
	}
	b.e.round(context.Background(), reqs)
	require.NoError(t, (<-reqs[0].done).err)
	second := <-reqs[1].done
	require.NoError(t, second.err)
	err := (<-reqs[2].done).err
	require.Error(t, err)
	assert.Equal(t, "checkin_finished", AsError(err).Code)
	assert.Equal(t, second.checkin, b.get("job").RunningCheckinID)

	// Timed out by the round's timer, which fires before the ping.
	run := second.checkin
	b.now = b.now.Add(61 * time.Second)
	res = round(finish(run))
	require.Error(t, res[0].err)
	assert.Equal(t, "checkin_finished", AsError(res[0].err).Code)
	assert.Contains(t, AsError(res[0].err).Message, "(timeout)")
	list := b.checkins("job")
	assert.Equal(t, CheckinTimeout, list[0].Status)
	assert.Equal(t, run, list[0].ID)
}
