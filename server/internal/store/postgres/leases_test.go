package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/pgtest"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/store/postgres"
)

// TestSessionSettings checks that every session bounds its transactions
// by a third of the lease: idle in one, or waiting for a lock.
func TestSessionSettings(t *testing.T) {
	t.Parallel()
	url := pgtest.DB(t)
	for _, tc := range []struct {
		opts []postgres.Option
		want string
	}{
		{nil, "5s"},
		{[]postgres.Option{postgres.WithLease(time.Second)}, "333ms"},
		{[]postgres.Option{postgres.WithLease(time.Minute)}, "20s"},
	} {
		s, err := postgres.Open(context.Background(), url, tc.opts...)
		require.NoError(t, err)
		for _, name := range []string{"idle_in_transaction_session_timeout", "lock_timeout"} {
			got, err := s.Setting(context.Background(), name)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got, name)
		}
		s.Close()
	}
	_, err := postgres.Open(context.Background(), url, postgres.WithLease(0))
	assert.ErrorContains(t, err, "give a positive lease time")
}

// TestStoppedHolder stops an instance in the middle of a fenced write (its
// transaction left open, its leases locked, as SIGSTOP leaves it): once its
// leases expire, another instance claims them, for Postgres ended the
// stopped one's session; the stopped one's write fails when it goes on.
func TestStoppedHolder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const lease = 600 * time.Millisecond
	url := pgtest.DB(t)
	a, err := openShort(ctx, url, lease)
	require.NoError(t, err)
	defer a.Close()
	b, err := openShort(ctx, url, lease)
	require.NoError(t, err)
	defer b.Close()
	_, held, _, err := a.Leases(ctx, "a", nil, 2, lease)
	require.NoError(t, err)
	require.Len(t, held, 2)

	stopped, err := a.BeginFenced(ctx, "a", held)
	require.NoError(t, err)
	var claimed []int
	n := b.Shards()
	deadline := time.Now().Add(20 * lease) // without the session's bound: never
	for len(claimed) < n && time.Now().Before(deadline) {
		_, got, next, err := b.Leases(ctx, "b", nil, n-len(claimed), time.Minute)
		require.NoError(t, err)
		claimed = append(claimed, got...)
		if next <= 0 || next > lease {
			next = lease / 10
		}
		time.Sleep(next)
	}
	assert.Subset(t, claimed, held, "b takes over the leases of the stopped instance")
	assert.Error(t, stopped.Commit(ctx), "the stopped instance's transaction was ended")

	// Its next write is fenced.
	err = a.Apply(ctx, &store.Batch{Fence: &store.Fence{Instance: "a", Shards: held[:1]}, Ops: []store.Op{store.DeleteMonitor{ID: 1}}})
	assert.ErrorIs(t, err, store.ErrFenced)
}

// TestPaused checks that a transaction Postgres ended because its
// instance paused in it (idle past a third of the lease) is
// store.ErrPaused, which the engines log as this instance's pace rather
// than as a fault, and that another failure is not.
func TestPaused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const lease = 300 * time.Millisecond
	url := pgtest.DB(t)
	s, err := openShort(ctx, url, lease)
	require.NoError(t, err)
	defer s.Close()
	watch, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer watch.Close(ctx)

	err = s.InTx(ctx, func(tx pgx.Tx) error {
		var pid int
		if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			return err
		}
		// Paused: wait, without a statement, until Postgres has ended
		// the session.
		require.Eventually(t, func() bool {
			var n int
			require.NoError(t, watch.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&n))
			return n == 0
		}, time.Minute, lease/10, "Postgres ends a session idle in a transaction past a third of the lease")
		_, err := tx.Exec(ctx, "SELECT 1")
		return err
	})
	require.Error(t, err)
	// Postgres's own error, or the closed connection's when the client
	// wrote before it read that error.
	assert.ErrorIs(t, err, store.ErrPaused)

	err = s.InTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "SELECT * FROM no_such_table")
		return err
	})
	require.Error(t, err)
	assert.NotErrorIs(t, err, store.ErrPaused)
}

// TestClaimSkipsLocked checks that a claim does not wait for a lease
// another transaction locks, and asks to be tried again soon.
func TestClaimSkipsLocked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const lease = time.Minute
	url := pgtest.DB(t)
	s, err := postgres.Open(ctx, url, postgres.WithLease(lease))
	require.NoError(t, err)
	defer s.Close()
	// A transaction without the sessions' bound locks every lease but the
	// first two.
	other, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer other.Close(ctx)
	tx, err := other.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, "SELECT shard FROM leases WHERE shard >= 2 FOR UPDATE")
	require.NoError(t, err)

	_, claimed, next, err := s.Leases(ctx, "a", nil, 4, lease)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1}, claimed, "the free leases not locked")
	assert.Equal(t, lease/10, next, "locked free leases: look again soon")
	_, claimed, next, err = s.Leases(ctx, "a", claimed, 0, lease)
	require.NoError(t, err)
	assert.Empty(t, claimed)
	assert.Zero(t, next, "no claim wanted: no need to look again early")

	require.NoError(t, tx.Rollback(ctx))
	_, claimed, next, err = s.Leases(ctx, "a", []int{0, 1}, 2, lease)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 3}, claimed)
	assert.Zero(t, next, "the claim got what it asked for")
}

// TestRenewalOneExpiry renews leases while a round's write holds one of
// them (FOR SHARE): the renewal waits for it, and gives every lease one
// expiry all the same, so that they expire, and are claimed, together.
func TestRenewalOneExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const lease = time.Minute
	url := pgtest.DB(t)
	s, err := postgres.Open(ctx, url, postgres.WithLease(lease))
	require.NoError(t, err)
	defer s.Close()
	watch, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer watch.Close(ctx)
	_, held, _, err := s.Leases(ctx, "a", nil, s.Shards(), lease)
	require.NoError(t, err)
	require.Len(t, held, s.Shards())

	round, err := s.BeginFenced(ctx, "a", []int{held[len(held)/2]})
	require.NoError(t, err)
	renewed := make(chan []int, 1)
	go func() {
		got, _, _, err := s.Leases(ctx, "a", held, 0, lease)
		assert.NoError(t, err)
		renewed <- got
	}()
	require.Eventually(t, func() bool {
		var waiting int
		err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting)
		return err == nil && waiting == 1
	}, 10*time.Second, 5*time.Millisecond, "the renewal waits for the round")
	time.Sleep(50 * time.Millisecond) // the rows it reaches after the wait: later by this much at least
	require.NoError(t, round.Rollback(ctx))
	assert.Equal(t, held, <-renewed)
	var expiries int
	require.NoError(t, watch.QueryRow(ctx, `SELECT count(DISTINCT expires_at) FROM leases WHERE owner = 'a'`).Scan(&expiries))
	assert.Equal(t, 1, expiries, "one expiry for the leases of one renewal")
}

// openShort opens a store with a lease of a second or less, trying again
// while Open itself is paused: its schema transaction may be idle past a
// third of such a lease when the machine is loaded (a cold build beside
// the tests), and Postgres then ends it, as it should (store.ErrPaused).
// The tests that use it check what happens after Open.
func openShort(ctx context.Context, url string, lease time.Duration) (*postgres.DB, error) {
	for range 4 {
		s, err := postgres.Open(ctx, url, postgres.WithLease(lease))
		if !errors.Is(err, store.ErrPaused) {
			return s, err
		}
	}
	return postgres.Open(ctx, url, postgres.WithLease(lease))
}
