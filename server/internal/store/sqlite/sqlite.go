// Package sqlite keeps the server's monitors in SQLite (modernc.org/sqlite,
// pure Go, no cgo): one file, in WAL mode, every transaction synced
// (synchronous=FULL) before Apply returns, the schema migrated on open.
// It implements store.Store.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// DB is an open database: one connection writes, a few others read
// (SQLite in WAL mode lets them read while it writes).
type DB struct {
	db    *sql.DB
	read  *sql.DB
	stmts [numStatements]*sql.Stmt
}

var _ store.Store = (*DB)(nil)

// readers is how many connections read at once.
const readers = 4

// Open opens (creating it if needed) the database file at path and
// migrates its schema.
func Open(ctx context.Context, path string) (*DB, error) {
	const pragmas = "_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(ON)&_pragma=busy_timeout(10000)"
	// The writer keeps its statement journals in memory (temp_store:
	// a statement of many rows inside a transaction otherwise spills
	// the pages it changes to a temporary file, a write and a read per
	// page) and up to 64 MiB of pages in its cache (the default, 2 MiB,
	// spills a large first start's transaction to the log and reads it
	// back). Durability is unchanged: the log is synced at each commit.
	db, err := sql.Open("sqlite", "file:"+path+"?"+pragmas+"&_pragma=temp_store(MEMORY)&_pragma=cache_size(-65536)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// One connection writes: SQLite serialises writers anyway, and one
	// connection keeps the prepared statements and avoids busy errors.
	db.SetMaxOpenConns(1)
	s := &DB{db: db}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := s.prepare(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s.read, err = sql.Open("sqlite", "file:"+path+"?"+pragmas+"&_pragma=query_only(1)")
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s.read.SetMaxOpenConns(readers)
	return s, nil
}

// Close closes the database.
func (s *DB) Close() error { return errors.Join(s.read.Close(), s.db.Close()) }

// migrations are the schema's versions: migrations[i] takes the database
// from version i to i+1 (PRAGMA user_version). Never edit one that has
// shipped: add another.
var migrations = []string{
	`CREATE TABLE meta (
		key   TEXT PRIMARY KEY,
		value TEXT NOT NULL
	);
	CREATE TABLE monitors (
		id                   INTEGER PRIMARY KEY,
		slug                 TEXT NOT NULL UNIQUE,
		name                 TEXT NOT NULL,
		ping_key             TEXT NOT NULL UNIQUE,
		alert_webhook_url    TEXT NOT NULL DEFAULT '',
		machine              TEXT NOT NULL,
		health               TEXT NOT NULL,
		last_checkin_at      TEXT,
		created_at           TEXT NOT NULL,
		updated_at           TEXT NOT NULL
	);
	CREATE TABLE checkins (
		seq          INTEGER PRIMARY KEY,
		id           TEXT NOT NULL UNIQUE,
		monitor_id   INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
		status       TEXT NOT NULL,
		source       TEXT NOT NULL,
		created_at   TEXT NOT NULL,
		finished_at  TEXT,
		duration_ms  INTEGER,
		exit_code    INTEGER,
		output       TEXT,
		expected_at  TEXT
	);
	CREATE INDEX checkins_by_monitor ON checkins(monitor_id, seq);
	CREATE TABLE alerts (
		id               INTEGER PRIMARY KEY,
		url              TEXT NOT NULL,
		payload          TEXT NOT NULL,
		attempts         INTEGER NOT NULL DEFAULT 0,
		next_attempt_at  TEXT NOT NULL,
		delivered_at     TEXT,
		given_up_at      TEXT,
		last_error       TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX alerts_pending ON alerts(next_attempt_at) WHERE delivered_at IS NULL AND given_up_at IS NULL;`,
	`CREATE TABLE jobs (
		id          TEXT PRIMARY KEY,
		machine     TEXT NOT NULL,
		health      TEXT NOT NULL,
		updated_at  TEXT NOT NULL
	);
	CREATE TABLE runs (
		seq           INTEGER PRIMARY KEY,
		id            TEXT NOT NULL UNIQUE,
		job_id        TEXT NOT NULL,
		status        TEXT NOT NULL,
		attempt       INTEGER NOT NULL,
		triggered_by  TEXT NOT NULL,
		started_at    TEXT NOT NULL,
		finished_at   TEXT,
		duration_ms   INTEGER,
		output        TEXT NOT NULL DEFAULT '',
		truncated     INTEGER NOT NULL DEFAULT 0,
		exit_code     INTEGER,
		error         TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX runs_by_job ON runs(job_id, seq);
	CREATE INDEX runs_running ON runs(status) WHERE status = 'running';
	CREATE INDEX runs_by_start ON runs(started_at);
	CREATE INDEX checkins_by_created ON checkins(monitor_id, created_at);`,
	`CREATE TABLE threads (
		id            TEXT PRIMARY KEY,
		revision      INTEGER NOT NULL,
		digest        TEXT NOT NULL,
		workspace     TEXT NOT NULL,
		provider      TEXT NOT NULL,
		model         TEXT NOT NULL,
		first_prompt  TEXT NOT NULL,
		tokens        INTEGER NOT NULL,
		messages      INTEGER NOT NULL,
		created_at    TEXT NOT NULL,
		updated_at    TEXT NOT NULL,
		synced_at     TEXT NOT NULL,
		body          BLOB NOT NULL
	);
	CREATE INDEX threads_by_update ON threads(updated_at, id);`,
	// The API's keys. The token of earlier servers (the meta row
	// api_token_sha256) becomes the key "admin", and the threads pushed
	// with it its threads: a thread is named by its owner and its ID.
	`CREATE TABLE keys (
		id            TEXT PRIMARY KEY,
		name          TEXT NOT NULL,
		scope         TEXT NOT NULL,
		hash          TEXT NOT NULL UNIQUE,
		created_at    TEXT NOT NULL,
		last_used_at  TEXT,
		revoked_at    TEXT
	);
	INSERT INTO keys(id, name, scope, hash, created_at)
		SELECT 'admin', 'admin', 'admin', value, strftime('%Y-%m-%dT%H:%M:%S.000000000Z', 'now')
		FROM meta WHERE key = 'api_token_sha256' AND length(value) = 64;
	DELETE FROM meta WHERE key = 'api_token_sha256';
	CREATE TABLE owned_threads (
		owner         TEXT NOT NULL,
		id            TEXT NOT NULL,
		revision      INTEGER NOT NULL,
		digest        TEXT NOT NULL,
		workspace     TEXT NOT NULL,
		provider      TEXT NOT NULL,
		model         TEXT NOT NULL,
		first_prompt  TEXT NOT NULL,
		tokens        INTEGER NOT NULL,
		messages      INTEGER NOT NULL,
		created_at    TEXT NOT NULL,
		updated_at    TEXT NOT NULL,
		synced_at     TEXT NOT NULL,
		body          BLOB NOT NULL,
		PRIMARY KEY (owner, id)
	);
	INSERT INTO owned_threads SELECT 'admin', id, revision, digest, workspace, provider, model, first_prompt, tokens, messages, created_at, updated_at, synced_at, body FROM threads;
	DROP TABLE threads;
	ALTER TABLE owned_threads RENAME TO threads;
	CREATE INDEX threads_by_update ON threads(owner, updated_at, id);`,
	// When each alert was raised: next_attempt_at moves on with each
	// failed attempt.
	`ALTER TABLE alerts ADD COLUMN raised_at TEXT;
	UPDATE alerts SET raised_at = next_attempt_at;`,
}

// migrate brings the schema to the last version, one transaction per
// migration. A database newer than this server is refused.
func (s *DB) migrate(ctx context.Context) error {
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read the schema version: %w", err)
	}
	if version > len(migrations) {
		return fmt.Errorf("the database has schema version %d, newer than this server's %d: run a newer server", version, len(migrations))
	}
	for v := version; v < len(migrations); v++ {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate the schema to version %d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate the schema to version %d: %w", v+1, err)
		}
	}
	return nil
}

// Meta returns the value stored under key, and whether there is one.
func (s *DB) Meta(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := s.db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = ?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", key, err)
	}
	return v, true, nil
}

// SetMeta stores value under key, durably.
func (s *DB) SetMeta(ctx context.Context, key, value string) error {
	_, err := s.db.ExecContext(ctx, "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", key, value)
	if err != nil {
		return fmt.Errorf("store %s: %w", key, err)
	}
	return nil
}

// checkinColumns are the columns a check-in is read from, in scanCheckin's
// order.
const checkinColumns = `id, status, source, created_at, finished_at, duration_ms, exit_code, output, expected_at`

// scanCheckin reads a check-in's row of monitor monitorID.
func scanCheckin(scan func(...any) error, monitorID int64) (*store.Checkin, error) {
	c := &store.Checkin{MonitorID: monitorID}
	var created string
	var finished, expected, output sql.NullString
	var duration, exit sql.NullInt64
	if err := scan(&c.ID, &c.Status, &c.Source, &created, &finished, &duration, &exit, &output, &expected); err != nil {
		return nil, err
	}
	var errs []error
	var err error
	c.CreatedAt, err = parseTime(created)
	errs = append(errs, err)
	c.FinishedAt, err = parseNull(finished)
	errs = append(errs, err)
	c.ExpectedAt, err = parseNull(expected)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("read check-in %s: %w", c.ID, err)
	}
	if duration.Valid {
		d := time.Duration(duration.Int64) * time.Millisecond
		c.Duration = &d
	}
	if exit.Valid {
		e := int(exit.Int64)
		c.ExitCode = &e
	}
	if output.Valid {
		c.Output = &output.String
	}
	return c, nil
}

// Checkins returns the last limit check-ins of a monitor, newest first.
func (s *DB) Checkins(ctx context.Context, monitorID int64, limit int) ([]*store.Checkin, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+checkinColumns+`
		FROM checkins WHERE monitor_id = ? ORDER BY seq DESC LIMIT ?`, monitorID, limit)
	if err != nil {
		return nil, fmt.Errorf("read the check-ins: %w", err)
	}
	defer rows.Close()
	var out []*store.Checkin
	for rows.Next() {
		c, err := scanCheckin(rows.Scan, monitorID)
		if err != nil {
			return nil, fmt.Errorf("read the check-ins: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the check-ins: %w", err)
	}
	return out, nil
}

// Checkin returns one check-in of a monitor, or nil when it has none of
// that id.
func (s *DB) Checkin(ctx context.Context, monitorID int64, id string) (*store.Checkin, error) {
	row := s.read.QueryRowContext(ctx, `SELECT `+checkinColumns+` FROM checkins WHERE monitor_id = ? AND id = ?`, monitorID, id)
	c, err := scanCheckin(row.Scan, monitorID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read check-in %s: %w", id, err)
	}
	return c, nil
}

// CheckinsByID returns the check-ins of the ids that exist.
func (s *DB) CheckinsByID(ctx context.Context, ids []string) ([]*store.Checkin, error) {
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := s.read.QueryContext(ctx, `SELECT monitor_id, `+checkinColumns+` FROM checkins WHERE id IN (SELECT value FROM json_each(?))`, string(list))
	if err != nil {
		return nil, fmt.Errorf("read the check-ins: %w", err)
	}
	defer rows.Close()
	var out []*store.Checkin
	for rows.Next() {
		var monitorID int64
		c, err := scanCheckin(func(dest ...any) error { return rows.Scan(append([]any{&monitorID}, dest...)...) }, 0)
		if err != nil {
			return nil, fmt.Errorf("read the check-ins: %w", err)
		}
		c.MonitorID = monitorID
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the check-ins: %w", err)
	}
	return out, nil
}

// runColumns are the columns a run is read from, in scanRun's order.
const runColumns = `id, job_id, status, attempt, triggered_by, started_at, finished_at, duration_ms, output, truncated, exit_code, error`

// scanRun reads a run's row.
func scanRun(scan func(...any) error) (*store.Run, error) {
	r := &store.Run{}
	var started string
	var finished sql.NullString
	var duration, exit sql.NullInt64
	if err := scan(&r.ID, &r.JobID, &r.Status, &r.Attempt, &r.TriggeredBy, &started, &finished, &duration, &r.Output, &r.Truncated, &exit, &r.Error); err != nil {
		return nil, err
	}
	var err error
	if r.StartedAt, err = parseTime(started); err != nil {
		return nil, fmt.Errorf("run %s: %w", r.ID, err)
	}
	if r.FinishedAt, err = parseNull(finished); err != nil {
		return nil, fmt.Errorf("run %s: %w", r.ID, err)
	}
	if duration.Valid {
		d := time.Duration(duration.Int64) * time.Millisecond
		r.Duration = &d
	}
	if exit.Valid {
		e := int(exit.Int64)
		r.ExitCode = &e
	}
	return r, nil
}

// queryRuns returns the runs a query selects.
func (s *DB) queryRuns(ctx context.Context, query string, args ...any) ([]*store.Run, error) {
	rows, err := s.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read the runs: %w", err)
	}
	defer rows.Close()
	var out []*store.Run
	for rows.Next() {
		r, err := scanRun(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("read the runs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the runs: %w", err)
	}
	return out, nil
}

// Runs returns a job's last limit runs, newest first.
func (s *DB) Runs(ctx context.Context, jobID string, limit int) ([]*store.Run, error) {
	return s.queryRuns(ctx, `SELECT `+runColumns+` FROM runs WHERE job_id = ? ORDER BY seq DESC LIMIT ?`, jobID, limit)
}

// Run returns one run, or nil when there is none of that id.
func (s *DB) Run(ctx context.Context, id string) (*store.Run, error) {
	r, err := scanRun(s.read.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", id, err)
	}
	return r, nil
}

// RunningRuns returns the runs marked running, oldest first.
func (s *DB) RunningRuns(ctx context.Context) ([]*store.Run, error) {
	return s.queryRuns(ctx, `SELECT `+runColumns+` FROM runs WHERE status = 'running' ORDER BY seq`)
}

// LastRuns returns the newest run of every job that has one: one look-up
// of runs_by_job for each job's row.
func (s *DB) LastRuns(ctx context.Context) ([]*store.Run, error) {
	return s.queryRuns(ctx, `SELECT `+runColumns+` FROM runs WHERE seq IN (SELECT (SELECT max(seq) FROM runs r WHERE r.job_id = j.id) FROM jobs j) ORDER BY seq`)
}

// PendingAlerts returns up to limit alerts due at now, oldest first: of
// each URL, only the oldest undelivered alert, so that a webhook gets its
// alerts in order.
func (s *DB) PendingAlerts(ctx context.Context, now time.Time, limit int) ([]*store.Alert, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, url, payload, attempts FROM alerts a
		WHERE delivered_at IS NULL AND given_up_at IS NULL AND next_attempt_at <= ?
		AND NOT EXISTS (SELECT 1 FROM alerts b WHERE b.url = a.url AND b.id < a.id AND b.delivered_at IS NULL AND b.given_up_at IS NULL)
		ORDER BY id LIMIT ?`, formatTime(now), limit)
	if err != nil {
		return nil, fmt.Errorf("read the alerts: %w", err)
	}
	defer rows.Close()
	var out []*store.Alert
	for rows.Next() {
		a := &store.Alert{}
		var payload string
		if err := rows.Scan(&a.ID, &a.URL, &payload, &a.Attempts); err != nil {
			return nil, fmt.Errorf("read the alerts: %w", err)
		}
		a.Payload = []byte(payload)
		out = append(out, a)
	}
	return out, rows.Err()
}

// NextAlertAt returns when the next undelivered alert is due, of those
// PendingAlerts may hand out (each URL's oldest: the others wait for it),
// or the zero time when none waits.
func (s *DB) NextAlertAt(ctx context.Context) (time.Time, error) {
	var next sql.NullString
	if err := s.read.QueryRowContext(ctx, `SELECT MIN(next_attempt_at) FROM alerts a
		WHERE delivered_at IS NULL AND given_up_at IS NULL
		AND NOT EXISTS (SELECT 1 FROM alerts b WHERE b.url = a.url AND b.id < a.id AND b.delivered_at IS NULL AND b.given_up_at IS NULL)`).Scan(&next); err != nil {
		return time.Time{}, fmt.Errorf("read the alerts: %w", err)
	}
	return parseNull(next)
}

// OldestAlertAt returns when the oldest undelivered alert was raised, or
// the zero time when none waits.
func (s *DB) OldestAlertAt(ctx context.Context) (time.Time, error) {
	var oldest sql.NullString
	if err := s.read.QueryRowContext(ctx, `SELECT MIN(raised_at) FROM alerts WHERE delivered_at IS NULL AND given_up_at IS NULL`).Scan(&oldest); err != nil {
		return time.Time{}, fmt.Errorf("read the alerts: %w", err)
	}
	return parseNull(oldest)
}

// AlertDelivered records that alert id was delivered at now.
func (s *DB) AlertDelivered(ctx context.Context, id int64, now time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE alerts SET delivered_at = ?, attempts = attempts + 1 WHERE id = ?`, formatTime(now), id)
	return err
}

// AlertFailed records a failed delivery of alert id at now, to be tried
// again at next; after the last attempt, next is the zero time and the
// alert is given up, with its error.
func (s *DB) AlertFailed(ctx context.Context, id int64, now, next time.Time, why string) error {
	if next.IsZero() {
		_, err := s.db.ExecContext(ctx, `UPDATE alerts SET attempts = attempts + 1, last_error = ?, given_up_at = ? WHERE id = ?`, why, formatTime(now), id)
		return err
	}
	_, err := s.db.ExecContext(ctx, `UPDATE alerts SET attempts = attempts + 1, last_error = ?, next_attempt_at = ? WHERE id = ?`, why, formatTime(next), id)
	return err
}

// formatTime writes t as the database keeps times: RFC 3339 in UTC, with
// nanoseconds, so that text order is time order.
func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return formatTime(t)
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q: %w", s, err)
	}
	return t.UTC(), nil
}

func parseNull(s sql.NullString) (time.Time, error) {
	if !s.Valid || s.String == "" {
		return time.Time{}, nil
	}
	return parseTime(s.String)
}
