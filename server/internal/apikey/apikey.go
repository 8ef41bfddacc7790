// Package apikey makes and checks the server's API keys.
//
// A key is a bearer token ("fsm_" and 256 random bits in base64url) with
// a name and a scope: read-only (GET and HEAD), read-write (every method
// of the monitors', jobs' and threads' API) or admin (read-write, and the
// keys themselves: /api/keys). The store keeps the SHA-256 of each token
// (store.Keys), never the token, which is shown once, when the key is
// made. The server makes the key admin on its first start, and again with
// -reset-token; the others are made and revoked through the API.
//
// Every instance of the server checks each request's token against the
// store, trusting what it read for at most TTL: a key revoked (or reset)
// through one instance is refused by every instance within TTL.
package apikey

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// The scopes, from the narrowest.
const (
	ScopeReadOnly  = "read-only"
	ScopeReadWrite = "read-write"
	ScopeAdmin     = "admin"
)

// Scopes lists the scopes, the narrowest first.
var Scopes = []string{ScopeReadOnly, ScopeReadWrite, ScopeAdmin}

// AdminID is the ID (and name) of the key the server makes on its first
// start and makes anew with -reset-token. Earlier servers' token became
// that key, and the threads pushed with it its threads.
const AdminID = "admin"

// TTL is how long a Checker trusts what it read of a key.
const TTL = time.Second

// UsedEvery is how often a Checker records a key's last use: the last use
// the API shows is right to within it.
const UsedEvery = time.Minute

// Allows reports whether a key of scope may do what needs the scope need.
func Allows(scope, need string) bool { return rank(scope) >= rank(need) && rank(need) > 0 }

func rank(scope string) int {
	switch scope {
	case ScopeReadOnly:
		return 1
	case ScopeReadWrite:
		return 2
	case ScopeAdmin:
		return 3
	}
	return 0
}

// Valid reports whether scope is one of Scopes.
func Valid(scope string) bool { return rank(scope) > 0 }

// Hash returns the hex SHA-256 of token: what the store keeps of it.
func Hash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// NewToken returns a new token: "fsm_" and 256 random bits.
func NewToken() string {
	var raw [32]byte
	rand.Read(raw[:])
	return "fsm_" + base64.RawURLEncoding.EncodeToString(raw[:])
}

// NewID returns an ID for a new key: "key_" and 64 random bits in hex.
func NewID() string {
	var raw [8]byte
	rand.Read(raw[:])
	return "key_" + hex.EncodeToString(raw[:])
}

// Make returns a new key of that ID, name and scope, created at now, and
// its token.
func Make(id, name, scope string, now time.Time) (string, *store.Key) {
	token := NewToken()
	return token, &store.Key{ID: id, Name: name, Scope: scope, Hash: Hash(token), CreatedAt: now}
}

// Bootstrap makes the admin key when the store has none (a first start),
// or anew when reset says so: then the admin key's old token is refused
// from now on (by every instance within TTL), revoked or not, and the key
// keeps its ID, so the threads pushed with the old token stay its threads.
// It returns the token it made, or "" when it made none.
func Bootstrap(ctx context.Context, st store.Keys, reset bool, now time.Time) (string, error) {
	token, k := Make(AdminID, AdminID, ScopeAdmin, now)
	if reset {
		if err := st.ReplaceKey(ctx, k); err != nil {
			return "", err
		}
		return token, nil
	}
	added, err := st.AddKey(ctx, k)
	if err != nil || !added {
		return "", err
	}
	return token, nil
}

// Checker finds the keys of tokens in the store, trusting what it read of
// a key for TTL, and records each key's last use (every UsedEvery).
type Checker struct {
	store store.Keys
	now   func() time.Time
	log   *slog.Logger

	mu    sync.Mutex
	cache map[string]cached    // by hash
	used  map[string]time.Time // key ID -> the last use recorded
}

// cached is a key as read at a time (nil: none had the hash).
type cached struct {
	key  *store.Key
	read time.Time
}

// maxCached bounds the cache: past it, what is stale is dropped.
const maxCached = 4096

// NewChecker returns a Checker of the keys in st, on the clock now
// (time.Now when nil), logging to log (slog.Default when nil).
func NewChecker(st store.Keys, now func() time.Time, log *slog.Logger) *Checker {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	return &Checker{store: st, now: now, log: log, cache: map[string]cached{}, used: map[string]time.Time{}}
}

// Check returns the key of token, revoked or not, or nil when no key has
// it; an error only when the store cannot be read.
func (c *Checker) Check(ctx context.Context, token string) (*store.Key, error) {
	return c.Lookup(ctx, Hash(token))
}

// Lookup returns the key whose token hashes to hash (Hash), as Check.
func (c *Checker) Lookup(ctx context.Context, hash string) (*store.Key, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.cache[hash]
	c.mu.Unlock()
	if !ok || now.Sub(e.read) >= TTL || now.Before(e.read) {
		k, err := c.store.KeyByHash(ctx, hash)
		if err != nil {
			return nil, err
		}
		e = cached{key: k, read: now}
		c.remember(hash, e)
	}
	k := e.key
	// The store found the key by its hash; the comparison is made again,
	// in constant time, so that no shortcut of a store's lookup decides.
	if k == nil || subtle.ConstantTimeCompare([]byte(k.Hash), []byte(hash)) != 1 {
		return nil, nil
	}
	if k.RevokedAt.IsZero() {
		c.recordUse(ctx, k.ID, now)
	}
	out := *k
	return &out, nil
}

// remember caches e under hash. A hash no key has is not kept: tokens
// made up would fill the cache.
func (c *Checker) remember(hash string, e cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.key == nil {
		delete(c.cache, hash)
		return
	}
	if len(c.cache) >= maxCached {
		for h, old := range c.cache {
			if e.read.Sub(old.read) >= TTL {
				delete(c.cache, h)
			}
		}
		if len(c.cache) >= maxCached {
			clear(c.cache)
		}
	}
	c.cache[hash] = e
}

// Forget drops what the checker read of the key of hash: this instance
// reads it again at its next use (the one that revoked it refuses it at
// once).
func (c *Checker) Forget(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.cache, hash)
}

// recordUse stores the key's last use, unless this checker recorded one
// within UsedEvery. A failure is logged: the request goes on.
func (c *Checker) recordUse(ctx context.Context, id string, now time.Time) {
	c.mu.Lock()
	last, ok := c.used[id]
	due := !ok || now.Sub(last) >= UsedEvery || now.Before(last)
	if due {
		c.used[id] = now
	}
	c.mu.Unlock()
	if !due {
		return
	}
	// The write is the server's, not the request's: a client that
	// leaves does not cancel it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := c.store.KeyUsed(ctx, id, now); err != nil {
		c.log.Warn("the last use of an API key could not be recorded", "key", id, "err", err)
	}
}
