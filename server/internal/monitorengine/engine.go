// Package monitorengine is the server's cron-monitoring engine: it keeps every
// monitor's machine (package gen/monitor) in memory, feeds it the pings
// and the firings of its timers, and writes what each step changed to the
// store before it answers.
//
// One goroutine, Run, owns the machines. It works in rounds: it takes the
// requests waiting (up to a bound) and the timers due, applies them to
// their machines, writes everything they changed (check-ins, each
// machine as Save saved it, alerts) in one transaction, and only then
// answers the requests and publishes the changes. So an acknowledged
// request survives a kill -9, a round's machines are saved after their
// events and before their effects leave the process (the recipe of
// docs/spec.md), and many pings share one sync.
//
// Time enters as input: a request's step happens at the engine's clock
// when the round takes it; a timer's firing happens at its deadline, even
// when the engine handles it late (after a restart), so a deadline armed
// from it is exact. Each monitor's timers live in one heap for all
// monitors.
package monitorengine

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsmgen/fsmgen/gen/monitor"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/timerset"
	"github.com/fsmgen/fsmgen/server/internal/webhook"
	"github.com/fsmgen/fsmgen/server/monitors"
)

// Config is what an Engine is made with.
type Config struct {
	// Store keeps the monitors. It must not be nil.
	Store store.Store
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// AlertWebhook is the URL alerts go to for monitors without one of
	// their own; none when empty.
	AlertWebhook string
	// Webhooks guards the webhooks: the URLs a monitor is given, and every
	// address an alert is posted to. Nil allows no internal address.
	Webhooks *webhook.Guard
	// Log receives the engine's messages; slog.Default() when nil.
	Log *slog.Logger
	// Instance names this instance, when Store is a store.Shared that
	// several instances share (see shards.go): it runs only the monitors
	// of the shards whose leases it holds. Addr is the URL the other
	// instances forward its monitors' requests to; Lease how long a lease
	// lasts without renewal (DefaultLease when 0).
	Instance string
	Addr     string
	Lease    time.Duration
}

// DefaultLease is how long a shard's lease lasts without renewal: when an
// instance dies, another takes its monitors over within it.
const DefaultLease = 15 * time.Second

// Engine runs the monitors.
type Engine struct {
	store    store.Store
	now      func() time.Time
	log      *slog.Logger
	webhook  string
	webhooks *webhook.Guard
	client   *http.Client // posts the alerts, through webhooks
	behavior *monitors.Behavior
	reqs     chan *request
	hub      *Hub
	alerts   chan struct{} // nudges the alert sender
	// events takes each written round's events to the publisher, which
	// Run starts (publish.go); nil while it does not run: commit then
	// publishes them itself.
	events  chan []Event
	stopped chan struct{} // closed when Run returns
	running atomic.Bool

	// mu guards the maps for the readers (List, Get, lookups); only Run
	// changes them.
	mu     sync.RWMutex
	byID   map[int64]*mon
	bySlug map[string]*mon
	byKey  map[string]*mon
	// jobMonitors maps the slug of each job's monitor to its job (Reserve).
	jobMonitors map[string]string

	// On a shared store: the store, this instance, its address and the
	// lease time; held maps each shard the instance runs to when its lease
	// may run out (shardMu guards it for the readers; Run changes it);
	// the keeper hands Run its changes through shardChanges; rebalance
	// asks the keeper for a round at once; created numbers the monitors
	// created, to spread them over the shards.
	shared       store.Shared
	instance     string
	addr         string
	lease        time.Duration
	shardMu      sync.RWMutex
	held         map[int]time.Time
	shardChanges chan shardChange
	rebalance    chan struct{}
	created      atomic.Int64
	// claims numbers each held shard's claim (shardMu guards it; Run
	// changes it; claimed counts the claims); leaseChanged tells the
	// reader of LeaseChanged that the held shards or their leases
	// changed.
	claims       map[int]uint64
	claimed      uint64
	leaseChanged chan struct{}

	// Owned by Run.
	// dispatch hands a request to Run and waits for its result
	// (e.submit; tests apply it at once instead).
	dispatch func(ctx context.Context, r *request) result

	nextID     int64
	timers     *timerset.Set[*mon]
	armedCount atomic.Int64
	step       *step // the step being applied
	// retryAt is when timers may be tried again after a round failed to
	// write.
	retryAt time.Time
}

// ErrStopped is returned for requests made after Run has stopped (503).
var ErrStopped error = &Error{Status: 503, Code: "shutting_down", Message: "the server is shutting down: retry in a moment"}

// errGone is the answer to a request whose client left (its context ended)
// before it was answered; nobody reads it, but it is no server failure.
func errGone(err error) error {
	return &Error{Status: 503, Code: "request_cancelled", Message: fmt.Sprintf("the request ended before it was answered (%v): it may have been stored", err)}
}

// New loads every monitor from the store, with its machine as it was saved
// and its timers armed at their saved deadlines (overdue ones fire first
// when Run starts, in deadline order). On a shared store, it loads none:
// Run loads the monitors of each shard it takes a lease of.
func New(ctx context.Context, c Config) (*Engine, error) {
	e := &Engine{
		store: c.Store, now: c.Now, log: c.Log, webhook: c.AlertWebhook, webhooks: c.Webhooks,
		behavior: &monitors.Behavior{},
		reqs:     make(chan *request, 4096),
		hub:      NewHub(),
		alerts:   make(chan struct{}, 1),
		stopped:  make(chan struct{}),
		byID:     map[int64]*mon{}, bySlug: map[string]*mon{}, byKey: map[string]*mon{},
		timers: timerset.New(armedOf),
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.webhooks == nil {
		e.webhooks = &webhook.Guard{}
	}
	e.client = e.webhooks.Client(alertTimeout)
	e.dispatch = e.submit
	if e.log == nil {
		e.log = slog.Default()
	}
	if sh, ok := c.Store.(store.Shared); ok {
		if c.Instance == "" {
			return nil, fmt.Errorf("monitors: a shared store needs the instance's name (Config.Instance)")
		}
		e.shared, e.instance, e.addr, e.lease = sh, c.Instance, c.Addr, c.Lease
		if e.lease <= 0 {
			e.lease = DefaultLease
		}
		e.held = map[int]time.Time{}
		e.claims = map[int]uint64{}
		e.leaseChanged = make(chan struct{}, 1)
		e.shardChanges = make(chan shardChange)
		e.rebalance = make(chan struct{}, 1)
		// The first share of the shards, before Run starts.
		if _, err := e.leaseRound(ctx, func(c shardChange) error { e.changeShards(c); return nil }); err != nil {
			return nil, err
		}
		return e, nil
	}
	rows, err := e.store.Monitors(ctx)
	if err != nil {
		return nil, err
	}
	mons, err := e.decodeAll(rows)
	if err != nil {
		return nil, err
	}
	e.byID, e.bySlug, e.byKey = make(map[int64]*mon, len(mons)), make(map[string]*mon, len(mons)), make(map[string]*mon, len(mons))
	e.install(mons)
	for _, m := range mons {
		e.nextID = max(e.nextID, m.row.ID)
	}
	return e, nil
}

// decodeAll makes the monitors of rows, their machines decoded from their
// saved rows, their views published and their timers made (to be armed
// by install). Decoding is most of a start-up's work: it runs on every
// CPU (arming the timers and indexing the monitors, after it, do not).
func (e *Engine) decodeAll(rows []*store.Monitor) ([]*mon, error) {
	mons := make([]*mon, len(rows))
	errs := make([]error, len(rows))
	now := e.now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(rows); i = int(next.Add(1) - 1) {
				m := &mon{row: *rows[i]}
				m.handler = &handler{e: e, mon: m}
				mons[i] = m
				if errs[i] = e.decode(m); errs[i] != nil {
					continue
				}
				m.publish(e)
				for _, t := range m.machine.Timers() {
					m.timers = append(m.timers, &timerEntry{Owner: m, ID: t.Timer, Deadline: deadline(m.machine, t, now)})
				}
			}
		})
	}
	wg.Wait()
	for i, m := range mons {
		if errs[i] != nil {
			return nil, fmt.Errorf("monitor %s: %w", m.row.Slug, errs[i])
		}
	}
	return mons, nil
}

// load makes m's machine from its saved row and arms its timers.
func (e *Engine) load(m *mon) error {
	if err := e.decode(m); err != nil {
		return err
	}
	e.armAll(m)
	return nil
}

// decode makes m's machine from its saved row, and checks its schedule.
func (e *Engine) decode(m *mon) error {
	machine, err := monitor.Load(monitor.Config{Behavior: e.behavior, Handler: m.handler}, m.row.Machine)
	if err != nil {
		return err
	}
	settings, _, _, _ := active(machine.State())
	if err := e.behavior.Check(settings); err != nil {
		return fmt.Errorf("its saved schedule: %w", err)
	}
	m.machine = machine
	return nil
}

// install runs mons, which decodeAll made: their timers armed, in the
// order of mons (in one pass when they are many beside those armed: the
// heap is ordered again once, not pushed into for each timer), and the
// monitors indexed.
func (e *Engine) install(mons []*mon) {
	e.timers.Install(mons)
	e.counted()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, m := range mons {
		e.byID[m.row.ID] = m
		e.bySlug[m.row.Slug] = m
		e.byKey[m.row.PingKey] = m
	}
}

// armAll arms m's timers as its machine has them, at their deadlines,
// in place of those armed before.
func (e *Engine) armAll(m *mon) {
	e.disarmAll(m)
	now := e.now()
	for _, t := range m.machine.Timers() {
		e.arm(m, t.Timer, deadline(m.machine, t, now))
	}
}

// deadline is when timer t of m fires: at the deadline it was saved with,
// or its delay after now when it has none (a state put with Restore).
func deadline(m *monitor.Machine, t *monitor.StartTimer, now time.Time) time.Time {
	if d := m.Deadline(t.Timer); !d.IsZero() {
		return d
	}
	return now.Add(t.Delay)
}

// add indexes m.
func (e *Engine) add(m *mon) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.byID[m.row.ID] = m
	e.bySlug[m.row.Slug] = m
	e.byKey[m.row.PingKey] = m
}

// remove unindexes m.
func (e *Engine) remove(m *mon) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.byID, m.row.ID)
	if e.bySlug[m.row.Slug] == m {
		delete(e.bySlug, m.row.Slug)
	}
	if e.byKey[m.row.PingKey] == m {
		delete(e.byKey, m.row.PingKey)
	}
}

// reindex moves m from its old slug to its new one.
func (e *Engine) reindex(m *mon, oldSlug string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.bySlug[oldSlug] == m {
		delete(e.bySlug, oldSlug)
	}
	e.bySlug[m.row.Slug] = m
}

// Reserve makes slug the monitor of job: the job checks in to it, so it
// cannot be deleted or renamed (409 job_monitor) while the job is
// configured. On a shared store, a monitor of that slug outside the jobs'
// shard (made through the API before the job existed) can be: its job's
// check-ins do not reach it, and the instance that next takes the jobs
// over makes the monitor again in the jobs' shard.
func (e *Engine) Reserve(slug, job string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.jobMonitors == nil {
		e.jobMonitors = map[string]string{}
	}
	e.jobMonitors[slug] = job
}

// jobOf returns the job whose monitor m is, and whether it is one.
func (e *Engine) jobOf(m *mon) (string, bool) {
	e.mu.RLock()
	job, ok := e.jobMonitors[m.row.Slug]
	e.mu.RUnlock()
	if ok && e.shared != nil && m.row.Shard != store.JobsShard {
		return "", false
	}
	return job, ok
}

// errJobMonitor refuses to delete or rename the monitor of job.
func errJobMonitor(slug, job, what string) error {
	return &Error{Status: 409, Code: "job_monitor", Message: fmt.Sprintf("monitor %q is job %s's: the job checks in to it, and the server makes it again at its next start, so it cannot be %s. To stop watching the job, remove it from the jobs file (or set enabled: false there, which pauses its monitor); to silence its alerts for a while, pause the monitor (PATCH {\"status\": \"paused\"})", slug, job, what)}
}

// Hub returns the hub that publishes the monitors' changes.
func (e *Engine) Hub() *Hub { return e.hub }

// Running reports whether Run is running.
func (e *Engine) Running() bool { return e.running.Load() }

// Timers reports how many timers are armed.
func (e *Engine) Timers() int { return int(e.armedCount.Load()) }

// Run applies requests and timers until ctx is done; it returns nil then.
// Requests still waiting fail with ErrStopped.
func (e *Engine) Run(ctx context.Context) error {
	e.running.Store(true)
	defer e.running.Store(false)
	clock := time.NewTimer(time.Hour)
	defer clock.Stop()
	var helpers sync.WaitGroup
	defer helpers.Wait()
	helpers.Go(func() { e.sendAlerts(ctx) })
	rounds := make(chan []Event, publishQueue)
	e.events = rounds
	defer func() {
		e.events = nil
		close(rounds) // the publisher publishes what is left, then returns
	}()
	helpers.Go(func() { e.publishRounds(ctx, rounds) })
	if e.shared != nil {
		helpers.Go(func() { e.keepLeases(ctx) })
	}
	for {
		var batch []*request
		wait := time.Hour
		if next := e.timers.Next(); next != nil {
			// After a failed write, due timers wait a moment before
			// they are tried again.
			wait = max(next.Deadline.Sub(e.now()), e.retryAt.Sub(e.now()), 0)
		}
		if e.shared != nil {
			if until := e.expireShards(time.Now()); !until.IsZero() {
				wait = min(wait, max(time.Until(until), 0))
			}
		}
		clock.Reset(wait)
		select {
		case <-ctx.Done():
			close(e.stopped)
			e.drain()
			return nil
		case c := <-e.shardChanges:
			e.changeShards(c)
			continue
		case r := <-e.reqs:
			batch = append(batch, r)
		case <-clock.C:
			if e.shared != nil {
				e.expireShards(time.Now())
			}
		}
	more:
		for len(batch) < maxRound {
			select {
			case r := <-e.reqs:
				batch = append(batch, r)
			default:
				break more
			}
		}
		e.round(ctx, batch)
	}
}

// maxRound bounds the requests, and the timers, a round applies.
const maxRound = 512

// drain fails the requests waiting.
func (e *Engine) drain() {
	for {
		select {
		case r := <-e.reqs:
			r.done <- result{err: ErrStopped}
		default:
			return
		}
	}
}

// submit hands r to Run and waits for its result.
func (e *Engine) submit(ctx context.Context, r *request) result {
	r.done = make(chan result, 1)
	if err := ctx.Err(); err != nil {
		return result{err: errGone(err)} // not applied
	}
	select {
	case e.reqs <- r:
	case <-e.stopped:
		return result{err: ErrStopped}
	case <-ctx.Done():
		return result{err: errGone(ctx.Err())}
	}
	select {
	case res := <-r.done:
		return res
	case <-e.stopped:
		// Run may have answered before it stopped; if not, nobody will.
		select {
		case res := <-r.done:
			return res
		default:
			return result{err: ErrStopped}
		}
	case <-ctx.Done():
		// The request may still be applied: its result is dropped.
		return result{err: errGone(ctx.Err())}
	}
}

// sortedViews returns the views of every monitor, by slug.
func (e *Engine) sortedViews() []*View {
	e.mu.RLock()
	views := make([]*View, 0, len(e.bySlug))
	for _, m := range e.bySlug {
		views = append(views, m.view.Load())
	}
	e.mu.RUnlock()
	slices.SortFunc(views, func(a, b *View) int { return strings.Compare(a.Slug, b.Slug) })
	return views
}
