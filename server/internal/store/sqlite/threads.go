package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// PutThread stores t unless a newer revision (or the same) of its owner's
// thread is stored.
func (s *DB) PutThread(ctx context.Context, t *store.Thread) (store.PutOutcome, int64, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO threads(owner, id, revision, digest, workspace, provider, model, first_prompt, tokens, messages, created_at, updated_at, synced_at, body)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(owner, id) DO UPDATE SET revision = excluded.revision, digest = excluded.digest, workspace = excluded.workspace,
			provider = excluded.provider, model = excluded.model, first_prompt = excluded.first_prompt, tokens = excluded.tokens,
			messages = excluded.messages, created_at = excluded.created_at, updated_at = excluded.updated_at,
			synced_at = excluded.synced_at, body = excluded.body
		WHERE threads.revision < excluded.revision`,
		t.Owner, t.ID, t.Revision, t.Digest, t.Workspace, t.Provider, t.Model, t.FirstPrompt, t.Tokens, t.Messages,
		formatTime(t.Created), formatTime(t.Updated), formatTime(t.SyncedAt), t.Body)
	if err != nil {
		return 0, 0, fmt.Errorf("store thread %s: %w", t.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return 0, 0, fmt.Errorf("store thread %s: %w", t.ID, err)
	} else if n == 1 {
		return store.ThreadStored, t.Revision, nil
	}
	var rev int64
	var digest string
	if err := s.db.QueryRowContext(ctx, `SELECT revision, digest FROM threads WHERE owner = ? AND id = ?`, t.Owner, t.ID).Scan(&rev, &digest); err != nil {
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
func scanThread(scan func(...any) error, extra ...any) (*store.Thread, error) {
	t := &store.Thread{}
	var created, updated, synced string
	if err := scan(append([]any{&t.Owner, &t.ID, &t.Revision, &t.Digest, &t.Workspace, &t.Provider, &t.Model, &t.FirstPrompt, &t.Tokens, &t.Messages, &created, &updated, &synced}, extra...)...); err != nil {
		return nil, err
	}
	var errs [3]error
	t.Created, errs[0] = parseTime(created)
	t.Updated, errs[1] = parseTime(updated)
	t.SyncedAt, errs[2] = parseTime(synced)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("thread %s: %w", t.ID, err)
	}
	return t, nil
}

// Threads returns up to limit threads of owner without their bodies, the
// most recently updated first.
func (s *DB) Threads(ctx context.Context, owner string, limit int) ([]*store.Thread, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+threadColumns+` FROM threads WHERE owner = ? ORDER BY updated_at DESC, id DESC LIMIT ?`, owner, limit)
	if err != nil {
		return nil, fmt.Errorf("read the threads: %w", err)
	}
	defer rows.Close()
	var out []*store.Thread
	for rows.Next() {
		t, err := scanThread(rows.Scan)
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
	t, err := scanThread(s.read.QueryRowContext(ctx, `SELECT `+threadColumns+`, body FROM threads WHERE owner = ? AND id = ?`, owner, id).Scan, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read thread %s: %w", id, err)
	}
	t.Body = body
	return t, nil
}
