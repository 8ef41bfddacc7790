package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// AddKey adds k unless a key of its ID exists.
func (s *DB) AddKey(ctx context.Context, k *store.Key) (bool, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO keys(id, name, scope, hash, created_at, last_used_at, revoked_at)
		VALUES($1, $2, $3, $4, $5, $6, $7) ON CONFLICT(id) DO NOTHING`,
		k.ID, k.Name, k.Scope, k.Hash, k.CreatedAt, nullTime(k.LastUsedAt), nullTime(k.RevokedAt))
	if err != nil {
		return false, fmt.Errorf("store key %s: %w", k.ID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReplaceKey stores k as the key of its ID.
func (s *DB) ReplaceKey(ctx context.Context, k *store.Key) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO keys(id, name, scope, hash, created_at, last_used_at, revoked_at)
		VALUES($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT(id) DO UPDATE SET name = excluded.name, scope = excluded.scope, hash = excluded.hash,
			created_at = excluded.created_at, last_used_at = excluded.last_used_at, revoked_at = excluded.revoked_at`,
		k.ID, k.Name, k.Scope, k.Hash, k.CreatedAt, nullTime(k.LastUsedAt), nullTime(k.RevokedAt))
	if err != nil {
		return fmt.Errorf("store key %s: %w", k.ID, err)
	}
	return nil
}

// keyColumns are the columns of a key, in scanKey's order.
const keyColumns = `id, name, scope, hash, created_at, last_used_at, revoked_at`

func scanKey(row pgx.Row) (*store.Key, error) {
	k := &store.Key{}
	var used, revoked pgtype.Timestamptz
	if err := row.Scan(&k.ID, &k.Name, &k.Scope, &k.Hash, &k.CreatedAt, &used, &revoked); err != nil {
		return nil, err
	}
	k.CreatedAt, k.LastUsedAt, k.RevokedAt = k.CreatedAt.UTC(), fromNull(used), fromNull(revoked)
	return k, nil
}

// KeyByHash returns the key whose hash is hash, or nil.
func (s *DB) KeyByHash(ctx context.Context, hash string) (*store.Key, error) {
	k, err := scanKey(s.pool.QueryRow(ctx, `SELECT `+keyColumns+` FROM keys WHERE hash = $1`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the API keys: %w", err)
	}
	return k, nil
}

// Keys returns every key, the oldest first.
func (s *DB) Keys(ctx context.Context) ([]*store.Key, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+keyColumns+` FROM keys ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("read the API keys: %w", err)
	}
	defer rows.Close()
	var out []*store.Key
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, fmt.Errorf("read the API keys: %w", err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the API keys: %w", err)
	}
	return out, nil
}

// RevokeKey marks key id revoked at at, unless it is revoked already.
func (s *DB) RevokeKey(ctx context.Context, id string, at time.Time) (*store.Key, error) {
	k, err := scanKey(s.pool.QueryRow(ctx, `UPDATE keys SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2 RETURNING `+keyColumns, at, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("revoke key %s: %w", id, err)
	}
	return k, nil
}

// KeyUsed records that key id was used at at.
func (s *DB) KeyUsed(ctx context.Context, id string, at time.Time) error {
	_, err := s.pool.Exec(ctx, `UPDATE keys SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $1)`, at, id)
	if err != nil {
		return fmt.Errorf("record the use of key %s: %w", id, err)
	}
	return nil
}
