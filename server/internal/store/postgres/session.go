package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// DefaultLease is the lease time Open bounds the sessions' transactions
// by when it is not told (WithLease): the server's default, as
// monitorengine.DefaultLease.
const DefaultLease = 15 * time.Second

// Option changes how Open connects.
type Option func(*options)

type options struct {
	lease time.Duration
}

// WithLease tells Open how long the instances' leases last: it bounds
// every transaction of its sessions below that (sessionSettings).
func WithLease(lease time.Duration) Option {
	return func(o *options) { o.lease = lease }
}

// sessionSettings are the settings of every session, given at connection
// (run-time parameters: no round trip). An instance stopped in the middle
// of a transaction (SIGSTOP, a paused VM, a process cut from the network)
// would otherwise hold its row locks — the leases its round fenced, the
// leases it was renewing or claiming — for as long as it is stopped, and
// the claims, which skip locked rows, would never take those shards over.
// So a session idle in a transaction for a third of the lease is ended by
// Postgres (idle_in_transaction_session_timeout), which rolls its
// transaction back and frees its locks before its leases can expire, and
// no statement waits for a lock longer than that either (lock_timeout).
// The transactions of this package are short (a few statements sent back
// to back): only an instance that stopped reaches these bounds. A
// statement's own run time is not bounded: a stopped client does not
// keep a statement running, and reading the monitors of many shards may
// take longer than a third of a lease.
func sessionSettings(lease time.Duration) map[string]string {
	limit := strconv.FormatInt(max(sessionLimit(lease).Milliseconds(), 1), 10) // in milliseconds
	return map[string]string{
		"idle_in_transaction_session_timeout": limit,
		"lock_timeout":                        limit,
	}
}

// sessionLimit is how long a session may sit idle in a transaction, or
// wait for a lock: a third of the lease.
func sessionLimit(lease time.Duration) time.Duration { return lease / 3 }

// idleInTransactionTimeout is Postgres's code for a session it ended
// because it sat idle in a transaction past
// idle_in_transaction_session_timeout.
const idleInTransactionTimeout = "25P03"

// inTx runs f in a transaction on the pool, committed when f returns nil,
// as pgx.BeginFunc does. A transaction Postgres ended because this
// instance paused in it (sessionSettings) is store.ErrPaused as well as
// its error: Postgres's own (SQLSTATE 25P03) when the client read it, or,
// as often, the failed write or read of the closed connection, when the
// transaction had lasted past the session's limit.
func (s *DB) inTx(ctx context.Context, f func(pgx.Tx) error) error {
	start := time.Now()
	err := pgx.BeginFunc(ctx, s.pool, f)
	if err == nil || ctx.Err() != nil {
		return err
	}
	pgErr, fromServer := errors.AsType[*pgconn.PgError](err)
	if fromServer && pgErr.Code == idleInTransactionTimeout || !fromServer && time.Since(start) >= s.limit {
		return fmt.Errorf("%w: %w", store.ErrPaused, err)
	}
	return err
}
