package postgres

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/pgtest"
)

// TestMigrateToken opens a database of servers from before the API keys:
// its token (the meta row api_token_sha256) becomes the key admin, and its
// threads the threads of that key.
func TestMigrateToken(t *testing.T) {
	keys := slices.IndexFunc(migrations, func(m string) bool { return strings.Contains(m, "CREATE TABLE keys") })
	require.GreaterOrEqual(t, keys, 0, "the migration that makes the keys")
	const hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	ctx := context.Background()
	url := pgtest.DB(t)
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	for _, m := range migrations[:keys] {
		_, err := conn.Exec(ctx, m)
		require.NoError(t, err)
	}
	for _, q := range []string{
		"CREATE TABLE schema_version (version integer NOT NULL)",
		"INSERT INTO schema_version VALUES (" + strconv.Itoa(keys) + ")",
		"INSERT INTO meta(key, value) VALUES('api_token_sha256', '" + hash + "')",
		`INSERT INTO threads(id, revision, digest, workspace, provider, model, first_prompt, tokens, messages, created_at, updated_at, synced_at, body)
			VALUES('t-1', 3, 'd', '/src', 'anthropic', 'm', 'fix it', 10, 2, now(), now(), now(), '{}')`,
	} {
		_, err := conn.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	require.NoError(t, conn.Close(ctx))

	s, err := Open(ctx, url)
	require.NoError(t, err)
	defer s.Close()
	_, ok, err := s.Meta(ctx, "api_token_sha256")
	require.NoError(t, err)
	assert.False(t, ok, "the token is a key now")
	list, err := s.Keys(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	k := list[0]
	assert.Equal(t, []string{"admin", "admin", "admin", hash}, []string{k.ID, k.Name, k.Scope, k.Hash})
	assert.False(t, k.CreatedAt.IsZero(), "made by the migration")
	th, err := s.Thread(ctx, "admin", "t-1")
	require.NoError(t, err)
	require.NotNil(t, th, "the thread is the admin key's")
	assert.Equal(t, int64(3), th.Revision)
	// The threads are named by owner and ID now.
	th.Owner = "k2"
	th.Revision = 1
	_, _, err = s.PutThread(ctx, th)
	require.NoError(t, err, "another key's thread of the same ID")
}
