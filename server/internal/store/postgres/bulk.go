package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// NewMonitorIDs returns n values of the monitors' sequence, in one round
// trip (the jobs' monitors are made thousands at a time).
func (s *DB) NewMonitorIDs(ctx context.Context, n int) ([]int64, error) {
	if n <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT nextval('monitor_ids') FROM generate_series(1, $1)`, n)
	if err != nil {
		return nil, fmt.Errorf("number %d monitors: %w", n, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("number %d monitors: %w", n, err)
	}
	return ids, nil
}

// TakenSlugs returns those of slugs that a monitor has, in any shard.
func (s *DB) TakenSlugs(ctx context.Context, slugs []string) ([]string, error) {
	if len(slugs) == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT slug FROM monitors WHERE slug = ANY($1) ORDER BY slug`, slugs)
	if err != nil {
		return nil, fmt.Errorf("look the monitors' slugs up: %w", err)
	}
	taken, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("look the monitors' slugs up: %w", err)
	}
	return taken, nil
}
