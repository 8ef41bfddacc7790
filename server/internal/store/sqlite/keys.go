package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// AddKey adds k unless a key of its ID exists.
func (s *DB) AddKey(ctx context.Context, k *store.Key) (bool, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO keys(id, name, scope, hash, created_at, last_used_at, revoked_at)
		VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING`,
		k.ID, k.Name, k.Scope, k.Hash, formatTime(k.CreatedAt), nullTime(k.LastUsedAt), nullTime(k.RevokedAt))
	if err != nil {
		return false, fmt.Errorf("store key %s: %w", k.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store key %s: %w", k.ID, err)
	}
	return n == 1, nil
}

// ReplaceKey stores k as the key of its ID.
func (s *DB) ReplaceKey(ctx context.Context, k *store.Key) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO keys(id, name, scope, hash, created_at, last_used_at, revoked_at)
		VALUES(?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET name = excluded.name, scope = excluded.scope, hash = excluded.hash,
			created_at = excluded.created_at, last_used_at = excluded.last_used_at, revoked_at = excluded.revoked_at`,
		k.ID, k.Name, k.Scope, k.Hash, formatTime(k.CreatedAt), nullTime(k.LastUsedAt), nullTime(k.RevokedAt))
	if err != nil {
		return fmt.Errorf("store key %s: %w", k.ID, err)
	}
	return nil
}

// keyColumns are the columns of a key, in scanKey's order.
const keyColumns = `id, name, scope, hash, created_at, last_used_at, revoked_at`

func scanKey(scan func(...any) error) (*store.Key, error) {
	k := &store.Key{}
	var created string
	var used, revoked sql.NullString
	if err := scan(&k.ID, &k.Name, &k.Scope, &k.Hash, &created, &used, &revoked); err != nil {
		return nil, err
	}
	var errs [3]error
	k.CreatedAt, errs[0] = parseTime(created)
	k.LastUsedAt, errs[1] = parseNull(used)
	k.RevokedAt, errs[2] = parseNull(revoked)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("key %s: %w", k.ID, err)
	}
	return k, nil
}

// KeyByHash returns the key whose hash is hash, or nil.
func (s *DB) KeyByHash(ctx context.Context, hash string) (*store.Key, error) {
	k, err := scanKey(s.read.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM keys WHERE hash = ?`, hash).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the API keys: %w", err)
	}
	return k, nil
}

// Keys returns every key, the oldest first.
func (s *DB) Keys(ctx context.Context) ([]*store.Key, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+keyColumns+` FROM keys ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("read the API keys: %w", err)
	}
	defer rows.Close()
	var out []*store.Key
	for rows.Next() {
		k, err := scanKey(rows.Scan)
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
	k, err := scanKey(s.db.QueryRowContext(ctx, `UPDATE keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? RETURNING `+keyColumns, formatTime(at), id).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("revoke key %s: %w", id, err)
	}
	return k, nil
}

// KeyUsed records that key id was used at at.
func (s *DB) KeyUsed(ctx context.Context, id string, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`, formatTime(at), id, formatTime(at))
	if err != nil {
		return fmt.Errorf("record the use of key %s: %w", id, err)
	}
	return nil
}
