package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// A start-up reads every monitor and every job (100,000 of each, say):
// reading the rows is a fair part of its work, so a whole table is read in
// parts, by ranges of its rowid, on as many reader connections as there
// are CPUs (up to readers), and the parts are put together in order.
// Each part is read in a transaction of its own: what is written while
// the table is read may be in some parts and not in others. The engines
// read their tables so when they start, before they write.

// bulkPart is the fewest rows a part is worth reading on a connection of
// its own.
const bulkPart = 2048

// readAll reads table with query, which takes a range of rowids (two
// parameters, the first and the last) and orders by rowid, scanning each
// row with scan; what names the rows in errors.
func readAll[T any](ctx context.Context, s *DB, what, table, query string, scan func(*sql.Rows) (T, error)) ([]T, error) {
	var first, last int64
	if err := s.read.QueryRowContext(ctx, `SELECT ifnull(min(rowid), 0), ifnull(max(rowid), -1) FROM `+table).Scan(&first, &last); err != nil {
		return nil, fmt.Errorf("read the %s: %w", what, err)
	}
	if last < first {
		return nil, nil
	}
	parts := int(min(int64(min(readers, runtime.GOMAXPROCS(0))), (last-first+1)/bulkPart))
	parts = max(parts, 1)
	size := (last - first + int64(parts)) / int64(parts)
	out := make([][]T, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for i := range parts {
		from := first + int64(i)*size
		to := min(from+size-1, last)
		wg.Go(func() { out[i], errs[i] = readRange(ctx, s, query, from, to, scan) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("read the %s: %w", what, err)
	}
	return slices.Concat(out...), nil
}

// readRange reads the rows of query whose rowids are from to to.
func readRange[T any](ctx context.Context, s *DB, query string, from, to int64, scan func(*sql.Rows) (T, error)) ([]T, error) {
	rows, err := s.read.QueryContext(ctx, query, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Monitors returns every monitor, by id.
func (s *DB) Monitors(ctx context.Context) ([]*store.Monitor, error) {
	return readAll(ctx, s, "monitors", "monitors", `SELECT id, slug, name, ping_key, alert_webhook_url, machine, health, last_checkin_at, created_at, updated_at
		FROM monitors WHERE id BETWEEN ? AND ? ORDER BY id`, scanMonitor)
}

// scanMonitor reads a monitor's row.
func scanMonitor(rows *sql.Rows) (*store.Monitor, error) {
	m := &store.Monitor{}
	var machine string
	var last sql.NullString
	var created, updated string
	if err := rows.Scan(&m.ID, &m.Slug, &m.Name, &m.PingKey, &m.AlertWebhookURL, &machine, &m.Health, &last, &created, &updated); err != nil {
		return nil, err
	}
	m.Machine = []byte(machine)
	var err1, err2, err3 error
	m.LastCheckinAt, err1 = parseNull(last)
	m.CreatedAt, err2 = parseTime(created)
	m.UpdatedAt, err3 = parseTime(updated)
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("monitor %s: %w", m.Slug, err)
	}
	return m, nil
}

// Jobs returns every job's row, by id.
func (s *DB) Jobs(ctx context.Context) ([]*store.Job, error) {
	jobs, err := readAll(ctx, s, "jobs", "jobs", `SELECT id, machine, health, updated_at FROM jobs WHERE rowid BETWEEN ? AND ? ORDER BY rowid`, scanJob)
	slices.SortFunc(jobs, func(a, b *store.Job) int { return cmp.Compare(a.ID, b.ID) })
	return jobs, err
}

// scanJob reads a job's row.
func scanJob(rows *sql.Rows) (*store.Job, error) {
	j := &store.Job{}
	var machine, updated string
	if err := rows.Scan(&j.ID, &machine, &j.Health, &updated); err != nil {
		return nil, err
	}
	j.Machine = []byte(machine)
	var err error
	if j.UpdatedAt, err = parseTime(updated); err != nil {
		return nil, fmt.Errorf("job %s: %w", j.ID, err)
	}
	return j, nil
}
