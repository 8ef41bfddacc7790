package store

import (
	"context"
	"time"
)

// Keys is the part of a Store that keeps the API's keys: named bearer
// tokens, each with a scope, of which only the SHA-256 is kept. Every
// instance of the server reads them from the store, so a key revoked
// through one instance is refused by all.
type Keys interface {
	// AddKey adds k unless a key of its ID exists; it reports whether it
	// did.
	AddKey(ctx context.Context, k *Key) (bool, error)
	// ReplaceKey stores k as the key of its ID: it adds it, or replaces
	// every field of the key stored under that ID (a revoked key so
	// lives again, with k's hash).
	ReplaceKey(ctx context.Context, k *Key) error
	// KeyByHash returns the key whose Hash is hash, revoked or not, or nil
	// when there is none.
	KeyByHash(ctx context.Context, hash string) (*Key, error)
	// Keys returns every key, the revoked ones too, the oldest first (by
	// CreatedAt, then ID).
	Keys(ctx context.Context) ([]*Key, error)
	// RevokeKey marks key id revoked at at, unless it is revoked already,
	// and returns it as it is stored then; nil when there is no key id.
	RevokeKey(ctx context.Context, id string, at time.Time) (*Key, error)
	// KeyUsed records that key id was used at at (a time before the one
	// stored changes nothing).
	KeyUsed(ctx context.Context, id string, at time.Time) error
}

// Key is an API key's row.
type Key struct {
	// ID names the key in the API (/api/keys/{id}) and owns the threads
	// pushed with it.
	ID   string
	Name string
	// Scope is admin, read-write or read-only (package server/internal/apikey).
	Scope string
	// Hash is the hex SHA-256 of the key's token: the token itself is
	// never stored.
	Hash       string
	CreatedAt  time.Time
	LastUsedAt time.Time // zero when never used
	RevokedAt  time.Time // zero while the key is valid
}
