package thread_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

func newStore(t *testing.T) *thread.Store {
	t.Helper()
	s, err := thread.NewStore(filepath.Join(t.TempDir(), "a", "threads"))
	require.NoError(t, err)
	return s
}

// TestLock checks that a thread is locked by one agent at a time.
func TestLock(t *testing.T) {
	s := newStore(t)
	unlock, err := s.Lock("t1")
	require.NoError(t, err)
	_, err = s.Lock("t1")
	require.ErrorIs(t, err, thread.ErrLocked)
	other, err := s.Lock("t2")
	require.NoError(t, err, "another thread is not locked")
	other()
	unlock()
	again, err := s.Lock("t1")
	require.NoError(t, err, "an unlocked thread can be locked again")
	again()
	left, err := filepath.Glob(filepath.Join(s.Dir(), "*.lock"))
	require.NoError(t, err)
	assert.Empty(t, left, "unlocking removes the lock file")
}

// TestNewIDIsValidAndUnique checks the IDs NewID makes.
func TestNewIDIsValidAndUnique(t *testing.T) {
	now := time.Now()
	seen := map[string]bool{}
	for range 100 {
		id := thread.NewID(now)
		require.NoError(t, threadwire.CheckID(id))
		require.False(t, seen[id], "duplicate ID %s", id)
		seen[id] = true
	}
}

// TestLockRemovesTemp checks that taking a thread's lock removes what a
// compaction of that thread cut short by a crash left behind, and nothing else.
func TestLockRemovesTemp(t *testing.T) {
	store, err := thread.NewStore(t.TempDir())
	require.NoError(t, err)
	files := map[string]bool{ // name: removed
		".t1.journal.fsmgen-tmp-123":  true,
		".t1.journal.fsmgen-tmp-abc":  true,
		".t2.journal.fsmgen-tmp-123":  false, // another thread's, maybe being compacted
		"t1.journal":                  false,
		"t1.events.jsonl":             false,
		".t1.journalx.fsmgen-tmp-123": false,
		".t1.journal.tmp-123":         false, // not a compaction's: a generic name
	}
	for name := range files {
		require.NoError(t, os.WriteFile(filepath.Join(store.Dir(), name), []byte("partial"), 0o600))
	}
	unlock, err := store.Lock("t1")
	require.NoError(t, err)
	defer unlock()
	for name, removed := range files {
		_, err := os.Stat(filepath.Join(store.Dir(), name))
		if removed {
			assert.ErrorIs(t, err, os.ErrNotExist, "%s is left", name)
		} else {
			assert.NoError(t, err, "%s was removed", name)
		}
	}
}
