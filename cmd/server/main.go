// Command server runs Loom's cron monitoring and background jobs on fsmgen
// machines: a monitor per watched job, each an fsmgen machine
// (spec/monitor.yaml) whose own timers catch missed runs and runs that
// take too long, and the background jobs of a configuration file, each an
// fsmgen machine (spec/job.yaml) that runs, times out and retries them;
// all kept in SQLite, or in Postgres shared by several instances.
//
// Usage:
//
//	server [-addr 127.0.0.1:8080] [-db server.db | -postgres URL [-lease 15s] [-advertise URL]]
//	       [-jobs jobs.yaml] [-jobs-max-running N] [-retention 720h] [-alert-webhook URL] [-ping-rate N]
//	       [-max-thread-bytes N] [-reset-token]
//
// With -postgres, several servers share the database: each runs the
// monitors of the shards whose leases it holds, forwards the requests
// about the others' monitors to them (at the URL each advertises), and
// takes over the monitors of an instance that dies within -lease. The
// jobs are run by one instance, the holder of one shard's lease (with
// their monitors); the others forward triggers and cancels to it, and
// one of them takes the jobs over within -lease when it dies.
//
// On its first start (or with -reset-token) the server makes an API token
// and prints it once, on a line "token: …"; it keeps only its SHA-256.
// The API (under /api/crons/, /api/jobs and /api/threads) needs it as a
// bearer token; pings (/ping/KEY…) do not: a monitor's ping key is their
// secret. The web page is at /.
//
// The coding agent (cmd/agent) syncs its threads here when run with
// -sync URL and the token in FSMGEN_SERVER_TOKEN: PUT /api/threads/{id}
// stores a thread's revision unless a newer one is stored (the same
// revision again changes nothing; an older one is answered 409), at most
// -max-thread-bytes of JSON (32 MiB; 413 beyond); GET /api/threads lists
// them, the most recently updated first, and GET /api/threads/{id}
// returns one whole. Threads are plain rows of the database: with
// -postgres, every instance serves them, none forwards them.
//
// Every request the server acknowledges is stored first, durably: it
// survives a kill -9; a job's run left running by a kill -9 is closed as
// failed at the next start, and retried. SIGINT or SIGTERM stop it
// gracefully: it finishes the requests in flight, cancels the runs in
// progress (recorded cancelled), then exits. The HTTP API is described in
// docs/server.md.
package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/fsmgen/fsmgen/jobs"
	"github.com/fsmgen/fsmgen/server/api"
	jobsengine "github.com/fsmgen/fsmgen/server/jobs"
	"github.com/fsmgen/fsmgen/server/monitors"
	"github.com/fsmgen/fsmgen/server/store"
	"github.com/fsmgen/fsmgen/server/store/postgres"
	"github.com/fsmgen/fsmgen/server/store/sqlite"
	"github.com/fsmgen/fsmgen/server/web"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "server:", err)
		}
		os.Exit(2)
	}
}

// options are the command line's flags.
type options struct {
	addr       string
	db         string
	postgres   string
	lease      time.Duration
	advertise  string
	webhook    string
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
	fs.DurationVar(&o.lease, "lease", monitors.DefaultLease, "with -postgres: how long an instance's `lease` on its monitors lasts unrenewed: another takes them over within it when it dies")
	fs.StringVar(&o.advertise, "advertise", "", "with -postgres: the `URL` other instances forward this one's requests to (default http:// and -addr)")
	fs.StringVar(&o.webhook, "alert-webhook", "", "the `URL` alerts are posted to, for monitors without a webhook of their own")
	fs.Float64Var(&o.pingRate, "ping-rate", api.DefaultPingRate, "how many pings a `second` each ping key may make (bursts of twice as many)")
	fs.StringVar(&o.jobs, "jobs", "", "the YAML `file` of the background jobs to run (docs/server.md); none when empty")
	fs.IntVar(&o.maxRunning, "jobs-max-running", DefaultMaxRunning, "how many job `runs` may be in progress at once; a run due beyond it waits, queued, for one to end (0: no limit)")
	fs.DurationVar(&o.retention, "retention", 30*24*time.Hour, "how long job runs and their check-ins are kept")
	fs.Int64Var(&o.maxThread, "max-thread-bytes", api.DefaultMaxThread, "the largest thread, in `bytes` of JSON, an agent may sync to /api/threads (larger pushes are answered 413)")
	fs.BoolVar(&o.resetToken, "reset-token", false, "make a new API token, print it, and forget the old one")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q: the server takes only flags", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
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
	return o, nil
}

// DefaultMaxRunning is how many job runs may be in progress at once when
// -jobs-max-running is not given.
const DefaultMaxRunning = 100

// tokenKey is the meta key of the API token's SHA-256.
const tokenKey = "api_token_sha256"

// run serves until ctx is done.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	var registry jobs.Registry
	if o.jobs != "" {
		defs, err := jobs.Load(o.jobs)
		if err != nil {
			return err
		}
		for _, d := range defs {
			if err := registry.Register(d); err != nil {
				return fmt.Errorf("%s: %w", o.jobs, err)
			}
		}
	}
	var st store.Store
	where := o.db
	if o.postgres != "" {
		st, err = postgres.Open(ctx, o.postgres)
		where = "postgres"
	} else {
		st, err = sqlite.Open(ctx, o.db)
	}
	if err != nil {
		return err
	}
	defer st.Close()
	hash, err := token(ctx, st, o.resetToken, stdout)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	advertise := o.advertise
	if advertise == "" {
		advertise = "http://" + ln.Addr().String()
	}
	instance := instanceName()
	engine, err := monitors.New(ctx, monitors.Config{Store: st, AlertWebhook: o.webhook, Log: log, Instance: instance, Addr: advertise, Lease: o.lease})
	if err != nil {
		ln.Close()
		return fmt.Errorf("load the monitors: %w", err)
	}
	if err := registry.Register(*jobsengine.Retention(st, o.retention, time.Now)); err != nil {
		ln.Close()
		return fmt.Errorf("the built-in retention job: %w (give your job another id)", err)
	}
	jobEngine, err := jobsengine.New(ctx, jobsengine.Config{Store: st, Monitors: engine, Jobs: registry.Jobs(), MaxRunning: o.maxRunning, AlertWebhook: o.webhook, Log: log, Instance: instance})
	if err != nil {
		ln.Close()
		return fmt.Errorf("load the jobs: %w", err)
	}
	srv := &http.Server{
		Handler:           api.New(api.Config{Engine: engine, Jobs: jobEngine, Store: st, TokenHash: hash, PingRate: o.pingRate, Page: web.Page(), Log: log, MaxThreadBytes: o.maxThread}),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(engine.Hub().Close)
	log.Info("serving", "addr", "http://"+ln.Addr().String(), "db", where, "monitors", engine.Monitors(), "timers", engine.Timers(), "jobs", len(registry.Jobs()))

	engineCtx, stopEngine := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := engine.Run(engineCtx); err != nil {
			log.Error("the engine stopped", "err", err)
		}
	})
	// The jobs stop first: their runs, cancelled, check in to the
	// monitors.
	jobsCtx, stopJobs := context.WithCancel(context.Background())
	jobsDone := make(chan struct{})
	go func() {
		defer close(jobsDone)
		if err := jobEngine.Run(jobsCtx); err != nil {
			log.Error("the jobs engine stopped", "err", err)
		}
	}()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	select {
	case err = <-serveErr:
	case <-ctx.Done():
		log.Info("shutting down")
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = srv.Shutdown(shutdown)
		cancel()
	}
	// The requests in flight are answered; now the jobs stop, then the
	// monitors.
	stopJobs()
	<-jobsDone
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

// token returns the SHA-256 of the API token, making (and printing) a
// token on the first start or when reset asks for one.
func token(ctx context.Context, st store.Store, reset bool, stdout io.Writer) ([32]byte, error) {
	var hash [32]byte
	stored, ok, err := st.Meta(ctx, tokenKey)
	if err != nil {
		return hash, err
	}
	if ok && !reset {
		b, err := hex.DecodeString(stored)
		if err != nil || len(b) != len(hash) {
			return hash, fmt.Errorf("the stored API token is damaged: start with -reset-token for a new one")
		}
		copy(hash[:], b)
		return hash, nil
	}
	var raw [32]byte
	rand.Read(raw[:])
	tok := "fsm_" + base64.RawURLEncoding.EncodeToString(raw[:])
	hash = sha256.Sum256([]byte(tok))
	if err := st.SetMeta(ctx, tokenKey, hex.EncodeToString(hash[:])); err != nil {
		return hash, err
	}
	fmt.Fprintf(stdout, "token: %s\n", tok)
	return hash, nil
}
