package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// BeginFenced begins a transaction through the pool that fences a write
// by instance's leases of shards, as Apply does, and leaves it open: an
// instance stopped in the middle of a round's write.
func (s *DB) BeginFenced(ctx context.Context, instance string, shards []int) (pgx.Tx, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	if err := fence(ctx, tx, &store.Fence{Instance: instance, Shards: shards}); err != nil {
		tx.Rollback(ctx)
		return nil, err
	}
	return tx, nil
}

// Setting returns a setting of a session of the pool.
func (s *DB) Setting(ctx context.Context, name string) (string, error) {
	var v string
	err := s.pool.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v)
	return v, err
}

// InTx runs f in a transaction of the pool, as the store's writes do.
func (s *DB) InTx(ctx context.Context, f func(pgx.Tx) error) error { return s.inTx(ctx, f) }
