package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMigrateToken opens a database of a server from before the API keys:
// its token (the meta row api_token_sha256) becomes the key admin, and its
// threads the threads of that key; a damaged token becomes no key, so that
// the server makes a new one.
func TestMigrateToken(t *testing.T) {
	t.Parallel()
	keys := slices.IndexFunc(migrations, func(m string) bool { return strings.Contains(m, "CREATE TABLE keys") })
	require.GreaterOrEqual(t, keys, 0, "the migration that makes the keys")
	const hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	for _, tt := range []struct {
		name, stored string
		wantKey      bool
	}{
		{"token", hash, true},
		{"damaged token", "9f86d0", false},
		{"no token", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "old.db")
			old, err := sql.Open("sqlite", "file:"+path)
			require.NoError(t, err)
			for v, m := range migrations[:keys] {
				_, err := old.ExecContext(ctx, m)
				require.NoError(t, err)
				_, err = old.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1))
				require.NoError(t, err)
			}
			if tt.stored != "" {
				_, err = old.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES('api_token_sha256', ?)`, tt.stored)
				require.NoError(t, err)
			}
			_, err = old.ExecContext(ctx, `INSERT INTO threads(id, revision, digest, workspace, provider, model, first_prompt, tokens, messages, created_at, updated_at, synced_at, body)
				VALUES('t-1', 3, 'd', '/src', 'anthropic', 'm', 'fix it', 10, 2, '2026-11-01T09:00:00.000000000Z', '2026-11-01T09:00:01.000000000Z', '2026-11-01T09:00:02.000000000Z', '{}')`)
			require.NoError(t, err)
			require.NoError(t, old.Close())

			s, err := Open(ctx, path)
			require.NoError(t, err)
			defer s.Close()
			_, ok, err := s.Meta(ctx, "api_token_sha256")
			require.NoError(t, err)
			assert.False(t, ok, "the token is a key now")
			list, err := s.Keys(ctx)
			require.NoError(t, err)
			if !tt.wantKey {
				assert.Empty(t, list)
			} else if assert.Len(t, list, 1) {
				k := list[0]
				assert.Equal(t, []string{"admin", "admin", "admin", hash}, []string{k.ID, k.Name, k.Scope, k.Hash})
				assert.False(t, k.CreatedAt.IsZero())
				assert.True(t, k.RevokedAt.IsZero())
			}
			th, err := s.Thread(ctx, "admin", "t-1")
			require.NoError(t, err)
			require.NotNil(t, th, "the thread is the admin key's")
			assert.Equal(t, int64(3), th.Revision)
			assert.Equal(t, []byte("{}"), th.Body)
		})
	}
}
