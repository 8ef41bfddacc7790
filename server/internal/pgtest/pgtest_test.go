package pgtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/proctest"
)

func TestMain(m *testing.M) {
	if os.Getenv("PGTEST_HELPER") == "1" {
		helper()
		return
	}
	os.Exit(Main(m))
}

// helper starts a cluster, prints its directory and its postmaster's
// pid, and waits to be killed.
func helper() {
	c, err := Start(context.Background(), Options{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Printf("%s %d\n", c.dir, c.cmd.Process.Pid)
	time.Sleep(time.Hour)
}

// TestDatabases checks that each test gets a database of its own, empty,
// on a server that runs.
func TestDatabases(t *testing.T) {
	ctx := context.Background()
	urls := map[string]bool{}
	for i := range 3 {
		u := DB(t)
		assert.False(t, urls[u], "database %d is new", i)
		urls[u] = true
		conn, err := pgx.Connect(ctx, u)
		require.NoError(t, err)
		var tables int
		require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&tables))
		assert.Zero(t, tables)
		_, err = conn.Exec(ctx, "CREATE TABLE t (x int)")
		require.NoError(t, err, "the database is writable")
		require.NoError(t, conn.Close(ctx))
	}
}

// TestDiesWithItsParent kills, with SIGKILL, a process that started a
// cluster: its server stops, and the next cluster started removes the
// directory left behind.
func TestDiesWithItsParent(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PGTEST_HELPER=1")
	line := proctest.Start(t, cmd) // the helper prints its cluster
	dir, pidText, ok := strings.Cut(strings.TrimSpace(line), " ")
	require.True(t, ok, "helper: %q", line)
	pid, err := strconv.Atoi(pidText)
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(pid, 0), "the server runs")

	require.NoError(t, cmd.Process.Kill())
	cmd.Wait()
	require.Eventually(t, func() bool { return syscall.Kill(pid, 0) != nil }, 30*time.Second, 20*time.Millisecond, "the server outlives its parent")
	// The dead cluster's directory is left behind; the next cluster
	// started, here or by any other test process, removes it, so it may
	// already be gone.
	c, err := Start(context.Background(), Options{})
	require.NoError(t, err)
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "the stale cluster is removed: %v", err)
	require.NoError(t, c.Stop())
	_, err = os.Stat(c.dir)
	assert.True(t, os.IsNotExist(err), "Stop removes the cluster")
}

// TestOwnClusterKept: a cluster this process owns stays locked when
// removeStale meets it (another Start in this process): another test
// binary's removeStale, a helper here, leaves it alone. lockOwner closed
// the descriptor the refused lock had opened, which released this
// process's record lock, and the next binary removed the live cluster.
func TestOwnClusterKept(t *testing.T) {
	a, err := Start(context.Background(), Options{})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, a.Stop()) })
	removeStale() // meets a, locked by this process
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PGTEST_HELPER=1")
	proctest.Start(t, cmd) // its Start runs removeStale in another process
	_, err = os.Stat(filepath.Join(a.dir, ownerFile))
	require.NoError(t, err, "the cluster is kept")
	u, err := a.NewDB(context.Background())
	require.NoError(t, err)
	conn, err := pgx.Connect(context.Background(), u)
	require.NoError(t, err, "its server runs")
	require.NoError(t, conn.Close(context.Background()))
}

// TestDurable checks the clusters' durability: the tests' (Main with no
// Options, as this package's TestMain) trades it for speed, a Durable
// one, the benchmarks', keeps Postgres's.
func TestDurable(t *testing.T) {
	tests := []struct {
		name  string
		db    func(t *testing.T) string
		fsync string
	}{
		{"the tests' cluster", func(t *testing.T) string { return DB(t) }, "off"},
		{"a durable cluster", func(t *testing.T) string {
			c, err := Start(context.Background(), Options{Durable: true})
			require.NoError(t, err)
			t.Cleanup(func() { assert.NoError(t, c.Stop()) })
			u, err := c.NewDB(context.Background())
			require.NoError(t, err)
			return u
		}, "on"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, tt.db(t))
			require.NoError(t, err)
			defer conn.Close(ctx)
			var fsync string
			require.NoError(t, conn.QueryRow(ctx, "SHOW fsync").Scan(&fsync))
			assert.Equal(t, tt.fsync, fsync)
		})
	}
}
