package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/fsmgen/fsmgen/server/store"
)

// exec performs one write of a batch in tx.
func exec(ctx context.Context, tx *sql.Tx, op store.Op) error {
	var err error
	switch op := op.(type) {
	case store.InsertMonitor:
		m := op.Monitor
		_, err = tx.ExecContext(ctx, `INSERT INTO monitors(id, slug, name, ping_key, alert_webhook_url, machine, health, last_checkin_at, created_at, updated_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.ID, m.Slug, m.Name, m.PingKey, m.AlertWebhookURL, string(m.Machine), m.Health, nullTime(m.LastCheckinAt), formatTime(m.CreatedAt), formatTime(m.UpdatedAt))
	case store.UpdateMonitor:
		m := op.Monitor
		_, err = tx.ExecContext(ctx, `UPDATE monitors SET slug = ?, name = ?, ping_key = ?, alert_webhook_url = ?, machine = ?, health = ?, last_checkin_at = ?, updated_at = ? WHERE id = ?`,
			m.Slug, m.Name, m.PingKey, m.AlertWebhookURL, string(m.Machine), m.Health, nullTime(m.LastCheckinAt), formatTime(m.UpdatedAt), m.ID)
	case store.DeleteMonitor:
		_, err = tx.ExecContext(ctx, `DELETE FROM monitors WHERE id = ?`, op.ID)
	case store.InsertCheckin:
		c := op.Checkin
		_, err = tx.ExecContext(ctx, `INSERT INTO checkins(id, monitor_id, status, source, created_at, finished_at, duration_ms, exit_code, output, expected_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.ID, c.MonitorID, c.Status, c.Source, formatTime(c.CreatedAt), nullTime(c.FinishedAt), durationMS(c.Duration), c.ExitCode, c.Output, nullTime(c.ExpectedAt))
	case store.FinishCheckin:
		at := formatTime(op.At)
		_, err = tx.ExecContext(ctx, `UPDATE checkins SET status = ?, finished_at = ?,
				duration_ms = CAST(ROUND((julianday(?) - julianday(created_at)) * 86400000) AS INTEGER),
				exit_code = COALESCE(?, exit_code), output = COALESCE(?, output)
			WHERE monitor_id = ? AND id = ? AND status = 'in_progress'`,
			op.Status, at, at, op.ExitCode, op.Output, op.MonitorID, op.ID)
	case store.InsertAlert:
		_, err = tx.ExecContext(ctx, `INSERT INTO alerts(url, payload, next_attempt_at) VALUES(?, ?, ?)`, op.URL, string(op.Payload), formatTime(op.At))
	default:
		err = fmt.Errorf("unknown write %T", op)
	}
	return err
}

func durationMS(d *time.Duration) any {
	if d == nil {
		return nil
	}
	return d.Milliseconds()
}

// Apply writes the batch in one transaction, synced before it returns.
func (s *DB) Apply(ctx context.Context, b *store.Batch) error {
	if len(b.Ops) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	for _, op := range b.Ops {
		if err := exec(ctx, tx, op); err != nil {
			tx.Rollback()
			return fmt.Errorf("write: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
