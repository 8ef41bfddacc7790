package riverbench_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	_ "modernc.org/sqlite" // the database/sql driver "sqlite", for river's SQLite driver

	jobsengine "github.com/fsmgen/fsmgen/server/internal/jobengine"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/pgtest"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/store/postgres"
	"github.com/fsmgen/fsmgen/server/internal/store/sqlite"
	"github.com/fsmgen/fsmgen/server/jobs"
	"github.com/fsmgen/fsmgen/server/monitors"
)

// database is one benchmark's database: a SQLite file or a Postgres URL.
type database struct {
	kind string // sqlite or postgres
	dsn  string
}

// newDatabase makes a new, empty database of that kind.
func newDatabase(b *testing.B, kind string) database {
	b.Helper()
	if kind == "postgres" {
		return database{kind, pgtest.DB(b)}
	}
	return database{kind, filepath.Join(b.TempDir(), "jobs.db")}
}

// quiet is the engines' logger: the benchmarks print only their figures.
var quiet = slog.New(slog.DiscardHandler)

// server is what cmd/server runs of the jobs: the monitors engine (the
// runs check in to their job's monitor) and the jobs engine, on a store.
type server struct {
	st     store.Store
	jobs   *jobsengine.Engine
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// phases are how long the start's steps took: opening the store,
	// the monitors engine's New, the jobs engine's New, and its Run until
	// Ready.
	phases phases
}

// phases are the steps of a server's start, timed.
type phases struct{ open, monitors, jobs, ready time.Duration }

// instances numbers the servers, whose names must differ on Postgres (a
// restarted server is a new instance).
var instances sync.Map

// startServer starts a server with the jobs defs on d and returns once it
// runs them: their machines loaded, their monitors made, on Postgres the
// jobs' lease taken.
func startServer(b *testing.B, d database, defs []*jobs.Job, maxRunning int) *server {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{cancel: cancel}
	var err error
	t0 := time.Now()
	lap := func(d *time.Duration) {
		now := time.Now()
		*d, t0 = now.Sub(t0), now
	}
	if d.kind == "postgres" {
		s.st, err = postgres.Open(ctx, d.dsn)
	} else {
		s.st, err = sqlite.Open(ctx, d.dsn)
	}
	if err != nil {
		b.Fatal(err)
	}
	lap(&s.phases.open)
	n, _ := instances.LoadOrStore(d.dsn, new(int))
	*n.(*int)++
	name := fmt.Sprintf("bench-%d", *n.(*int))
	// A lease of a minute, not the default 15 s: on a machine shared with
	// other work, loading 100,000 monitors can outlast a 15 s lease, and
	// the instance then loses and claims its shards again and again (the
	// monitors engine's matter, not what these benchmarks measure).
	mon, err := monitorengine.New(ctx, monitorengine.Config{Store: s.st, Instance: name, Addr: "http://127.0.0.1:1", Lease: time.Minute, Log: quiet})
	if err != nil {
		b.Fatal(err)
	}
	lap(&s.phases.monitors)
	s.jobs, err = jobsengine.New(ctx, jobsengine.Config{Store: s.st, Monitors: mon, Jobs: defs, MaxRunning: maxRunning, Instance: name, Log: quiet})
	if err != nil {
		b.Fatal(err)
	}
	lap(&s.phases.jobs)
	s.wg.Go(func() { mon.Run(ctx) })
	s.wg.Go(func() { s.jobs.Run(ctx) })
	select {
	case <-s.jobs.Ready():
	case <-time.After(5 * time.Minute):
		b.Fatal("the jobs engine is not ready after 5 minutes")
	}
	lap(&s.phases.ready)
	return s
}

// stop stops the server as SIGTERM does (on Postgres its leases are
// freed for the next).
func (s *server) stop() {
	s.cancel()
	s.wg.Wait()
	s.st.Close()
}

// idleJobs are n command jobs that run once a year: idle while the
// benchmark runs.
func idleJobs(n int) []*jobs.Job {
	defs := make([]*jobs.Job, n)
	for i := range defs {
		defs[i] = &jobs.Job{ID: fmt.Sprintf("job%06d", i), Name: fmt.Sprintf("Job %d", i), Enabled: true, Command: []string{"/bin/true"},
			Settings: jobs.Settings{Schedule: monitors.Schedule{Type: "cron", Expression: "0 3 1 1 *"}, Timezone: "UTC",
				Timeout: time.Hour, Retries: jobs.DefaultRetries, BackoffBase: jobs.DefaultBackoffBase, BackoffCap: jobs.DefaultBackoffCap}}
	}
	return defs
}

// benchArgs is the river job of the benchmarks: it does nothing.
type benchArgs struct {
	N int `json:"n"`
}

func (benchArgs) Kind() string { return "bench" }

type benchWorker struct {
	river.WorkerDefaults[benchArgs]
}

func (benchWorker) Work(ctx context.Context, job *river.Job[benchArgs]) error { return nil }

// yearly is river's schedule of the idle jobs: 03:00 UTC on January 1st,
// as the server's "0 3 1 1 *".
type yearly struct{}

func (yearly) Next(t time.Time) time.Time {
	t = t.UTC()
	next := time.Date(t.Year(), 1, 1, 3, 0, 0, 0, time.UTC)
	if !next.After(t) {
		next = next.AddDate(1, 0, 0)
	}
	return next
}

// riverClient is what the benchmarks use of a river client, whichever its
// driver.
type riverClient interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	SubscribeConfig(config *river.SubscribeConfig) (<-chan *river.Event, func())
}

// riverServer is a started river client and what closes its database.
type riverServer struct {
	client riverClient
	close  func()
}

// riverConfig is river's configuration in the benchmarks: its default
// queue with maxWorkers workers, the periodic jobs given, otherwise its
// defaults.
func riverConfig(periodic []*river.PeriodicJob, maxWorkers int) *river.Config {
	workers := river.NewWorkers()
	river.AddWorker(workers, benchWorker{})
	return &river.Config{
		Logger:       quiet,
		PeriodicJobs: periodic,
		Queues:       map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: maxWorkers}},
		Workers:      workers,
	}
}

// periodicJobs are n river periodic jobs that run once a year: river's
// counterpart of the server's idle jobs (definitions, each with its
// schedule).
func periodicJobs(n int) []*river.PeriodicJob {
	out := make([]*river.PeriodicJob, n)
	for i := range out {
		out[i] = river.NewPeriodicJob(yearly{}, func() (river.JobArgs, *river.InsertOpts) { return benchArgs{N: i}, nil },
			&river.PeriodicJobOpts{ID: fmt.Sprintf("job%06d", i)})
	}
	return out
}

// startRiver opens d, migrates its schema first when migrate says so (a
// first start), and starts a river client configured by config.
func startRiver(b *testing.B, d database, migrate bool, config *river.Config) *riverServer {
	b.Helper()
	ctx := context.Background()
	if d.kind == "postgres" {
		pool, err := pgxpool.New(ctx, d.dsn)
		if err != nil {
			b.Fatal(err)
		}
		driver := riverpgxv5.New(pool)
		return startRiverDriver(b, driver, migrate, config, pool.Close)
	}
	db, err := sql.Open("sqlite", "file:"+d.dsn+"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)")
	if err != nil {
		b.Fatal(err)
	}
	// River's advice for SQLite: one connection, which SQLite serialises
	// anyway.
	db.SetMaxOpenConns(1)
	return startRiverDriver(b, riversqlite.New(db), migrate, config, func() { db.Close() })
}

// startRiverDriver is startRiver for one driver.
func startRiverDriver[TTx any](b *testing.B, driver riverdriver.Driver[TTx], migrate bool, config *river.Config, closeDB func()) *riverServer {
	b.Helper()
	ctx := context.Background()
	if migrate {
		m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			b.Fatal(err)
		}
	}
	client, err := river.NewClient(driver, config)
	if err != nil {
		b.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		b.Fatal(err)
	}
	return &riverServer{client: client, close: closeDB}
}

// stop stops the client and closes its database.
func (r *riverServer) stop(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.client.Stop(ctx); err != nil {
		b.Error(err)
	}
	r.close()
}
