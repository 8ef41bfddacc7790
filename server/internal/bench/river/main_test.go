// Package riverbench measures the server's background jobs side by side
// with riverqueue/river on the same databases (make bench-server): the
// start-up with 10,000 and 100,000 idle jobs, first start and restart, on
// SQLite and Postgres; and a burst of 2,000 triggers, runs a second. Each
// benchmark's last name element is impl=fsmgen or impl=river, so that
// `benchstat -col /impl` prints the two side by side; docs/performance.md
// writes the results up.
//
// It is a module of its own so that river, which only these benchmarks
// use, stays out of the server's go.mod; it builds the server's packages
// from this checkout (a replace of the main module).
package riverbench_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/fsmgen/fsmgen/server/internal/pgtest"
)

// cluster is the benchmarks' Postgres server: durable (fsync on, as in
// production), started on first use, stopped by TestMain.
var cluster struct {
	once sync.Once
	c    *pgtest.Cluster
	err  error
}

// newPostgres returns the URL of a new database on the benchmarks'
// Postgres server.
func newPostgres(b *testing.B) string {
	b.Helper()
	cluster.once.Do(func() { cluster.c, cluster.err = pgtest.Start(context.Background(), pgtest.Options{Durable: true}) })
	if cluster.err != nil {
		b.Fatal(cluster.err)
	}
	url, err := cluster.c.NewDB(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return url
}

// TestMain stops the Postgres server once every benchmark has run.
func TestMain(m *testing.M) {
	code := m.Run()
	if cluster.c != nil {
		if err := cluster.c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "riverbench:", err)
		}
	}
	os.Exit(code)
}
