// Package pgtest runs a real Postgres server for a test binary: one
// cluster per binary, made in a temporary directory on the first call of
// DB and stopped when the binary's tests end, and a fresh database for
// each test.
//
// It needs Debian's postgresql package (initdb and postgres under
// /usr/lib/postgresql/VERSION/bin); `make postgres-deps` installs it, as
// root, and a missing server fails the test (it is never skipped).
// Postgres refuses to run as root, and CI runs as root: the cluster then
// belongs to the user nobody. It listens on a Unix socket in its
// directory only, so it takes no port, and it dies with the test binary
// (its parent-death signal), even under SIGKILL; a cluster left behind
// all the same (the binary killed while it started) is removed by the
// next binary that starts one.
//
// The cluster trades durability for speed (fsync off): the tests kill
// the server's processes, never Postgres. The benchmarks' is Durable.
//
// Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// and, for benchmarks, pgtest.Main(m, pgtest.Options{Durable: true}).
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/proclock"

	"github.com/jackc/pgx/v5"
)

// dirPrefix names the clusters' directories in the temporary directory.
const dirPrefix = "fsmgen-pgtest-"

// Cluster is a running Postgres server.
type Cluster struct {
	dir    string       // the cluster's directory: data/ and the socket
	unlock func() error // releases the directory's owner lock (ownerLock)
	cmd    *exec.Cmd
	done   chan struct{} // closed when the server exited
	port   int
	dbs    atomic.Int64
}

// Options are how a cluster is made.
type Options struct {
	// Durable keeps Postgres's default durability (fsync on): for the
	// benchmarks, whose figures must be a real server's.
	Durable bool
}

var (
	shared struct {
		once    sync.Once
		mainRan bool
		opts    Options // Main's
		c       *Cluster
		err     error
	}
)

// Main runs the binary's tests and stops the cluster they started, if
// any; it returns the exit code for os.Exit. At most one Options may be
// given: how DB makes the cluster (Durable for the benchmarks); without
// one, fast and not durable.
func Main(m *testing.M, opts ...Options) int {
	shared.mainRan = true
	if len(opts) > 0 {
		shared.opts = opts[0]
	}
	code := m.Run()
	if shared.c != nil {
		if err := shared.c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
		}
	}
	return code
}

// DB makes a fresh database on the binary's cluster (starting it on the
// first call, as Main's Options say) and returns its URL.
func DB(t testing.TB) string {
	t.Helper()
	if !shared.mainRan {
		t.Fatal("pgtest: the package's TestMain must run pgtest.Main, which stops the cluster")
	}
	shared.once.Do(func() { shared.c, shared.err = Start(context.Background(), shared.opts) })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	u, err := shared.c.NewDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Binaries returns the directory of Postgres's programs: that of the
// newest version under /usr/lib/postgresql, or of initdb on PATH.
func Binaries() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return va - vb
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "postgres")); err == nil {
			return dirs[i], nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Dir(real), nil
		}
	}
	return "", errors.New("pgtest: Postgres is not installed (no /usr/lib/postgresql/*/bin/postgres, no initdb on PATH): run make postgres-deps as root, or install Debian's postgresql package")
}

// Start makes a cluster in a new temporary directory and starts its
// server; Stop stops it and removes the directory.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	bin, err := Binaries()
	if err != nil {
		return nil, err
	}
	removeStale()
	dir, unlock, err := makeDir()
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, unlock: unlock, port: 5432, done: make(chan struct{})}
	cred, err := credential(dir)
	if err != nil {
		c.remove()
		return nil, err
	}
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		c.remove()
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	args := []string{"-D", data, "-k", dir, "-p", strconv.Itoa(c.port), "-c", "listen_addresses=", "-c", "max_connections=200", "-c", "shared_buffers=64MB"}
	if !o.Durable {
		args = append(args, "-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=off")
	}
	if err := c.run(filepath.Join(bin, "postgres"), args, cred); err != nil {
		c.remove()
		return nil, err
	}
	if err := c.waitReady(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// run starts the server from a goroutine that keeps its thread locked
// until the server exits: the parent-death signal follows the thread
// that started the process, so it must not end before the process does
// (the Go runtime may otherwise retire it).
func (c *Cluster) run(path string, args []string, cred *syscall.Credential) error {
	log, err := os.Create(filepath.Join(c.dir, "postgres.log"))
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer log.Close()
		c.cmd = exec.Command(path, args...)
		c.cmd.Stdout, c.cmd.Stderr = log, log
		c.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
		if err := c.cmd.Start(); err != nil {
			started <- fmt.Errorf("pgtest: start postgres: %w", err)
			close(c.done)
			runtime.UnlockOSThread()
			return
		}
		started <- nil
		c.cmd.Wait()
		close(c.done)
		// The thread stays locked: it ends with this goroutine.
	}()
	return <-started
}

// credential returns whom the server runs as: the current user, or
// nobody when that is root (Postgres refuses root), who then gets dir.
func credential(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("pgtest: Postgres refuses to run as root and there is no user nobody to run it as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, fmt.Errorf("pgtest: give %s to nobody: %w", dir, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

// waitReady waits until the server accepts connections.
func (c *Cluster) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(60 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		select {
		case <-c.done:
			log, _ := os.ReadFile(filepath.Join(c.dir, "postgres.log"))
			return fmt.Errorf("pgtest: postgres exited at start:\n%s", log)
		default:
		}
		var conn *pgx.Conn
		if conn, err = pgx.Connect(ctx, c.URL("postgres")); err == nil {
			return conn.Close(ctx)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("pgtest: postgres does not accept connections: %w", err)
}

// URL returns the URL of database name on the cluster.
func (c *Cluster) URL(name string) string {
	q := url.Values{"host": {c.dir}, "port": {strconv.Itoa(c.port)}, "user": {"postgres"}, "sslmode": {"disable"}}
	return "postgres:///" + name + "?" + q.Encode()
}

// NewDB makes a new, empty database and returns its URL.
func (c *Cluster) NewDB(ctx context.Context) (string, error) {
	name := fmt.Sprintf("test_%d", c.dbs.Add(1))
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return "", fmt.Errorf("pgtest: connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return c.URL(name), nil
}

// Stop stops the server (a fast shutdown) and removes its directory.
func (c *Cluster) Stop() error {
	if c.cmd != nil && c.cmd.Process != nil {
		c.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-c.done:
		case <-time.After(30 * time.Second):
			c.cmd.Process.Kill()
			<-c.done
		}
	}
	return c.remove()
}

// remove removes the cluster's directory, then releases its owner lock.
func (c *Cluster) remove() error {
	err := os.RemoveAll(c.dir)
	if uerr := c.unlock(); err == nil {
		err = uerr
	}
	return err
}

// ownerFile is the file in a cluster's directory that the test binary
// owning the cluster holds locked for as long as the cluster lives.
const ownerFile = "owner.lock"

// lockOwner takes dir's owner lock: a record lock that ends with this
// process, however it ends, so that removeStale knows a cluster whose
// binary died from one that is still starting or running.
func lockOwner(dir string) (func() error, error) {
	f, err := os.OpenFile(filepath.Join(dir, ownerFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	unlock, err := proclock.Lock(f)
	if err != nil {
		// Lock has taken care of f: when this process holds the lock (its
		// own cluster, which removeStale meets), closing f would release
		// it, and another test binary would remove the live cluster.
		return nil, fmt.Errorf("pgtest: lock %s: %w", f.Name(), err)
	}
	return unlock, nil
}

// makeDir makes a cluster's directory, locked by its owner lock before
// removeStale can see it: it is made under another name, locked, then
// renamed.
func makeDir() (string, func() error, error) {
	tmp, err := os.MkdirTemp("", "new-"+dirPrefix)
	if err != nil {
		return "", nil, fmt.Errorf("pgtest: %w", err)
	}
	unlock, err := lockOwner(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return "", nil, err
	}
	dir := filepath.Join(filepath.Dir(tmp), strings.TrimPrefix(filepath.Base(tmp), "new-"))
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		_ = unlock()
		return "", nil, fmt.Errorf("pgtest: %w", err)
	}
	return dir, unlock, nil
}

// removeStale removes the clusters of test binaries that died without
// stopping theirs: those whose owner lock no other process holds. (A
// cluster's postmaster.pid is no sign of life: initdb's bootstrap backend
// writes its PID negated, and a cluster being made has none.)
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range dirs {
		unlock, err := lockOwner(dir)
		if err != nil {
			continue // owned, or not a cluster this package can lock
		}
		os.RemoveAll(dir)
		_ = unlock()
	}
}

// envStore names the store a test binary's tests run on, in the run
// Again starts.
const envStore = "FSMGEN_TEST_STORE"

// OnPostgres reports whether the tests run on Postgres: in the run Again
// starts.
func OnPostgres() bool { return os.Getenv(envStore) == "postgres" }

// Again runs the binary's tests again on Postgres, in a child process
// where OnPostgres reports true, all but the calling test, and fails t
// when they fail, with their output. Tests that build a store from
// OnPostgres then run on both stores.
func Again(t *testing.T) {
	t.Helper()
	if OnPostgres() {
		t.Fatal("pgtest: Again runs in the run on Postgres: skip its test there (-test.skip)")
	}
	args := []string{"-test.skip", "^" + t.Name() + "$", "-test.count=1", "-test.timeout=20m"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), envStore+"=postgres")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tests on Postgres failed (%v):\n%s", err, out)
	}
	if testing.Verbose() {
		t.Logf("the tests on Postgres:\n%s", out)
	}
}
