package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// keyRow is a key created at t0 plus n seconds, with a hash of its own.
func keyRow(id, scope string, n int) *store.Key {
	return &store.Key{ID: id, Name: "key " + id, Scope: scope, Hash: fmt.Sprintf("%064x", n+1), CreatedAt: t0.Add(time.Duration(n) * time.Second)}
}

// keys checks the API keys: added once, replaced, found by hash, listed
// oldest first, revoked once, their last use kept.
func keys(o Opener) func(t *testing.T) {
	return func(t *testing.T) {
		ctx := context.Background()
		s, reopen := o.open(t)
		list, err := s.Keys(ctx)
		require.NoError(t, err)
		assert.Empty(t, list)
		none, err := s.KeyByHash(ctx, keyRow("x", "admin", 0).Hash)
		require.NoError(t, err)
		assert.Nil(t, none)

		admin, rw, ro := keyRow("admin", "admin", 0), keyRow("k-rw", "read-write", 2), keyRow("k-ro", "read-only", 1)
		for _, k := range []*store.Key{admin, rw, ro} {
			added, err := s.AddKey(ctx, k)
			require.NoError(t, err)
			assert.True(t, added, k.ID)
		}
		// A second key of an ID is not added, and changes nothing.
		again := keyRow("admin", "read-only", 7)
		added, err := s.AddKey(ctx, again)
		require.NoError(t, err)
		assert.False(t, added, "a second admin")
		got, err := s.KeyByHash(ctx, admin.Hash)
		require.NoError(t, err)
		assert.Equal(t, admin, got)
		got, err = s.KeyByHash(ctx, again.Hash)
		require.NoError(t, err)
		assert.Nil(t, got, "the key not added")

		// Two keys never share a hash.
		twin := keyRow("twin", "read-write", 5)
		twin.Hash = rw.Hash
		_, err = s.AddKey(ctx, twin)
		assert.Error(t, err, "a key with another's hash")

		// Revoked once: a second revocation keeps the first time.
		revoked, err := s.RevokeKey(ctx, "k-ro", t0.Add(time.Minute))
		require.NoError(t, err)
		ro.RevokedAt = t0.Add(time.Minute)
		assert.Equal(t, ro, revoked)
		revoked, err = s.RevokeKey(ctx, "k-ro", t0.Add(time.Hour))
		require.NoError(t, err)
		assert.Equal(t, ro, revoked, "revoked at its first revocation")
		revoked, err = s.RevokeKey(ctx, "nope", t0)
		require.NoError(t, err)
		assert.Nil(t, revoked)
		got, err = s.KeyByHash(ctx, ro.Hash)
		require.NoError(t, err)
		assert.Equal(t, ro, got, "a revoked key is found, revoked")

		// The last use only moves forward.
		require.NoError(t, s.KeyUsed(ctx, "k-rw", t0.Add(10*time.Second)))
		require.NoError(t, s.KeyUsed(ctx, "k-rw", t0.Add(5*time.Second)))
		require.NoError(t, s.KeyUsed(ctx, "nope", t0))
		rw.LastUsedAt = t0.Add(10 * time.Second)

		// Replacing the admin key, revoked, gives it a new hash and
		// makes it live again; the old hash finds nothing.
		_, err = s.RevokeKey(ctx, "admin", t0.Add(time.Minute))
		require.NoError(t, err)
		reset := keyRow("admin", "admin", 3)
		reset.Hash = fmt.Sprintf("%064x", 99)
		require.NoError(t, s.ReplaceKey(ctx, reset))
		got, err = s.KeyByHash(ctx, admin.Hash)
		require.NoError(t, err)
		assert.Nil(t, got, "the old admin hash")
		got, err = s.KeyByHash(ctx, reset.Hash)
		require.NoError(t, err)
		assert.Equal(t, reset, got)
		fresh := keyRow("k-new", "read-write", 4)
		require.NoError(t, s.ReplaceKey(ctx, fresh), "replacing adds a key that is missing")

		check := func(s store.Store) {
			list, err := s.Keys(ctx)
			require.NoError(t, err)
			assert.Equal(t, []*store.Key{ro, rw, reset, fresh}, list, "oldest first")
		}
		check(s)
		if o.Persistent {
			require.NoError(t, s.Close())
			again := reopen()
			t.Cleanup(func() { again.Close() })
			check(again)
		}
	}
}
