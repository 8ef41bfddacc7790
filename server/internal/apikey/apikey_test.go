package apikey_test

import (
	"context"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/apikey"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/store/memory"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// counting counts the store's lookups by hash.
type counting struct {
	*memory.Store
	reads atomic.Int64
}

func (c *counting) KeyByHash(ctx context.Context, hash string) (*store.Key, error) {
	c.reads.Add(1)
	return c.Store.KeyByHash(ctx, hash)
}

// clock is a clock the test moves.
type clock struct{ at time.Time }

func (c *clock) now() time.Time { return c.at }

func TestAllows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scope, need string
		want        bool
	}{
		{apikey.ScopeReadOnly, apikey.ScopeReadOnly, true},
		{apikey.ScopeReadOnly, apikey.ScopeReadWrite, false},
		{apikey.ScopeReadOnly, apikey.ScopeAdmin, false},
		{apikey.ScopeReadWrite, apikey.ScopeReadOnly, true},
		{apikey.ScopeReadWrite, apikey.ScopeReadWrite, true},
		{apikey.ScopeReadWrite, apikey.ScopeAdmin, false},
		{apikey.ScopeAdmin, apikey.ScopeReadOnly, true},
		{apikey.ScopeAdmin, apikey.ScopeReadWrite, true},
		{apikey.ScopeAdmin, apikey.ScopeAdmin, true},
		{"root", apikey.ScopeReadOnly, false},
		{"", apikey.ScopeReadOnly, false},
		{apikey.ScopeAdmin, "", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, apikey.Allows(tt.scope, tt.need), "%q may do what needs %q", tt.scope, tt.need)
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	a, b := apikey.NewToken(), apikey.NewToken()
	assert.Regexp(t, regexp.MustCompile(`^fsm_[A-Za-z0-9_-]{43}$`), a)
	assert.NotEqual(t, a, b)
	assert.Equal(t, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", apikey.Hash("test"))
	assert.Regexp(t, regexp.MustCompile(`^key_[0-9a-f]{16}$`), apikey.NewID())
}

// TestBootstrap makes the admin key on a first start only, and anew on a
// reset, which refuses the old token and keeps the key's ID.
func TestBootstrap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	first, err := apikey.Bootstrap(ctx, st, false, t0)
	require.NoError(t, err)
	require.NotEmpty(t, first)
	again, err := apikey.Bootstrap(ctx, st, false, t0.Add(time.Hour))
	require.NoError(t, err)
	assert.Empty(t, again, "a second start makes no key")

	// Revoked through the API, then reset.
	_, err = st.RevokeKey(ctx, apikey.AdminID, t0.Add(time.Minute))
	require.NoError(t, err)
	again, err = apikey.Bootstrap(ctx, st, false, t0.Add(time.Hour))
	require.NoError(t, err)
	assert.Empty(t, again, "a revoked admin key stays revoked without -reset-token")
	reset, err := apikey.Bootstrap(ctx, st, true, t0.Add(2*time.Hour))
	require.NoError(t, err)
	require.NotEmpty(t, reset)
	assert.NotEqual(t, first, reset)

	c := apikey.NewChecker(st, nil, nil)
	old, err := c.Check(ctx, first)
	require.NoError(t, err)
	assert.Nil(t, old, "the old token")
	k, err := c.Check(ctx, reset)
	require.NoError(t, err)
	require.NotNil(t, k)
	assert.Equal(t, store.Key{ID: "admin", Name: "admin", Scope: apikey.ScopeAdmin, Hash: apikey.Hash(reset), CreatedAt: t0.Add(2 * time.Hour)}, *k)
}

// TestCheckerRevocation revokes a key and resets the admin key behind a
// checker's back (as another instance does): the checker trusts what it
// read for less than TTL, and refuses both at TTL.
func TestCheckerRevocation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := &counting{Store: memory.New()}
	admin, err := apikey.Bootstrap(ctx, st, false, t0)
	require.NoError(t, err)
	ci, key := apikey.Make(apikey.NewID(), "ci", apikey.ScopeReadOnly, t0)
	_, err = st.AddKey(ctx, key)
	require.NoError(t, err)

	clk := &clock{at: t0}
	c := apikey.NewChecker(st, clk.now, nil)
	valid := func(token string) bool {
		t.Helper()
		k, err := c.Check(ctx, token)
		require.NoError(t, err)
		return k != nil && k.RevokedAt.IsZero()
	}
	require.True(t, valid(admin))
	require.True(t, valid(ci))
	require.Equal(t, int64(2), st.reads.Load())

	// Another instance revokes ci and resets the admin key.
	clk.at = t0.Add(100 * time.Millisecond)
	_, err = st.RevokeKey(ctx, key.ID, clk.at)
	require.NoError(t, err)
	_, err = apikey.Bootstrap(ctx, st, true, clk.at)
	require.NoError(t, err)

	clk.at = t0.Add(apikey.TTL - time.Nanosecond)
	assert.True(t, valid(admin), "read less than TTL ago")
	assert.True(t, valid(ci), "read less than TTL ago")
	assert.Equal(t, int64(2), st.reads.Load(), "from the cache")
	clk.at = t0.Add(apikey.TTL)
	assert.False(t, valid(admin), "the admin token, reset, at TTL")
	k, err := c.Check(ctx, ci)
	require.NoError(t, err)
	require.NotNil(t, k, "a revoked key is found")
	assert.Equal(t, t0.Add(100*time.Millisecond), k.RevokedAt, "revoked")

	// Forget drops a key at once.
	_, other := apikey.Make(apikey.NewID(), "other", apikey.ScopeReadWrite, t0)
	otherToken := "fsm_other"
	other.Hash = apikey.Hash(otherToken)
	_, err = st.AddKey(ctx, other)
	require.NoError(t, err)
	require.True(t, valid(otherToken))
	_, err = st.RevokeKey(ctx, other.ID, clk.at)
	require.NoError(t, err)
	assert.True(t, valid(otherToken), "cached")
	c.Forget(other.Hash)
	assert.False(t, valid(otherToken), "forgotten, read again")
}

// TestCheckerUnknown checks that a token no key has is read from the
// store every time (none is cached: made-up tokens would fill the cache).
func TestCheckerUnknown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := &counting{Store: memory.New()}
	c := apikey.NewChecker(st, (&clock{at: t0}).now, nil)
	for range 3 {
		k, err := c.Check(ctx, "fsm_made-up")
		require.NoError(t, err)
		assert.Nil(t, k)
	}
	assert.Equal(t, int64(3), st.reads.Load())
	// Added since: found at once.
	_, err := st.AddKey(ctx, &store.Key{ID: "k", Name: "k", Scope: apikey.ScopeReadOnly, Hash: apikey.Hash("fsm_made-up"), CreatedAt: t0})
	require.NoError(t, err)
	k, err := c.Check(ctx, "fsm_made-up")
	require.NoError(t, err)
	assert.NotNil(t, k)
}

// TestCheckerLastUse records a key's use once every UsedEvery, and never a
// revoked key's.
func TestCheckerLastUse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	token, key := apikey.Make("k", "k", apikey.ScopeReadWrite, t0)
	_, err := st.AddKey(ctx, key)
	require.NoError(t, err)
	clk := &clock{at: t0.Add(time.Second)}
	c := apikey.NewChecker(st, clk.now, nil)
	lastUse := func() time.Time {
		t.Helper()
		k, err := st.KeyByHash(ctx, key.Hash)
		require.NoError(t, err)
		return k.LastUsedAt
	}
	steps := []struct {
		at   time.Duration // after t0
		want time.Duration // the last use stored, after t0
	}{
		{time.Second, time.Second},
		{30 * time.Second, time.Second},
		{time.Second + apikey.UsedEvery - time.Nanosecond, time.Second},
		{time.Second + apikey.UsedEvery, time.Second + apikey.UsedEvery},
	}
	for _, s := range steps {
		clk.at = t0.Add(s.at)
		k, err := c.Check(ctx, token)
		require.NoError(t, err)
		require.NotNil(t, k)
		assert.Equal(t, t0.Add(s.want), lastUse(), "used at +%s", s.at)
	}
	_, err = st.RevokeKey(ctx, "k", clk.at)
	require.NoError(t, err)
	clk.at = clk.at.Add(2 * apikey.UsedEvery)
	_, err = c.Check(ctx, token)
	require.NoError(t, err)
	assert.Equal(t, t0.Add(time.Second+apikey.UsedEvery), lastUse(), "a revoked key's use is not recorded")
}
