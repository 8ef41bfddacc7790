package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// PutThread stores t unless a newer revision (or the same) of its owner's
// thread is stored. A thread is a plain row: any instance writes it, no
// lease fences it.
func (s *DB) PutThread(ctx context.Context, t *store.Thread) (store.PutOutcome, int64, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO threads(owner, id, revision, digest, workspace, provider, model, first_prompt, tokens, messages, created_at, updated_at, synced_at, body)
		VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
		ON CONFLICT(owner, id) DO UPDATE SET revision = excluded.revision, digest = excluded.digest, workspace = excluded.workspace,
			provider = excluded.provider, model = excluded.model, first_prompt = excluded.first_prompt, tokens = excluded.tokens,
			messages = excluded.messages, created_at = excluded.created_at, updated_at = excluded.updated_at,
			synced_at = excluded.synced_at, body = excluded.body
		WHERE threads.revision < excluded.revision`,
		t.Owner, t.ID, t.Revision, t.Digest, t.Workspace, t.Provider, t.Model, t.FirstPrompt, t.Tokens, t.Messages,
		t.Created, t.Updated, t.SyncedAt, t.Body)
	if err != nil {
		return 0, 0, fmt.Errorf("store thread %s: %w", t.ID, err)
	}
	if tag.RowsAffected() == 1 {
		return store.ThreadStored, t.Revision, nil
	}
	var rev int64
	var digest string
	if err := s.pool.QueryRow(ctx, `SELECT revision, digest FROM threads WHERE owner = $1 AND id = $2`, t.Owner, t.ID).Scan(&rev, &digest); err != nil {
		return 0, 0, fmt.Errorf("store thread %s: read the stored revision: %w", t.ID, err)
	}
	// Not stored: the stored revision is this one or newer.
	out := store.ThreadOutcome(true, rev, digest, t.Revision, t.Digest)
	if out == store.ThreadStored {
		out = store.ThreadStale
	}
	return out, rev, nil
}

// threadColumns are the columns of a thread's row but its body, in
// scanThread's order.
const threadColumns = `owner, id, revision, digest, workspace, provider, model, first_prompt, tokens, messages, created_at, updated_at, synced_at`

// scanThread reads a row of threadColumns, then extra.
func scanThread(row pgx.Row, extra ...any) (*store.Thread, error) {
	t := &store.Thread{}
	if err := row.Scan(append([]any{&t.Owner, &t.ID, &t.Revision, &t.Digest, &t.Workspace, &t.Provider, &t.Model, &t.FirstPrompt, &t.Tokens, &t.Messages, &t.Created, &t.Updated, &t.SyncedAt}, extra...)...); err != nil {
		return nil, err
	}
	t.Created, t.Updated, t.SyncedAt = t.Created.UTC(), t.Updated.UTC(), t.SyncedAt.UTC()
	return t, nil
}

// Threads returns up to limit threads of owner without their bodies, the
// most recently updated first.
func (s *DB) Threads(ctx context.Context, owner string, limit int) ([]*store.Thread, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+threadColumns+` FROM threads WHERE owner = $1 ORDER BY updated_at DESC, id DESC LIMIT $2`, owner, limit)
	if err != nil {
		return nil, fmt.Errorf("read the threads: %w", err)
	}
	defer rows.Close()
	var out []*store.Thread
	for rows.Next() {
		t, err := scanThread(rows)
		if err != nil {
			return nil, fmt.Errorf("read the threads: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the threads: %w", err)
	}
	return out, nil
}

// Thread returns owner's thread id with its body, or nil.
func (s *DB) Thread(ctx context.Context, owner, id string) (*store.Thread, error) {
	var body []byte
	t, err := scanThread(s.pool.QueryRow(ctx, `SELECT `+threadColumns+`, body FROM threads WHERE owner = $1 AND id = $2`, owner, id), &body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read thread %s: %w", id, err)
	}
	t.Body = body
	return t, nil
}
