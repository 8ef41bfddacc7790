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
	"os"
	"testing"

	"github.com/fsmgen/fsmgen/server/internal/pgtest"
)

// TestMain stops the benchmarks' Postgres server, durable (fsync on, as
// in production), once every benchmark has run.
func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, pgtest.Options{Durable: true}))
}
