package store

import (
	"context"
	"time"
)

// Threads is the part of a Store that keeps the coding agent's synced
// threads: plain rows, each the newest revision an agent pushed, which any
// instance of the server reads and writes (no shard owns them). Each
// belongs to the API key that pushed it (its Owner): the threads of two
// keys are apart, even those of one ID.
type Threads interface {
	// PutThread stores t unless the store holds the same revision or a
	// newer one of t.Owner's thread t.ID: it returns ThreadStored, or ThreadUnchanged when the
	// stored revision is t's with the same digest, or ThreadStale (with
	// the stored revision) when the stored revision is newer, or the same
	// with another digest. Only ThreadStored writes anything.
	PutThread(ctx context.Context, t *Thread) (PutOutcome, int64, error)
	// Threads returns up to limit threads of owner without their Body,
	// the most recently updated first (by the thread's own Updated time,
	// then by ID, descending).
	Threads(ctx context.Context, owner string, limit int) ([]*Thread, error)
	// Thread returns owner's thread id with its Body, or nil when owner
	// has none of that id.
	Thread(ctx context.Context, owner, id string) (*Thread, error)
}

// Thread is a synced thread's row: what the list shows, derived from the
// thread when it was pushed, and the thread itself.
type Thread struct {
	// Owner is the ID of the API key that pushed the thread.
	Owner string
	ID    string
	// Revision orders the pushes of a thread: a push is applied only
	// over an older revision.
	Revision int64
	// Digest is the hex SHA-256 of Body: the same revision pushed again
	// with the same digest is the same push.
	Digest                     string
	Workspace, Provider, Model string
	// FirstPrompt is the thread's first user message, cut short.
	FirstPrompt string
	// Tokens counts the input and output tokens of the thread's replies.
	Tokens int64
	// Messages counts the conversation's messages.
	Messages int
	// Created and Updated are the thread's own times (the agent's clock);
	// SyncedAt is when the server stored this revision (its clock).
	Created, Updated, SyncedAt time.Time
	// Body is the thread as the agent pushed it (JSON); nil in a list.
	Body []byte
}

// PutOutcome is what PutThread did.
type PutOutcome int

// What PutThread did.
const (
	// ThreadStored: the revision was stored (the thread is new, or the
	// stored revision was older).
	ThreadStored PutOutcome = iota + 1
	// ThreadUnchanged: the store holds this very revision already.
	ThreadUnchanged
	// ThreadStale: the store holds a newer revision (or this revision
	// with other content); nothing was written.
	ThreadStale
)

// ThreadOutcome decides a push of revision rev with digest over the
// stored revision and digest (has: there is one): the rule every store
// applies.
func ThreadOutcome(has bool, storedRev int64, storedDigest string, rev int64, digest string) PutOutcome {
	switch {
	case !has || storedRev < rev:
		return ThreadStored
	case storedRev == rev && storedDigest == digest:
		return ThreadUnchanged
	}
	return ThreadStale
}
