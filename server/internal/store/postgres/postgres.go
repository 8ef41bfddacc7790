// Package postgres keeps the server's monitors in Postgres (through
// github.com/jackc/pgx/v5), where several instances of the server share
// them: it implements store.Shared. Every batch is one transaction,
// committed (and so, with Postgres's default synchronous_commit, flushed
// to its write-ahead log) before Apply returns; the schema is migrated on
// open, by one instance at a time.
//
// Times are kept as timestamptz, to the microsecond: the engine's clock
// is read to the microsecond too, so that what it keeps in memory and
// what it reads back agree.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// DB is an open database: a pool of connections.
type DB struct {
	pool  *pgxpool.Pool
	limit time.Duration // how long a session may sit idle in a transaction (sessionLimit)
}

var _ store.Shared = (*DB)(nil)

// numShards is how many shards the monitors are divided into: the rows of
// the leases table, made by the first migration. An instance holds a
// fair share of them.
const numShards = 64

// alertClaim is how long PendingAlerts keeps the alerts it hands out from
// the other instances: longer than a delivery can take.
const alertClaim = time.Minute

// Open connects to the database at url (a postgres:// URL or a libpq
// connection string) and migrates its schema.
func Open(ctx context.Context, url string, opts ...Option) (*DB, error) {
	o := options{lease: DefaultLease}
	for _, opt := range opts {
		opt(&o)
	}
	if o.lease <= 0 {
		return nil, fmt.Errorf("postgres: lease %v: give a positive lease time", o.lease)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("the Postgres URL: %w", err)
	}
	cfg.MaxConns = max(cfg.MaxConns, 8)
	// Ours win over the URL's: they are what keeps a stopped instance
	// from holding its shards.
	maps.Copy(cfg.ConnConfig.RuntimeParams, sessionSettings(o.lease))
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to Postgres: %w", err)
	}
	s := &DB{pool: pool, limit: sessionLimit(o.lease)}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to Postgres at %s: %w", cfg.ConnConfig.Host, err)
	}
	return s, nil
}

// Close closes the connections.
func (s *DB) Close() error {
	s.pool.Close()
	return nil
}

// migrations are the schema's versions: migrations[i] takes the database
// from version i to i+1 (the table schema_version). Never edit one that
// has shipped: add another.
var migrations = []string{
	`CREATE TABLE meta (
		key   text PRIMARY KEY,
		value text NOT NULL
	);
	CREATE SEQUENCE monitor_ids;
	CREATE TABLE monitors (
		id                bigint PRIMARY KEY,
		shard             integer NOT NULL,
		slug              text NOT NULL UNIQUE,
		name              text NOT NULL,
		ping_key          text NOT NULL UNIQUE,
		alert_webhook_url text NOT NULL DEFAULT '',
		machine           text NOT NULL,
		health            text NOT NULL,
		last_checkin_at   timestamptz,
		created_at        timestamptz NOT NULL,
		updated_at        timestamptz NOT NULL
	);
	CREATE INDEX monitors_by_shard ON monitors(shard, id);
	CREATE TABLE checkins (
		seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		id          text NOT NULL UNIQUE,
		monitor_id  bigint NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
		status      text NOT NULL,
		source      text NOT NULL,
		created_at  timestamptz NOT NULL,
		finished_at timestamptz,
		duration_ms bigint,
		exit_code   integer,
		output      bytea, -- a job's output may hold NUL bytes, which text cannot
		expected_at timestamptz
	);
	CREATE INDEX checkins_by_monitor ON checkins(monitor_id, seq);
	CREATE TABLE alerts (
		id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		url             text NOT NULL,
		payload         text NOT NULL,
		attempts        integer NOT NULL DEFAULT 0,
		next_attempt_at timestamptz NOT NULL,
		delivered_at    timestamptz,
		given_up_at     timestamptz,
		last_error      text NOT NULL DEFAULT ''
	);
	CREATE INDEX alerts_pending ON alerts(next_attempt_at) WHERE delivered_at IS NULL AND given_up_at IS NULL;
	CREATE TABLE instances (
		id         text PRIMARY KEY,
		addr       text NOT NULL,
		expires_at timestamptz NOT NULL
	);
	CREATE TABLE leases (
		shard      integer PRIMARY KEY,
		owner      text,
		expires_at timestamptz NOT NULL DEFAULT '-infinity'
	);
	INSERT INTO leases(shard) SELECT generate_series(0, 63);`,
	`CREATE TABLE jobs (
		id         text PRIMARY KEY,
		machine    text NOT NULL,
		health     text NOT NULL,
		updated_at timestamptz NOT NULL
	);
	CREATE TABLE runs (
		seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		id           text NOT NULL UNIQUE,
		job_id       text NOT NULL,
		status       text NOT NULL,
		attempt      integer NOT NULL,
		triggered_by text NOT NULL,
		started_at   timestamptz NOT NULL,
		finished_at  timestamptz,
		duration_ms  bigint,
		output       bytea NOT NULL DEFAULT '', -- a command's output may hold NUL bytes
		truncated    boolean NOT NULL DEFAULT false,
		exit_code    integer,
		error        text NOT NULL DEFAULT ''
	);
	CREATE INDEX runs_by_job ON runs(job_id, seq);
	CREATE INDEX runs_running ON runs(status) WHERE status = 'running';
	CREATE INDEX runs_by_start ON runs(started_at);
	CREATE INDEX checkins_by_created ON checkins(monitor_id, created_at);`,
	`CREATE TABLE threads (
		id           text PRIMARY KEY,
		revision     bigint NOT NULL,
		digest       text NOT NULL,
		workspace    text NOT NULL,
		provider     text NOT NULL,
		model        text NOT NULL,
		first_prompt text NOT NULL,
		tokens       bigint NOT NULL,
		messages     integer NOT NULL,
		created_at   timestamptz NOT NULL,
		updated_at   timestamptz NOT NULL,
		synced_at    timestamptz NOT NULL,
		body         bytea NOT NULL
	);
	CREATE INDEX threads_by_update ON threads(updated_at, id);`,
	// The API's keys. The token of earlier servers (the meta row
	// api_token_sha256) becomes the key "admin", and the threads pushed
	// with it its threads: a thread is named by its owner and its ID.
	`CREATE TABLE keys (
		id           text PRIMARY KEY,
		name         text NOT NULL,
		scope        text NOT NULL,
		hash         text NOT NULL UNIQUE,
		created_at   timestamptz NOT NULL,
		last_used_at timestamptz,
		revoked_at   timestamptz
	);
	INSERT INTO keys(id, name, scope, hash, created_at)
		SELECT 'admin', 'admin', 'admin', value, date_trunc('second', now())
		FROM meta WHERE key = 'api_token_sha256' AND length(value) = 64;
	DELETE FROM meta WHERE key = 'api_token_sha256';
	ALTER TABLE threads ADD COLUMN owner text NOT NULL DEFAULT 'admin';
	ALTER TABLE threads ALTER COLUMN owner DROP DEFAULT;
	ALTER TABLE threads DROP CONSTRAINT threads_pkey;
	ALTER TABLE threads ADD PRIMARY KEY (owner, id);
	DROP INDEX threads_by_update;
	CREATE INDEX threads_by_update ON threads(owner, updated_at, id);`,
	// When each alert was raised: next_attempt_at moves on with each
	// failed attempt (and each claim).
	`ALTER TABLE alerts ADD COLUMN raised_at timestamptz;
	UPDATE alerts SET raised_at = next_attempt_at;
	ALTER TABLE alerts ALTER COLUMN raised_at SET NOT NULL;`,
}

// migrateLock is the advisory lock that lets one instance migrate at a
// time.
const migrateLock = 0x66736d67656e // "fsmgen"

// migrate brings the schema to the last version in one transaction. A
// database newer than this server is refused.
func (s *DB) migrate(ctx context.Context) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		// Another instance may be migrating: wait for it longer than the
		// sessions' lock_timeout, which is for the leases.
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '1min'"); err != nil {
			return fmt.Errorf("lock the schema: %w", err)
		}
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrateLock); err != nil {
			return fmt.Errorf("lock the schema: %w", err)
		}
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)"); err != nil {
			return fmt.Errorf("read the schema version: %w", err)
		}
		var version int
		err := tx.QueryRow(ctx, "SELECT version FROM schema_version").Scan(&version)
		if errors.Is(err, pgx.ErrNoRows) {
			_, err = tx.Exec(ctx, "INSERT INTO schema_version VALUES (0)")
		}
		if err != nil {
			return fmt.Errorf("read the schema version: %w", err)
		}
		if version > len(migrations) {
			return fmt.Errorf("the database has schema version %d, newer than this server's %d: run a newer server", version, len(migrations))
		}
		for v := version; v < len(migrations); v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migrate the schema to version %d: %w", v+1, err)
			}
		}
		_, err = tx.Exec(ctx, "UPDATE schema_version SET version = $1", len(migrations))
		return err
	})
}

// Meta returns the value stored under key, and whether there is one.
func (s *DB) Meta(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := s.pool.QueryRow(ctx, "SELECT value FROM meta WHERE key = $1", key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", key, err)
	}
	return v, true, nil
}

// SetMeta stores value under key, durably.
func (s *DB) SetMeta(ctx context.Context, key, value string) error {
	_, err := s.pool.Exec(ctx, "INSERT INTO meta(key, value) VALUES($1, $2) ON CONFLICT(key) DO UPDATE SET value = excluded.value", key, value)
	if err != nil {
		return fmt.Errorf("store %s: %w", key, err)
	}
	return nil
}

const monitorColumns = `m.id, m.shard, m.slug, m.name, m.ping_key, m.alert_webhook_url, m.machine, m.health, m.last_checkin_at, m.created_at, m.updated_at`

// scanMonitor reads a row of monitorColumns, then extra.
func scanMonitor(row pgx.Row, extra ...any) (*store.Monitor, error) {
	m := &store.Monitor{}
	var machine string
	var last pgtype.Timestamptz
	dest := append([]any{&m.ID, &m.Shard, &m.Slug, &m.Name, &m.PingKey, &m.AlertWebhookURL, &machine, &m.Health, &last, &m.CreatedAt, &m.UpdatedAt}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	m.Machine = []byte(machine)
	m.LastCheckinAt = fromNull(last)
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
	return m, nil
}

// Monitors returns every monitor, by id.
func (s *DB) Monitors(ctx context.Context) ([]*store.Monitor, error) {
	return s.monitors(ctx, `SELECT `+monitorColumns+` FROM monitors m ORDER BY id`)
}

// ShardMonitors returns the monitors of the shards, by id.
func (s *DB) ShardMonitors(ctx context.Context, shards []int) ([]*store.Monitor, error) {
	return s.monitors(ctx, `SELECT `+monitorColumns+` FROM monitors m WHERE shard = ANY($1) ORDER BY id`, shards)
}

func (s *DB) monitors(ctx context.Context, query string, args ...any) ([]*store.Monitor, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read the monitors: %w", err)
	}
	defer rows.Close()
	var out []*store.Monitor
	for rows.Next() {
		m, err := scanMonitor(rows)
		if err != nil {
			return nil, fmt.Errorf("read the monitors: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the monitors: %w", err)
	}
	return out, nil
}

// checkinColumns are the columns a check-in is read from, in scanCheckin's
// order.
const checkinColumns = `id, status, source, created_at, finished_at, duration_ms, exit_code, output, expected_at`

// scanCheckin reads a check-in's row of monitor monitorID.
func scanCheckin(scan func(...any) error, monitorID int64) (*store.Checkin, error) {
	c := &store.Checkin{MonitorID: monitorID}
	var finished, expected pgtype.Timestamptz
	var duration *int64
	var output []byte
	if err := scan(&c.ID, &c.Status, &c.Source, &c.CreatedAt, &finished, &duration, &c.ExitCode, &output, &expected); err != nil {
		return nil, err
	}
	c.CreatedAt = c.CreatedAt.UTC()
	c.FinishedAt, c.ExpectedAt = fromNull(finished), fromNull(expected)
	if output != nil {
		o := string(output)
		c.Output = &o
	}
	if duration != nil {
		d := time.Duration(*duration) * time.Millisecond
		c.Duration = &d
	}
	return c, nil
}

// Checkins returns the last limit check-ins of a monitor, newest first.
func (s *DB) Checkins(ctx context.Context, monitorID int64, limit int) ([]*store.Checkin, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+checkinColumns+`
		FROM checkins WHERE monitor_id = $1 ORDER BY seq DESC LIMIT $2`, monitorID, limit)
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
	c, err := scanCheckin(s.pool.QueryRow(ctx, `SELECT `+checkinColumns+` FROM checkins WHERE monitor_id = $1 AND id = $2`, monitorID, id).Scan, monitorID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read check-in %s: %w", id, err)
	}
	return c, nil
}

// CheckinsByID returns the check-ins of the ids that exist.
func (s *DB) CheckinsByID(ctx context.Context, ids []string) ([]*store.Checkin, error) {
	rows, err := s.pool.Query(ctx, `SELECT monitor_id, `+checkinColumns+` FROM checkins WHERE id = ANY($1)`, ids)
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

// PendingAlerts returns up to limit alerts due at now, oldest first: of
// each URL, only the oldest undelivered alert, so that a webhook gets its
// alerts in order. It takes them for a minute (alertClaim): another
// instance does not get them meanwhile, unless they are neither delivered
// nor failed by then.
func (s *DB) PendingAlerts(ctx context.Context, now time.Time, limit int) ([]*store.Alert, error) {
	rows, err := s.pool.Query(ctx, `WITH due AS (
			SELECT id FROM alerts a
			WHERE delivered_at IS NULL AND given_up_at IS NULL AND next_attempt_at <= $1
			AND NOT EXISTS (SELECT 1 FROM alerts b WHERE b.url = a.url AND b.id < a.id AND b.delivered_at IS NULL AND b.given_up_at IS NULL)
			ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
		UPDATE alerts SET next_attempt_at = $3 FROM due WHERE alerts.id = due.id
		RETURNING alerts.id, alerts.url, alerts.payload, alerts.attempts`, now, limit, now.Add(alertClaim))
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
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the alerts: %w", err)
	}
	slices.SortFunc(out, func(a, b *store.Alert) int { return int(a.ID - b.ID) })
	return out, nil
}

// NextAlertAt returns when the next undelivered alert is due, of those
// PendingAlerts may hand out (each URL's oldest: the others wait for it),
// or the zero time when none waits.
func (s *DB) NextAlertAt(ctx context.Context) (time.Time, error) {
	var next pgtype.Timestamptz
	if err := s.pool.QueryRow(ctx, `SELECT min(next_attempt_at) FROM alerts a
		WHERE delivered_at IS NULL AND given_up_at IS NULL
		AND NOT EXISTS (SELECT 1 FROM alerts b WHERE b.url = a.url AND b.id < a.id AND b.delivered_at IS NULL AND b.given_up_at IS NULL)`).Scan(&next); err != nil {
		return time.Time{}, fmt.Errorf("read the alerts: %w", err)
	}
	return fromNull(next), nil
}

// OldestAlertAt returns when the oldest undelivered alert was raised, or
// the zero time when none waits.
func (s *DB) OldestAlertAt(ctx context.Context) (time.Time, error) {
	var oldest pgtype.Timestamptz
	if err := s.pool.QueryRow(ctx, `SELECT min(raised_at) FROM alerts WHERE delivered_at IS NULL AND given_up_at IS NULL`).Scan(&oldest); err != nil {
		return time.Time{}, fmt.Errorf("read the alerts: %w", err)
	}
	return fromNull(oldest), nil
}

// AlertDelivered records that alert id was delivered at now.
func (s *DB) AlertDelivered(ctx context.Context, id int64, now time.Time) error {
	if _, err := s.pool.Exec(ctx, `UPDATE alerts SET delivered_at = $1, attempts = attempts + 1 WHERE id = $2`, now, id); err != nil {
		return fmt.Errorf("record the delivery of alert %d: %w", id, err)
	}
	return nil
}

// AlertFailed records a failed delivery of alert id at now, to be tried
// again at next; after the last attempt, next is the zero time and the
// alert is given up, with its error.
func (s *DB) AlertFailed(ctx context.Context, id int64, now, next time.Time, why string) error {
	var err error
	if next.IsZero() {
		_, err = s.pool.Exec(ctx, `UPDATE alerts SET attempts = attempts + 1, last_error = $1, given_up_at = $2 WHERE id = $3`, why, now, id)
	} else {
		_, err = s.pool.Exec(ctx, `UPDATE alerts SET attempts = attempts + 1, last_error = $1, next_attempt_at = $2 WHERE id = $3`, why, next, id)
	}
	if err != nil {
		return fmt.Errorf("record the failure of alert %d: %w", id, err)
	}
	return nil
}

// nullTime is t for a nullable column: NULL for the zero time.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func fromNull(t pgtype.Timestamptz) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

// runColumns are the columns a run is read from, in scanRun's order.
const runColumns = `id, job_id, status, attempt, triggered_by, started_at, finished_at, duration_ms, output, truncated, exit_code, error`

// scanRun reads a run's row.
func scanRun(row pgx.CollectableRow) (*store.Run, error) {
	r := &store.Run{}
	var finished *time.Time
	var duration *int64
	var exit *int32
	var output []byte
	if err := row.Scan(&r.ID, &r.JobID, &r.Status, &r.Attempt, &r.TriggeredBy, &r.StartedAt, &finished, &duration, &output, &r.Truncated, &exit, &r.Error); err != nil {
		return nil, err
	}
	r.StartedAt = r.StartedAt.UTC()
	if finished != nil {
		r.FinishedAt = finished.UTC()
	}
	if duration != nil {
		d := time.Duration(*duration) * time.Millisecond
		r.Duration = &d
	}
	if exit != nil {
		e := int(*exit)
		r.ExitCode = &e
	}
	r.Output = string(output)
	return r, nil
}

// queryRuns returns the runs a query selects.
func (s *DB) queryRuns(ctx context.Context, query string, args ...any) ([]*store.Run, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read the runs: %w", err)
	}
	runs, err := pgx.CollectRows(rows, scanRun)
	if err != nil {
		return nil, fmt.Errorf("read the runs: %w", err)
	}
	return runs, nil
}

// Jobs returns every job's row, by id.
func (s *DB) Jobs(ctx context.Context) ([]*store.Job, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, machine, health, updated_at FROM jobs ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("read the jobs: %w", err)
	}
	jobs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*store.Job, error) {
		j := &store.Job{}
		var machine string
		if err := row.Scan(&j.ID, &machine, &j.Health, &j.UpdatedAt); err != nil {
			return nil, err
		}
		j.Machine, j.UpdatedAt = []byte(machine), j.UpdatedAt.UTC()
		return j, nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the jobs: %w", err)
	}
	return jobs, nil
}

// Runs returns a job's last limit runs, newest first.
func (s *DB) Runs(ctx context.Context, jobID string, limit int) ([]*store.Run, error) {
	return s.queryRuns(ctx, `SELECT `+runColumns+` FROM runs WHERE job_id = $1 ORDER BY seq DESC LIMIT $2`, jobID, limit)
}

// Run returns one run, or nil when there is none of that id.
func (s *DB) Run(ctx context.Context, id string) (*store.Run, error) {
	runs, err := s.queryRuns(ctx, `SELECT `+runColumns+` FROM runs WHERE id = $1`, id)
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	return runs[0], nil
}

// RunningRuns returns the runs marked running, oldest first.
func (s *DB) RunningRuns(ctx context.Context) ([]*store.Run, error) {
	return s.queryRuns(ctx, `SELECT `+runColumns+` FROM runs WHERE status = 'running' ORDER BY seq`)
}

// LastRuns returns the newest run of every job that has one: one look-up
// of runs_by_job for each job's row.
func (s *DB) LastRuns(ctx context.Context) ([]*store.Run, error) {
	return s.queryRuns(ctx, `SELECT `+runColumns+` FROM (SELECT last.* FROM jobs j CROSS JOIN LATERAL
		(SELECT * FROM runs r WHERE r.job_id = j.id ORDER BY seq DESC LIMIT 1) last) runs ORDER BY seq`)
}
