package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// queue adds one write of a batch to b.
func queue(b *pgx.Batch, op store.Op) error {
	switch op := op.(type) {
	case store.InsertMonitor:
		m := op.Monitor
		b.Queue(`INSERT INTO monitors(id, shard, slug, name, ping_key, alert_webhook_url, machine, health, last_checkin_at, created_at, updated_at) VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			m.ID, m.Shard, m.Slug, m.Name, m.PingKey, m.AlertWebhookURL, string(m.Machine), m.Health, nullTime(m.LastCheckinAt), m.CreatedAt, m.UpdatedAt)
	case store.UpdateMonitor:
		m := op.Monitor
		b.Queue(`UPDATE monitors SET slug = $1, name = $2, ping_key = $3, alert_webhook_url = $4, machine = $5, health = $6, last_checkin_at = $7, updated_at = $8 WHERE id = $9`,
			m.Slug, m.Name, m.PingKey, m.AlertWebhookURL, string(m.Machine), m.Health, nullTime(m.LastCheckinAt), m.UpdatedAt, m.ID)
	case store.SaveMachine:
		b.Queue(`UPDATE monitors SET machine = $1, health = $2, last_checkin_at = $3, updated_at = $4 WHERE id = $5`,
			string(op.Machine), op.Health, nullTime(op.LastCheckinAt), op.UpdatedAt, op.ID)
	case store.DeleteMonitor:
		b.Queue(`DELETE FROM monitors WHERE id = $1`, op.ID)
	case store.InsertCheckin:
		c := op.Checkin
		b.Queue(`INSERT INTO checkins(id, monitor_id, status, source, created_at, finished_at, duration_ms, exit_code, output, expected_at) VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			c.ID, c.MonitorID, c.Status, c.Source, c.CreatedAt, nullTime(c.FinishedAt), durationMS(c.Duration), c.ExitCode, bytesOf(c.Output), nullTime(c.ExpectedAt))
	case store.FinishCheckin:
		b.Queue(`UPDATE checkins SET status = $1, finished_at = $2,
				duration_ms = round(extract(epoch FROM $2::timestamptz - created_at) * 1000)::bigint,
				exit_code = COALESCE($3, exit_code), output = COALESCE($4, output)
			WHERE monitor_id = $5 AND id = $6 AND status = 'in_progress'`,
			op.Status, op.At, op.ExitCode, bytesOf(op.Output), op.MonitorID, op.ID)
	case store.InsertAlert:
		b.Queue(`INSERT INTO alerts(url, payload, next_attempt_at, raised_at) VALUES($1, $2, $3, $3)`, op.URL, string(op.Payload), op.At)
	case store.SaveJob:
		j := op.Job
		b.Queue(`INSERT INTO jobs(id, machine, health, updated_at) VALUES($1, $2, $3, $4)
			ON CONFLICT(id) DO UPDATE SET machine = excluded.machine, health = excluded.health, updated_at = excluded.updated_at`,
			j.ID, string(j.Machine), j.Health, j.UpdatedAt)
	case store.InsertRun:
		r := op.Run
		b.Queue(`INSERT INTO runs(id, job_id, status, attempt, triggered_by, started_at) VALUES($1, $2, $3, $4, $5, $6)`,
			r.ID, r.JobID, r.Status, r.Attempt, r.TriggeredBy, r.StartedAt)
	case store.StartQueuedRun:
		b.Queue(`UPDATE runs SET status = 'running', started_at = $1 WHERE id = $2 AND status = 'queued'`, op.StartedAt, op.ID)
	case store.FinishRun:
		b.Queue(`UPDATE runs SET status = $1, finished_at = $2, duration_ms = $3, output = $4, truncated = $5, exit_code = $6, error = $7
			WHERE id = $8 AND status IN ('running', 'queued')`,
			op.Status, op.FinishedAt, op.Duration.Milliseconds(), []byte(op.Output), op.Truncated, op.ExitCode, op.Error, op.ID)
	case store.DeleteRuns:
		b.Queue(`DELETE FROM runs WHERE started_at < $1 AND status NOT IN ('running', 'queued')`, op.Before)
	case store.DeleteCheckins:
		b.Queue(`DELETE FROM checkins WHERE monitor_id = $1 AND created_at < $2 AND status <> 'in_progress'`, op.MonitorID, op.Before)
	default:
		return fmt.Errorf("unknown write %T", op)
	}
	return nil
}

// bytesOf is an output as the bytea column keeps it: nil for none.
func bytesOf(s *string) []byte {
	if s == nil {
		return nil
	}
	return []byte(*s)
}

func durationMS(d *time.Duration) *int64 {
	if d == nil {
		return nil
	}
	ms := d.Milliseconds()
	return &ms
}

// Apply writes the batch in one transaction, committed before it
// returns. A fenced batch first locks the leases it names (FOR SHARE: no
// other instance can take them until it commits) and writes nothing,
// returning store.ErrFenced, when the instance does not hold one of
// them.
func (s *DB) Apply(ctx context.Context, b *store.Batch) error {
	if len(b.Ops) == 0 {
		return nil
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if b.Fence != nil {
			if err := fence(ctx, tx, b.Fence); err != nil {
				return err
			}
		}
		var batch pgx.Batch
		for _, op := range b.Ops {
			if err := queue(&batch, op); err != nil {
				return err
			}
		}
		res := tx.SendBatch(ctx, &batch)
		for range b.Ops {
			if _, err := res.Exec(); err != nil {
				res.Close()
				return fmt.Errorf("write: %w", err)
			}
		}
		if err := res.Close(); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		return nil
	})
}

// fence checks, in tx, that f's instance holds every lease f names, and
// locks them until tx ends.
func fence(ctx context.Context, tx pgx.Tx, f *store.Fence) error {
	shards := slices.Compact(slices.Sorted(slices.Values(f.Shards)))
	rows, err := tx.Query(ctx, `SELECT shard FROM leases WHERE owner = $1 AND shard = ANY($2) AND expires_at > clock_timestamp() ORDER BY shard FOR SHARE`, f.Instance, shards)
	if err != nil {
		return fmt.Errorf("check the leases: %w", err)
	}
	held, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return fmt.Errorf("check the leases: %w", err)
	}
	if len(held) != len(shards) {
		return store.ErrFenced
	}
	return nil
}
