// Package app is the server's program: its flags, its store and engines,
// wired and served, run by cmd/server (whose package doc is its manual).
package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/fsmgen/fsmgen/server/internal/api"
	"github.com/fsmgen/fsmgen/server/internal/apikey"
	jobsengine "github.com/fsmgen/fsmgen/server/internal/jobengine"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/store/postgres"
	"github.com/fsmgen/fsmgen/server/internal/store/sqlite"
	"github.com/fsmgen/fsmgen/server/internal/web"
	"github.com/fsmgen/fsmgen/server/internal/webhook"
	"github.com/fsmgen/fsmgen/server/jobs"
)

// Main runs the server (cmd/server) on the process's arguments and
// standard streams until SIGINT or SIGTERM, and returns its exit code.
//
// A program of its own runs the server with Go jobs (WithJobs):
//
//	func main() { os.Exit(app.Main(app.WithJobs(jobs.Job{ID: "sweep", Func: sweep, ...}))) }
func Main(opts ...Option) int {
	var ex extras
	for _, o := range opts {
		o(&ex)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, ex); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "server:", err)
		}
		return 2
	}
	return 0
}

// Option adds to what Main runs.
type Option func(*extras)

// extras are what the options add.
type extras struct {
	jobs []jobs.Job
}

// WithJobs adds Go jobs (each a jobs.Job with a Func) to the jobs of the
// -jobs file: a program of its own that runs the server through Main runs
// them as it runs the file's commands (docs/server.md). An id the file
// has too is refused at start.
func WithJobs(js ...jobs.Job) Option {
	return func(ex *extras) { ex.jobs = append(ex.jobs, js...) }
}

// options are the command line's flags.
type options struct {
	addr       string
	db         string
	postgres   string
	lease      time.Duration
	advertise  string
	webhook    string
	allow      *webhook.Guard
	pingRate   float64
	resetToken bool
	jobs       string
	maxRunning int
	retention  time.Duration
	maxThread  int64
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "the `HOST:PORT` to serve HTTP on")
	fs.StringVar(&o.db, "db", "server.db", "the SQLite database `file` (created if missing)")
	fs.StringVar(&o.postgres, "postgres", "", "the Postgres database `URL` (postgres://…) to keep the monitors in, instead of -db; several servers may share it")
	fs.DurationVar(&o.lease, "lease", monitorengine.DefaultLease, "with -postgres: how long an instance's `lease` on its monitors lasts unrenewed: another takes them over within it when it dies")
	fs.StringVar(&o.advertise, "advertise", "", "with -postgres: the `URL` other instances forward this one's requests to (default http:// and -addr)")
	fs.StringVar(&o.webhook, "alert-webhook", "", "the `URL` alerts are posted to, for monitors without a webhook of their own")
	allow := fs.String("webhook-allow", "", "the internal addresses webhooks may reach: networks (10.1.2.0/24), addresses (127.0.0.1) and `host:port` pairs (127.0.0.1:9000, hooks.internal:8443), separated by commas; loopback, private, link-local and other internal addresses are refused unless listed")
	fs.Float64Var(&o.pingRate, "ping-rate", api.DefaultPingRate, "how many pings a `second` each ping key may make (bursts of twice as many)")
	fs.StringVar(&o.jobs, "jobs", "", "the YAML `file` of the background jobs to run (docs/server.md); none when empty")
	fs.IntVar(&o.maxRunning, "jobs-max-running", DefaultMaxRunning, "how many job `runs` may be in progress at once; a run due beyond it waits, queued, for one to end (0: no limit)")
	fs.DurationVar(&o.retention, "retention", 30*24*time.Hour, "how long job runs and their check-ins are kept")
	fs.Int64Var(&o.maxThread, "max-thread-bytes", api.DefaultMaxThread, "the largest thread, in `bytes` of JSON, an agent may sync to /api/threads (larger pushes are answered 413)")
	fs.BoolVar(&o.resetToken, "reset-token", false, "make the admin API key anew, print its token and exit (the servers running on the database refuse the old one within a second)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q: the server takes only flags", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.resetToken {
		for _, name := range slices.Sorted(maps.Keys(set)) {
			if name != "reset-token" && name != "db" && name != "postgres" {
				return o, fmt.Errorf("-reset-token makes a new admin key and exits: it takes only -db or -postgres, not -%s", name)
			}
		}
	}
	if set["db"] && set["postgres"] {
		return o, errors.New("-db and -postgres both given: keep the monitors in SQLite (-db FILE) or in Postgres (-postgres URL), not both")
	}
	if o.postgres == "" && (set["lease"] || set["advertise"]) {
		return o, errors.New("-lease and -advertise are for several instances on one Postgres: give -postgres URL too")
	}
	if o.lease < time.Second {
		return o, fmt.Errorf("-lease %s: give at least 1s", o.lease)
	}
	if o.retention <= 0 {
		return o, fmt.Errorf("-retention %v: give a positive duration, as in 720h", o.retention)
	}
	if o.maxRunning < 0 {
		return o, fmt.Errorf("-jobs-max-running %d: give 0 (no limit) or more", o.maxRunning)
	}
	if o.maxThread < 1024 {
		return o, fmt.Errorf("-max-thread-bytes %d: give at least 1024", o.maxThread)
	}
	if o.pingRate <= 0 {
		return o, fmt.Errorf("-ping-rate %g: give a positive number", o.pingRate)
	}
	allowed, err := webhook.ParseAllow(*allow)
	if err != nil {
		return o, fmt.Errorf("-webhook-allow: %w", err)
	}
	o.allow = allowed
	if o.webhook != "" {
		if err := o.allow.CheckURL(o.webhook); err != nil {
			return o, fmt.Errorf("-alert-webhook: %w", err)
		}
	}
	return o, nil
}

// DefaultMaxRunning is how many job runs may be in progress at once when
// -jobs-max-running is not given.
const DefaultMaxRunning = 100

// run serves until ctx is done: it opens the database (locked, for
// SQLite, to this process), makes the first admin key, starts the
// monitors' and the jobs' engines and serves the API and the page.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, ex extras) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if o.resetToken {
		return resetToken(ctx, o, stdout, log)
	}
	registry, err := loadJobs(o.jobs, ex.jobs)
	if err != nil {
		return err
	}
	where := o.db
	if o.postgres != "" {
		where = "postgres"
	} else {
		release, err := lockDB(o.db)
		if err != nil {
			return err
		}
		defer release()
	}
	st, err := open(ctx, o)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := firstKey(ctx, st, stdout, log); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	engine, jobEngine, err := newEngines(ctx, o, st, &registry, ln, log)
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{
		Handler:           api.New(api.Config{Engine: engine, Jobs: jobEngine, Store: st, PingRate: o.pingRate, Page: web.Page(), Log: log, MaxThreadBytes: o.maxThread}),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(engine.Hub().Close)
	log.Info("serving", "addr", "http://"+ln.Addr().String(), "db", where, "monitors", engine.Monitors(), "timers", engine.Timers(), "jobs", len(registry.Jobs()))
	return serve(ctx, srv, ln, engine, jobEngine, log)
}

// loadJobs reads the jobs of the -jobs file (none when path is empty)
// into a registry, then the Go jobs given.
func loadJobs(path string, goJobs []jobs.Job) (jobs.Registry, error) {
	var registry jobs.Registry
	if path != "" {
		defs, err := jobs.Load(path)
		if err != nil {
			return registry, err
		}
		for _, d := range defs {
			if err := registry.Register(d); err != nil {
				return registry, fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	for _, j := range goJobs {
		if err := registry.Register(j); err != nil {
			return registry, fmt.Errorf("the program's Go jobs: %w", err)
		}
	}
	return registry, nil
}

// newEngines loads the monitors' engine, then the jobs' (the registry's
// jobs and the built-in retention job), as an instance of its own among
// those that share the database, known to them at -advertise (default:
// ln's address).
func newEngines(ctx context.Context, o options, st store.Store, registry *jobs.Registry, ln net.Listener, log *slog.Logger) (*monitorengine.Engine, *jobsengine.Engine, error) {
	advertise := o.advertise
	if advertise == "" {
		advertise = "http://" + ln.Addr().String()
	}
	instance := instanceName()
	engine, err := monitorengine.New(ctx, monitorengine.Config{Store: st, AlertWebhook: o.webhook, Webhooks: o.allow, Log: log, Instance: instance, Addr: advertise, Lease: o.lease})
	if err != nil {
		return nil, nil, fmt.Errorf("load the monitors: %w", err)
	}
	if err := registry.Register(*jobsengine.Retention(st, o.retention, time.Now)); err != nil {
		return nil, nil, fmt.Errorf("the built-in retention job: %w (give your job another id)", err)
	}
	jobEngine, err := jobsengine.New(ctx, jobsengine.Config{Store: st, Monitors: engine, Jobs: registry.Jobs(), MaxRunning: o.maxRunning, AlertWebhook: o.webhook, Log: log, Instance: instance})
	if err != nil {
		return nil, nil, fmt.Errorf("load the jobs: %w", err)
	}
	return engine, jobEngine, nil
}

// serve runs the engines and serves srv on ln until ctx is done or
// serving fails, then stops in order: the requests in flight are
// answered (for at most 10 s), then the jobs stop (their runs, cancelled,
// check in to the monitors), then the monitors. The engines' contexts are
// not ctx's, so that each stops only in its turn.
func serve(ctx context.Context, srv *http.Server, ln net.Listener, engine *monitorengine.Engine, jobEngine *jobsengine.Engine, log *slog.Logger) error {
	engineCtx, stopEngine := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := engine.Run(engineCtx); err != nil {
			log.Error("the engine stopped", "err", err)
		}
	})
	jobsCtx, stopJobs := context.WithCancel(context.Background())
	var jobsWG sync.WaitGroup
	jobsWG.Go(func() {
		if err := jobEngine.Run(jobsCtx); err != nil {
			log.Error("the jobs engine stopped", "err", err)
		}
	})
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	var err error
	select {
	case err = <-serveErr:
	case <-ctx.Done():
		log.Info("shutting down")
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = srv.Shutdown(shutdown)
		cancel()
	}
	stopJobs()
	jobsWG.Wait()
	stopEngine()
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// instanceName names this process among the instances that share a
// database: its host, its pid and random bits (a restarted process is a
// new instance).
func instanceName() string {
	host, _ := os.Hostname()
	var b [6]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// open opens the database of the options.
func open(ctx context.Context, o options) (store.Store, error) {
	if o.postgres != "" {
		return postgres.Open(ctx, o.postgres, postgres.WithLease(o.lease))
	}
	return sqlite.Open(ctx, o.db)
}

// firstKey makes the admin API key on the first start, and prints its
// token; it warns when no admin key is valid (all were revoked).
func firstKey(ctx context.Context, st store.Store, stdout io.Writer, log *slog.Logger) error {
	tok, err := apikey.Bootstrap(ctx, st, false, time.Now().UTC().Truncate(time.Microsecond))
	if err != nil {
		return fmt.Errorf("make the admin API key: %w", err)
	}
	if tok != "" {
		fmt.Fprintf(stdout, "token: %s\n", tok)
		return nil
	}
	keys, err := st.Keys(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if k.Scope == apikey.ScopeAdmin && k.RevokedAt.IsZero() {
			return nil
		}
	}
	log.Warn("every admin API key is revoked: no key can make or revoke keys; run the server with -reset-token (it exits) for a new admin key")
	return nil
}

// resetToken makes the admin key anew and prints its token. It takes no
// lock: the servers running on the database go on, and refuse the old
// token within apikey.TTL.
func resetToken(ctx context.Context, o options, stdout io.Writer, log *slog.Logger) error {
	st, err := open(ctx, o)
	if err != nil {
		return err
	}
	defer st.Close()
	tok, err := apikey.Bootstrap(ctx, st, true, time.Now().UTC().Truncate(time.Microsecond))
	if err != nil {
		return fmt.Errorf("make the admin API key anew: %w", err)
	}
	fmt.Fprintf(stdout, "token: %s\n", tok)
	log.Info("the admin API key is made anew: its old token is refused from now on, by the servers running on the database within a second", "key", apikey.AdminID)
	return nil
}
