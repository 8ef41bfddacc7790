package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPragmas checks the settings each connection runs with: both the
// writer and the readers in WAL mode, syncing at each commit, checking
// foreign keys; the writer with its statement journals in memory and a
// 64 MiB page cache, the readers unable to write.
func TestPragmas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "p.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	for _, tt := range []struct {
		pragma       string
		writer, read int64
	}{
		{"synchronous", 2, 2}, // FULL
		{"foreign_keys", 1, 1},
		{"busy_timeout", 10000, 10000},
		{"temp_store", 2, 0}, // MEMORY; the readers write no journal
		{"cache_size", -65536, -2000},
		{"query_only", 0, 1},
	} {
		var w, r int64
		require.NoError(t, db.db.QueryRowContext(ctx, "PRAGMA "+tt.pragma).Scan(&w), tt.pragma)
		require.NoError(t, db.read.QueryRowContext(ctx, "PRAGMA "+tt.pragma).Scan(&r), tt.pragma)
		assert.Equal(t, tt.writer, w, "the writer's %s", tt.pragma)
		assert.Equal(t, tt.read, r, "a reader's %s", tt.pragma)
	}
	var mode string
	require.NoError(t, db.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode))
	assert.Equal(t, "wal", mode)
}
