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

// A batch's runs of InsertMonitor and of SaveJob (a first start's
// thousands) are written manyRows at a time, each run one statement that
// takes its columns as arrays, rather than a statement a row: the
// database's work for 2,000 rows is a fraction (BenchmarkStartup's first
// starts on Postgres).
const (
	// fewRows is the shortest run written so.
	fewRows = 8
	// manyRows bounds the rows of one statement.
	manyRows = 1000
)

// queueMany adds to b the run of InsertMonitor, or of SaveJob, that ops
// begins with, in one statement, and returns how many writes it took:
// none for a shorter run than fewRows. A run of SaveJob stops before a job
// it saves already (a statement may change a row once).
func queueMany(b *pgx.Batch, ops []store.Op) int {
	n := 0
	switch ops[0].(type) {
	case store.InsertMonitor:
		for n < min(len(ops), manyRows) {
			if _, ok := ops[n].(store.InsertMonitor); !ok {
				break
			}
			n++
		}
		if n < fewRows {
			return 0
		}
		var c newMonitors
		for _, op := range ops[:n] {
			c.add(op.(store.InsertMonitor).Monitor)
		}
		b.Queue(`INSERT INTO monitors(id, shard, slug, name, ping_key, alert_webhook_url, machine, health, last_checkin_at, created_at, updated_at)
			SELECT * FROM unnest($1::bigint[], $2::integer[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::timestamptz[], $10::timestamptz[], $11::timestamptz[])`,
			c.id, c.shard, c.slug, c.name, c.pingKey, c.webhook, c.machine, c.health, c.lastCheckin, c.created, c.updated)
	case store.SaveJob:
		seen := map[string]bool{}
		for n < min(len(ops), manyRows) {
			op, ok := ops[n].(store.SaveJob)
			if !ok || seen[op.Job.ID] {
				break
			}
			seen[op.Job.ID] = true
			n++
		}
		if n < fewRows {
			return 0
		}
		ids, machines, healths, updated := make([]string, n), make([]string, n), make([]string, n), make([]time.Time, n)
		for i, op := range ops[:n] {
			j := op.(store.SaveJob).Job
			ids[i], machines[i], healths[i], updated[i] = j.ID, string(j.Machine), j.Health, j.UpdatedAt
		}
		b.Queue(`INSERT INTO jobs(id, machine, health, updated_at) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[])
			ON CONFLICT(id) DO UPDATE SET machine = excluded.machine, health = excluded.health, updated_at = excluded.updated_at`,
			ids, machines, healths, updated)
	}
	return n
}

// newMonitors are the columns of new monitors' rows, for queueMany.
type newMonitors struct {
	id                                            []int64
	shard                                         []int32
	slug, name, pingKey, webhook, machine, health []string
	lastCheckin                                   []*time.Time
	created, updated                              []time.Time
}

func (c *newMonitors) add(m store.Monitor) {
	c.id, c.shard = append(c.id, m.ID), append(c.shard, int32(m.Shard))
	c.slug, c.name, c.pingKey = append(c.slug, m.Slug), append(c.name, m.Name), append(c.pingKey, m.PingKey)
	c.webhook, c.machine, c.health = append(c.webhook, m.AlertWebhookURL), append(c.machine, string(m.Machine)), append(c.health, m.Health)
	c.lastCheckin = append(c.lastCheckin, nullTime(m.LastCheckinAt))
	c.created, c.updated = append(c.created, m.CreatedAt), append(c.updated, m.UpdatedAt)
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
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if b.Fence != nil {
			if err := fence(ctx, tx, b.Fence); err != nil {
				return err
			}
		}
		var batch pgx.Batch
		for i := 0; i < len(b.Ops); {
			if n := queueMany(&batch, b.Ops[i:]); n > 0 {
				i += n
				continue
			}
			if err := queue(&batch, b.Ops[i]); err != nil {
				return err
			}
			i++
		}
		res := tx.SendBatch(ctx, &batch)
		for range batch.Len() {
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
