package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// The statements of the writes, prepared once.
const (
	insertMonitor = iota
	updateMonitor
	saveMachine
	deleteMonitor
	insertCheckin
	finishCheckin
	insertAlert
	saveJob
	insertRun
	startQueuedRun
	finishRun
	deleteRuns
	deleteCheckins
	insertMonitors
	saveJobs
	numStatements
)

// rowsAtOnce is how many rows insertMonitors and saveJobs write, each
// statement: a batch's runs of InsertMonitor and of SaveJob (a first
// start's thousands) go that many at a time, for a quarter less processor
// time than a statement a row (BenchmarkInsertMonitors).
const rowsAtOnce = 32

var statements = [numStatements]string{
	insertMonitor: `INSERT INTO monitors(id, slug, name, ping_key, alert_webhook_url, machine, health, last_checkin_at, created_at, updated_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	updateMonitor: `UPDATE monitors SET slug = ?, name = ?, ping_key = ?, alert_webhook_url = ?, machine = ?, health = ?, last_checkin_at = ?, updated_at = ? WHERE id = ?`,
	saveMachine:   `UPDATE monitors SET machine = ?, health = ?, last_checkin_at = ?, updated_at = ? WHERE id = ?`,
	deleteMonitor: `DELETE FROM monitors WHERE id = ?`,
	insertCheckin: `INSERT INTO checkins(id, monitor_id, status, source, created_at, finished_at, duration_ms, exit_code, output, expected_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	finishCheckin: `UPDATE checkins SET status = ?, finished_at = ?,
			duration_ms = CAST(ROUND((julianday(?) - julianday(created_at)) * 86400000) AS INTEGER),
			exit_code = COALESCE(?, exit_code), output = COALESCE(?, output)
		WHERE monitor_id = ? AND id = ? AND status = 'in_progress'`,
	insertAlert: `INSERT INTO alerts(url, payload, next_attempt_at, raised_at) VALUES(?, ?, ?, ?)`,
	saveJob: `INSERT INTO jobs(id, machine, health, updated_at) VALUES(?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET machine = excluded.machine, health = excluded.health, updated_at = excluded.updated_at`,
	insertRun:      `INSERT INTO runs(id, job_id, status, attempt, triggered_by, started_at) VALUES(?, ?, ?, ?, ?, ?)`,
	startQueuedRun: `UPDATE runs SET status = 'running', started_at = ? WHERE id = ? AND status = 'queued'`,
	finishRun: `UPDATE runs SET status = ?, finished_at = ?, duration_ms = ?, output = ?, truncated = ?, exit_code = ?, error = ?
		WHERE id = ? AND status IN ('running', 'queued')`,
	deleteRuns:     `DELETE FROM runs WHERE started_at < ? AND status NOT IN ('running', 'queued')`,
	deleteCheckins: `DELETE FROM checkins WHERE monitor_id = ? AND created_at < ? AND status <> 'in_progress'`,
	insertMonitors: `INSERT INTO monitors(id, slug, name, ping_key, alert_webhook_url, machine, health, last_checkin_at, created_at, updated_at) VALUES` + manyRows(10),
	saveJobs: `INSERT INTO jobs(id, machine, health, updated_at) VALUES` + manyRows(4) + `
		ON CONFLICT(id) DO UPDATE SET machine = excluded.machine, health = excluded.health, updated_at = excluded.updated_at`,
}

// manyRows returns rowsAtOnce rows of n parameters, for VALUES.
func manyRows(n int) string {
	row := "(" + strings.Repeat("?, ", n-1) + "?)"
	return strings.Repeat(row+", ", rowsAtOnce-1) + row
}

// execMany writes the first rowsAtOnce writes of ops in one statement when
// they are all InsertMonitor or all SaveJob, and returns how many it
// wrote: none otherwise.
func (s *DB) execMany(ctx context.Context, tx *sql.Tx, ops []store.Op) (int, error) {
	if len(ops) < rowsAtOnce {
		return 0, nil
	}
	var which int
	args := make([]any, 0, 10*rowsAtOnce)
	var times timeText
	switch ops[0].(type) {
	case store.InsertMonitor:
		which = insertMonitors
		for _, op := range ops[:rowsAtOnce] {
			op, ok := op.(store.InsertMonitor)
			if !ok {
				return 0, nil
			}
			args = appendInsertMonitor(args, op.Monitor, &times)
		}
	case store.SaveJob:
		which = saveJobs
		for _, op := range ops[:rowsAtOnce] {
			op, ok := op.(store.SaveJob)
			if !ok {
				return 0, nil
			}
			args = appendSaveJob(args, op.Job, &times)
		}
	default:
		return 0, nil
	}
	_, err := tx.StmtContext(ctx, s.stmts[which]).ExecContext(ctx, args...)
	return rowsAtOnce, err
}

// appendInsertMonitor appends the arguments of m's insertMonitor to args.
func appendInsertMonitor(args []any, m store.Monitor, times *timeText) []any {
	return append(args, m.ID, m.Slug, m.Name, m.PingKey, m.AlertWebhookURL, text(m.Machine), m.Health, nullTime(m.LastCheckinAt), times.format(m.CreatedAt), times.format(m.UpdatedAt))
}

// appendSaveJob appends the arguments of j's saveJob to args.
func appendSaveJob(args []any, j store.Job, times *timeText) []any {
	return append(args, j.ID, text(j.Machine), j.Health, times.format(j.UpdatedAt))
}

// text returns a saved machine as a string, without a copy: the driver
// copies a text argument into SQLite's memory when it binds it, and a
// batch's machines are not changed once saved (Save makes each anew).
// A first start of 100,000 jobs binds 200,000 machines, 110 MB that
// string(b) copied on the writer's goroutine.
func text(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// timeText formats times as formatTime does, keeping the last: a batch's
// rows mostly share their round's time.
type timeText struct {
	t time.Time
	s string
}

func (c *timeText) format(t time.Time) string {
	if c.s == "" || !t.Equal(c.t) {
		c.t, c.s = t, formatTime(t)
	}
	return c.s
}

// prepare prepares the statements of the writes.
func (s *DB) prepare(ctx context.Context) error {
	for i, q := range statements {
		stmt, err := s.db.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", q, err)
		}
		s.stmts[i] = stmt
	}
	return nil
}

// exec performs one write of a batch in tx.
func (s *DB) exec(ctx context.Context, tx *sql.Tx, op store.Op) error {
	run := func(which int, args ...any) error {
		_, err := tx.StmtContext(ctx, s.stmts[which]).ExecContext(ctx, args...)
		return err
	}
	switch op := op.(type) {
	case store.InsertMonitor:
		return run(insertMonitor, appendInsertMonitor(nil, op.Monitor, &timeText{})...)
	case store.UpdateMonitor:
		m := op.Monitor
		return run(updateMonitor, m.Slug, m.Name, m.PingKey, m.AlertWebhookURL, text(m.Machine), m.Health, nullTime(m.LastCheckinAt), formatTime(m.UpdatedAt), m.ID)
	case store.SaveMachine:
		return run(saveMachine, text(op.Machine), op.Health, nullTime(op.LastCheckinAt), formatTime(op.UpdatedAt), op.ID)
	case store.DeleteMonitor:
		return run(deleteMonitor, op.ID)
	case store.InsertCheckin:
		c := op.Checkin
		return run(insertCheckin, c.ID, c.MonitorID, c.Status, c.Source, formatTime(c.CreatedAt), nullTime(c.FinishedAt), durationMS(c.Duration), c.ExitCode, c.Output, nullTime(c.ExpectedAt))
	case store.FinishCheckin:
		at := formatTime(op.At)
		return run(finishCheckin, op.Status, at, at, op.ExitCode, op.Output, op.MonitorID, op.ID)
	case store.InsertAlert:
		at := formatTime(op.At)
		return run(insertAlert, op.URL, string(op.Payload), at, at)
	case store.SaveJob:
		return run(saveJob, appendSaveJob(nil, op.Job, &timeText{})...)
	case store.InsertRun:
		r := op.Run
		return run(insertRun, r.ID, r.JobID, r.Status, r.Attempt, r.TriggeredBy, formatTime(r.StartedAt))
	case store.StartQueuedRun:
		return run(startQueuedRun, formatTime(op.StartedAt), op.ID)
	case store.FinishRun:
		return run(finishRun, op.Status, formatTime(op.FinishedAt), op.Duration.Milliseconds(), op.Output, op.Truncated, op.ExitCode, op.Error, op.ID)
	case store.DeleteRuns:
		return run(deleteRuns, formatTime(op.Before))
	case store.DeleteCheckins:
		return run(deleteCheckins, op.MonitorID, formatTime(op.Before))
	}
	return fmt.Errorf("unknown write %T", op)
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
	for i := 0; i < len(b.Ops); {
		n, err := s.execMany(ctx, tx, b.Ops[i:])
		if n == 0 && err == nil {
			n, err = 1, s.exec(ctx, tx, b.Ops[i])
		}
		if err != nil {
			tx.Rollback()
			return fmt.Errorf("write: %w", err)
		}
		i += n
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
