package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// Every lease time is the database's clock (clock_timestamp()): the
// instances' clocks need not agree. A renewal or a claim gives all its
// leases one expiry, from the time its statement started
// (statement_timestamp()): clock_timestamp() is read anew for each row,
// so the rows an update reaches after waiting for a lock (a round's
// fence) would expire later than the others, and an instance claiming
// them when the first expire would get them in several rounds, leaving
// the last ones unowned meanwhile. The statement's start is no later than
// the caller's reading of its own clock before it, which the caller's
// deadlines count from.

// Shards reports how many shards there are.
func (s *DB) Shards() int { return numShards }

// NewMonitorID returns the next value of the monitors' sequence.
func (s *DB) NewMonitorID(ctx context.Context) (int64, error) {
	var id int64
	if err := s.pool.QueryRow(ctx, "SELECT nextval('monitor_ids')").Scan(&id); err != nil {
		return 0, fmt.Errorf("number a new monitor: %w", err)
	}
	return id, nil
}

// Heartbeat records that the instance lives, reachable at addr, for
// lease, and returns how many instances live; it forgets instances dead
// for an hour.
func (s *DB) Heartbeat(ctx context.Context, instance, addr string, lease time.Duration) (int, error) {
	var live int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO instances(id, addr, expires_at) VALUES($1, $2, clock_timestamp() + $3 * interval '1 microsecond')
			ON CONFLICT(id) DO UPDATE SET addr = excluded.addr, expires_at = excluded.expires_at`, instance, addr, lease.Microseconds()); err != nil {
			return err
		}
		// Another instance forgetting the same ones is not waited for.
		if _, err := tx.Exec(ctx, `DELETE FROM instances WHERE id IN (SELECT id FROM instances WHERE expires_at < clock_timestamp() - interval '1 hour' FOR UPDATE SKIP LOCKED)`); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT count(*) FROM instances WHERE expires_at > clock_timestamp()`).Scan(&live)
	})
	if err != nil {
		return 0, fmt.Errorf("record the instance's heartbeat: %w", err)
	}
	return live, nil
}

// Leave removes the instance and frees its leases.
func (s *DB) Leave(ctx context.Context, instance string) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE leases SET owner = NULL, expires_at = '-infinity' WHERE owner = $1`, instance); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM instances WHERE id = $1`, instance)
		return err
	})
	if err != nil {
		return fmt.Errorf("free the instance's leases: %w", err)
	}
	return nil
}

// Leases renews the instance's unexpired leases among held, claims up to
// claim free or expired ones, and reports when to look again: when the
// next lease of another instance expires, or soon when it wanted more and
// a free or expired lease was locked by another transaction.
//
// The claim skips the leases another transaction locks (FOR UPDATE SKIP
// LOCKED): another claim, or the round of an instance that held the lease
// and was stopped in the middle of its transaction (see sessionSettings).
// Such a lock is not waited for, and does not last: a claim ends at once,
// a stopped instance's session within the sessions' limit, rolled back by
// Postgres. So the caller tries again after a tenth of the lease, and
// takes the lease over then.
func (s *DB) Leases(ctx context.Context, instance string, held []int, claim int, lease time.Duration) (renewed, claimed []int, next time.Duration, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		renewed, claimed = nil, nil
		us := lease.Microseconds()
		if len(held) > 0 {
			rows, err := tx.Query(ctx, `UPDATE leases SET expires_at = statement_timestamp() + $3 * interval '1 microsecond'
				WHERE owner = $1 AND shard = ANY($2) AND expires_at > clock_timestamp() RETURNING shard`, instance, held, us)
			if err != nil {
				return err
			}
			if renewed, err = pgx.CollectRows(rows, pgx.RowTo[int]); err != nil {
				return err
			}
		}
		if claim > 0 {
			rows, err := tx.Query(ctx, `UPDATE leases SET owner = $1, expires_at = statement_timestamp() + $3 * interval '1 microsecond'
				WHERE shard IN (SELECT shard FROM leases WHERE owner IS NULL OR expires_at <= clock_timestamp() ORDER BY shard LIMIT $2 FOR UPDATE SKIP LOCKED)
				RETURNING shard`, instance, claim, us)
			if err != nil {
				return err
			}
			if claimed, err = pgx.CollectRows(rows, pgx.RowTo[int]); err != nil {
				return err
			}
		}
		skipped := false
		if len(claimed) < claim {
			// What this transaction claimed is no longer free: those left
			// were locked (or past the claim's limit), and a plain read
			// does not wait for their locks.
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM leases WHERE owner IS NULL OR expires_at <= clock_timestamp())`).Scan(&skipped); err != nil {
				return err
			}
		}
		var secs *float64
		if err := tx.QueryRow(ctx, `SELECT extract(epoch FROM min(expires_at) - clock_timestamp())::float8 FROM leases
			WHERE owner IS NOT NULL AND owner <> $1 AND expires_at > clock_timestamp()`, instance).Scan(&secs); err != nil {
			return err
		}
		next = 0
		if secs != nil {
			next = max(time.Duration(*secs*float64(time.Second)), time.Microsecond)
		}
		if retry := lease / 10; skipped && (next == 0 || retry < next) {
			next = retry
		}
		return nil
	})
	if err != nil {
		return nil, nil, 0, fmt.Errorf("renew and claim leases: %w", err)
	}
	slices.Sort(renewed)
	slices.Sort(claimed)
	return renewed, claimed, next, nil
}

// Release frees leases of the instance.
func (s *DB) Release(ctx context.Context, instance string, shards []int) error {
	if _, err := s.pool.Exec(ctx, `UPDATE leases SET owner = NULL, expires_at = '-infinity' WHERE owner = $1 AND shard = ANY($2)`, instance, shards); err != nil {
		return fmt.Errorf("release leases: %w", err)
	}
	return nil
}

// Holder returns the instance holding shard's unexpired lease, and its
// address.
func (s *DB) Holder(ctx context.Context, shard int) (string, string, error) {
	var owner, addr string
	err := s.pool.QueryRow(ctx, `SELECT coalesce(l.owner, ''), coalesce(i.addr, '') FROM leases l
		LEFT JOIN instances i ON i.id = l.owner
		WHERE l.shard = $1 AND l.expires_at > clock_timestamp()`, shard).Scan(&owner, &addr)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("find the holder of shard %d: %w", shard, err)
	}
	return owner, addr, nil
}

// Locate finds a monitor by slug, or by ping key when slug is empty, with
// the instance holding its shard's lease and that instance's address.
func (s *DB) Locate(ctx context.Context, slug, key string) (*store.Monitor, string, string, error) {
	where, arg := "m.slug = $1", slug
	if slug == "" {
		where, arg = "m.ping_key = $1", key
	}
	var owner, addr string
	m, err := scanMonitor(s.pool.QueryRow(ctx, `SELECT `+monitorColumns+`, coalesce(l.owner, ''), coalesce(i.addr, '') FROM monitors m
		LEFT JOIN leases l ON l.shard = m.shard AND l.expires_at > clock_timestamp()
		LEFT JOIN instances i ON i.id = l.owner
		WHERE `+where, arg), &owner, &addr)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, "", "", nil
	}
	if err != nil {
		return nil, "", "", fmt.Errorf("find the monitor: %w", err)
	}
	return m, owner, addr, nil
}
