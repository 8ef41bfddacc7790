// Package store defines what the server keeps — monitors, check-ins,
// background jobs and their runs, the alerts waiting for delivery, the
// coding agent's synced threads and the API's keys —
// and the interface of the databases that keep it: SQLite (package
// store/sqlite, the embedded default), Postgres (package store/postgres,
// which several instances share: see Shared) and, for tests that must not
// link a database, memory (package store/memory).
//
// The engine writes in batches: it applies many requests to its machines,
// then writes all they changed in one transaction (Apply), so that a ping
// is acknowledged only once it would survive a kill -9, and thousands of
// pings a second share a few syncs.
package store

import (
	"context"
	"errors"
	"time"
)

// Store is a database of monitors.
type Store interface {
	// Meta returns the value stored under key, and whether there is one;
	// SetMeta stores one, durably.
	Meta(ctx context.Context, key string) (string, bool, error)
	SetMeta(ctx context.Context, key, value string) error
	// Monitors returns every monitor, by id.
	Monitors(ctx context.Context) ([]*Monitor, error)
	// Checkins returns a monitor's last limit check-ins, newest first;
	// Checkin one of them, or nil when it has none of that id;
	// CheckinsByID those of the ids that exist, of any monitor, in no
	// particular order.
	Checkins(ctx context.Context, monitorID int64, limit int) ([]*Checkin, error)
	Checkin(ctx context.Context, monitorID int64, id string) (*Checkin, error)
	CheckinsByID(ctx context.Context, ids []string) ([]*Checkin, error)
	// Apply writes a batch in one transaction, durably, or nothing of it.
	Apply(ctx context.Context, b *Batch) error
	// PendingAlerts returns up to limit undelivered alerts due at now,
	// oldest first, and of each URL only the oldest undelivered one (a
	// webhook gets its alerts in order); NextAlertAt when the next of
	// those is due, the others of its URL waiting for it (zero: none);
	// OldestAlertAt when the oldest undelivered alert was raised (its
	// InsertAlert's At; zero: none).
	PendingAlerts(ctx context.Context, now time.Time, limit int) ([]*Alert, error)
	NextAlertAt(ctx context.Context) (time.Time, error)
	OldestAlertAt(ctx context.Context) (time.Time, error)
	// AlertDelivered records a delivery; AlertFailed a failed attempt at
	// now, to be tried again at next, or given up when next is zero.
	AlertDelivered(ctx context.Context, id int64, now time.Time) error
	AlertFailed(ctx context.Context, id int64, now, next time.Time, why string) error
	// Jobs returns every job's row, by id.
	Jobs(ctx context.Context) ([]*Job, error)
	// Runs returns a job's last limit runs, newest first; Run one run, or
	// nil when there is none of that id.
	Runs(ctx context.Context, jobID string, limit int) ([]*Run, error)
	Run(ctx context.Context, id string) (*Run, error)
	// RunningRuns returns the runs still marked running (at a start, those
	// a killed server left), oldest first.
	RunningRuns(ctx context.Context) ([]*Run, error)
	// LastRuns returns the newest run of every job that has one, in one
	// read (a start-up reads them for thousands of jobs).
	LastRuns(ctx context.Context) ([]*Run, error)
	// Threads keeps the agent's synced threads.
	Threads
	// Keys keeps the API's keys.
	Keys
	// Close closes the database.
	Close() error
}

// Monitor is a monitor's row.
type Monitor struct {
	ID              int64
	Slug, Name      string
	PingKey         string
	AlertWebhookURL string
	// Machine is the monitor's machine as Save saved it.
	Machine []byte
	// Health is the health last reported (it stays while a run is in
	// progress, paused or disabled).
	Health        string
	LastCheckinAt time.Time // zero when none
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// Shard is the shard the monitor belongs to, in a Shared store (0
	// elsewhere): the instance that holds its lease runs it.
	Shard int
}

// Checkin is a check-in's row.
type Checkin struct {
	ID        string
	MonitorID int64
	Status    string // in_progress, ok, error, missed, timeout
	Source    string // ping, api, system
	CreatedAt time.Time
	// FinishedAt and Duration are set when a run finishes; ExitCode when
	// the ping gave one; ExpectedAt on a missed check-in.
	FinishedAt time.Time
	Duration   *time.Duration
	ExitCode   *int
	Output     *string
	ExpectedAt time.Time
}

// Job is a background job's row: its machine as Save saved it and the
// health last reported. What the job runs comes from the configuration,
// not from the database.
type Job struct {
	ID        string
	Machine   []byte
	Health    string
	UpdatedAt time.Time
}

// Run is a job run's row.
type Run struct {
	ID    string
	JobID string
	// Status is queued, running, succeeded, failed or cancelled.
	Status string
	// Attempt is 0 for a first try, n for the nth retry.
	Attempt int
	// TriggeredBy is schedule, manual or retry.
	TriggeredBy string
	// StartedAt is when the run started; while it is queued (waiting for
	// a free slot, or behind the job's run in progress), when it was
	// queued.
	StartedAt time.Time
	// FinishedAt, Duration, Output, Truncated, ExitCode and Error are set
	// when the run finishes (ExitCode when a command exited).
	FinishedAt time.Time
	Duration   *time.Duration
	Output     string
	Truncated  bool // the output was cut to its end
	ExitCode   *int
	Error      string
}

// Alert is an alert waiting to be delivered to a webhook.
type Alert struct {
	ID       int64
	URL      string
	Payload  []byte
	Attempts int
}

// Batch is the writes of a round, applied in order in one transaction.
type Batch struct {
	Ops []Op
	// Fence, when set, makes a Shared store write the batch only if the
	// instance still holds the lease of each of the shards (ErrFenced
	// otherwise): the shards of the monitors the batch writes, JobsShard
	// for the jobs' writes.
	Fence *Fence
}

// Fence names the leases a batch needs.
type Fence struct {
	Instance string
	Shards   []int
}

// Op is a write: InsertMonitor, UpdateMonitor, SaveMachine,
// DeleteMonitor, InsertCheckin, FinishCheckin, InsertAlert, SaveJob,
// InsertRun, StartQueuedRun, FinishRun, DeleteRuns or DeleteCheckins.
type Op interface{ isOp() }

// InsertMonitor adds a monitor, with its id.
type InsertMonitor struct{ Monitor Monitor }

// UpdateMonitor writes every field of a monitor but its id and creation
// time.
type UpdateMonitor struct{ Monitor Monitor }

// SaveMachine writes what a monitor's steps change: its machine, its
// health, its last check-in and its update time.
type SaveMachine struct {
	ID            int64
	Machine       []byte
	Health        string
	LastCheckinAt time.Time
	UpdatedAt     time.Time
}

// DeleteMonitor removes a monitor and its check-ins.
type DeleteMonitor struct{ ID int64 }

// InsertCheckin adds a check-in.
type InsertCheckin struct{ Checkin Checkin }

// FinishCheckin closes a monitor's in-progress check-in with Status at
// At; its duration runs from its creation. ExitCode and Output are kept
// when not nil. A check-in that is not in progress is left as it is.
type FinishCheckin struct {
	MonitorID int64
	ID        string
	Status    string
	At        time.Time
	ExitCode  *int
	Output    *string
}

// InsertAlert queues an alert, raised at At, for delivery to URL, due then.
type InsertAlert struct {
	URL     string
	Payload []byte
	At      time.Time
}

// SaveJob writes a job's row, adding it when it is new.
type SaveJob struct{ Job Job }

// InsertRun adds a run (running, or queued).
type InsertRun struct{ Run Run }

// StartQueuedRun marks a queued run running, started at StartedAt. A run
// that is not queued is left as it is.
type StartQueuedRun struct {
	ID        string
	StartedAt time.Time
}

// FinishRun closes a running (or queued) run with Status at At, with its
// duration, output, exit code and error. A run that is neither is left as
// it is, so a run is never finished twice.
type FinishRun struct {
	ID         string
	Status     string
	FinishedAt time.Time
	Duration   time.Duration
	Output     string
	Truncated  bool
	ExitCode   *int
	Error      string
}

// DeleteRuns removes the finished runs that started before Before (not
// those running or queued).
type DeleteRuns struct{ Before time.Time }

// DeleteCheckins removes a monitor's finished check-ins created before
// Before.
type DeleteCheckins struct {
	MonitorID int64
	Before    time.Time
}

func (InsertMonitor) isOp()  {}
func (UpdateMonitor) isOp()  {}
func (SaveMachine) isOp()    {}
func (DeleteMonitor) isOp()  {}
func (InsertCheckin) isOp()  {}
func (FinishCheckin) isOp()  {}
func (InsertAlert) isOp()    {}
func (SaveJob) isOp()        {}
func (InsertRun) isOp()      {}
func (StartQueuedRun) isOp() {}
func (FinishRun) isOp()      {}
func (DeleteRuns) isOp()     {}
func (DeleteCheckins) isOp() {}

// Add appends writes to the batch.
func (b *Batch) Add(ops ...Op) { b.Ops = append(b.Ops, ops...) }

// Append adds the writes of other after b's.
func (b *Batch) Append(other *Batch) { b.Ops = append(b.Ops, other.Ops...) }

// Len reports how many writes the batch holds.
func (b *Batch) Len() int { return len(b.Ops) }

// ErrFenced is the error of a batch whose instance does not hold one of
// the leases its Fence names (any more): it wrote nothing.
var ErrFenced = errors.New("this instance no longer holds the lease of a shard the batch writes: another instance runs its monitors (or jobs) now")

// ErrPaused is the error of a transaction the database ended because
// this instance stopped in the middle of it for longer than its session
// may sit idle in a transaction (a third of its lease: a SIGSTOP, a paused
// machine, a process starved of processor time): the transaction was
// rolled back, and the instance's leases may have passed to another
// instance. It is a fault of this instance's pace, not of the database:
// the next round runs on a new session.
var ErrPaused = errors.New("this instance paused in the middle of a transaction for longer than a third of its lease, so the database ended the transaction (rolled back)")

// JobsShard is the shard the background jobs belong to in a Shared
// store: the instance that holds its lease runs every job (their timers,
// their runs), its writes fenced by that lease, and the jobs' monitors
// (job-<id>) are in it, so that their check-ins stay in that instance.
const JobsShard = 0

// Shared is a store several instances of the server share (Postgres).
// Its monitors are divided into Shards shards by a column of their own;
// an instance runs the monitors of the shards whose leases it holds, and
// its batches are fenced by them.
type Shared interface {
	Store
	// Shards reports how many shards there are.
	Shards() int
	// NewMonitorID returns an id no other monitor has, nor will have;
	// NewMonitorIDs n of them, in one round trip.
	NewMonitorID(ctx context.Context) (int64, error)
	NewMonitorIDs(ctx context.Context, n int) ([]int64, error)
	// TakenSlugs returns those of slugs that a monitor has, in any shard.
	TakenSlugs(ctx context.Context, slugs []string) ([]string, error)
	// Heartbeat records that the instance lives, reachable at addr, for
	// lease; it returns how many instances live.
	Heartbeat(ctx context.Context, instance, addr string, lease time.Duration) (live int, err error)
	// Leave removes the instance and frees its leases.
	Leave(ctx context.Context, instance string) error
	// Leases renews for lease the leases of the instance among held (those
	// that did not expire), then claims up to claim free or expired ones,
	// never waiting for another transaction's lock on one; it returns the
	// shards it renewed and those it claimed, and when to look again
	// (zero: no need before the next renewal): when the next lease of
	// another instance expires, or sooner when a free or expired lease it
	// could have claimed was locked.
	Leases(ctx context.Context, instance string, held []int, claim int, lease time.Duration) (renewed, claimed []int, next time.Duration, err error)
	// Release frees leases of the instance.
	Release(ctx context.Context, instance string, shards []int) error
	// ShardMonitors returns the monitors of the shards, by id.
	ShardMonitors(ctx context.Context, shards []int) ([]*Monitor, error)
	// Holder returns the instance that holds shard's lease and its
	// address (empty when none does).
	Holder(ctx context.Context, shard int) (owner, addr string, err error)
	// Locate finds a monitor by slug (or by ping key when slug is empty):
	// its row, and the address of the instance that holds its shard's
	// lease and that instance (empty when none does). It returns nil for
	// no such monitor.
	Locate(ctx context.Context, slug, key string) (m *Monitor, owner, addr string, err error)
}
