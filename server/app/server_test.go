package app

// These tests build the server and run it as a process: killed with
// SIGKILL at random moments and started again on the same database, under
// load, stopped with SIGTERM while requests are in flight.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/pgtest"
)

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// TestMain removes the server the tests built, and stops their Postgres.
func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// TestOnPostgres runs every other test again on Postgres, in a child
// process, beside the parallel tests of this one (after the serial ones,
// which measure how fast an instance takes another's leases over).
func TestOnPostgres(t *testing.T) {
	t.Parallel()
	pgtest.Again(t)
}

// newDB returns a new database for a server: a SQLite file, or the URL
// of a Postgres database in the run of TestOnPostgres.
func newDB(t *testing.T) string {
	t.Helper()
	if pgtest.OnPostgres() {
		return pgtest.DB(t)
	}
	return filepath.Join(t.TempDir(), "server.db")
}

// storeFlag is the flag that gives a server db.
func storeFlag(db string) string {
	if strings.HasPrefix(db, "postgres://") {
		return "-postgres"
	}
	return "-db"
}

// serverBinary builds ./cmd/server once for all the tests.
func serverBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "fsmgen-server-test-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "server")
		goBin, err := exec.LookPath("go")
		if err != nil {
			buildErr = err
			return
		}
		if out, err := exec.Command(goBin, "build", "-o", binPath, "../../cmd/server").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binPath
}
