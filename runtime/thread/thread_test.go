package thread_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/runtime/thread"
)

func newStore(t *testing.T) *thread.Store {
	t.Helper()
	s, err := thread.NewStore(filepath.Join(t.TempDir(), "a", "threads"))
	require.NoError(t, err)
	return s
}

// TestSaveLoadRoundTrip saves a thread and loads it back.
func TestSaveLoadRoundTrip(t *testing.T) {
	s := newStore(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	in := &thread.Thread{
		ID: thread.NewID(now), Created: now, Provider: "anthropic", Model: "m", Workspace: "/w",
		State:       json.RawMessage(`{"kind":"calling_llm","conversation":{"id":"x","messages":[{"role":"user","content":"hi","tool_calls":[{"id":"c","name":"n","arguments":{"a": 1}}]}]},"retries":2}`),
		QueuedInput: []string{"next"},
	}
	require.NoError(t, s.Save(in))
	out, err := s.Load(in.ID)
	require.NoError(t, err)
	assert.Equal(t, thread.Version, out.Version)
	assert.Equal(t, in.ID, out.ID)
	assert.Equal(t, []string{"next"}, out.QueuedInput)
	assert.JSONEq(t, string(in.State), string(out.State))

	fi, err := os.Stat(s.Path(in.ID))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "threads hold code and conversations")
	entries, err := os.ReadDir(s.Dir())
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), "tmp-", "no temporary file is left behind")
	}

	in.QueuedInput = nil
	require.NoError(t, s.Save(in))
	out, err = s.Load(in.ID)
	require.NoError(t, err)
	assert.Empty(t, out.QueuedInput, "a save replaces the file")
}

// TestLoadErrors loads threads that are missing, damaged or misnamed.
func TestLoadErrors(t *testing.T) {
	s := newStore(t)
	require.NoError(t, os.WriteFile(s.Path("garbage"), []byte("{not json"), 0o600))
	require.NoError(t, os.WriteFile(s.Path("future"), []byte(`{"version":99,"id":"future"}`), 0o600))
	require.NoError(t, os.WriteFile(s.Path("renamed"), []byte(`{"version":1,"id":"other"}`), 0o600))
	require.NoError(t, os.WriteFile(s.Path("misspelled"), []byte(`{"version":2,"id":"misspelled","queued_inptu":["hi"]}`), 0o600))
	require.NoError(t, os.WriteFile(s.Path("old"), []byte(`{"version":1,"id":"old","state":{"kind":"waiting_for_user_input"}}`), 0o600))
	tests := []struct {
		id, want string
	}{
		{"missing", "thread not found"},
		{"../etc/passwd", "bad thread ID"},
		{"", "bad thread ID"},
		{"garbage", "not a thread file"},
		{"future", "format version 99"},
		{"renamed", `says it is thread "other"`},
		{"misspelled", `unknown field "queued_inptu"`},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			_, err := s.Load(tt.id)
			require.ErrorContains(t, err, tt.want)
		})
	}
	_, err := s.Load("missing")
	assert.ErrorIs(t, err, thread.ErrNotFound)
	old, err := s.Load("old")
	require.NoError(t, err, "a version 1 thread still loads")
	assert.Equal(t, 1, old.Version)
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
}

// TestNewIDIsValidAndUnique checks the IDs NewID makes.
func TestNewIDIsValidAndUnique(t *testing.T) {
	now := time.Now()
	seen := map[string]bool{}
	for range 100 {
		id := thread.NewID(now)
		require.NoError(t, thread.CheckID(id))
		require.False(t, seen[id], "duplicate ID %s", id)
		seen[id] = true
	}
}

// TestLockRemovesTemp checks that taking a thread's lock removes what a
// save of that thread cut short by a crash left behind, and nothing else.
func TestLockRemovesTemp(t *testing.T) {
	store, err := thread.NewStore(t.TempDir())
	require.NoError(t, err)
	files := map[string]bool{ // name: removed
		".t1.json.fsmgen-tmp-123":  true,
		".t1.json.fsmgen-tmp-abc":  true,
		".t2.json.fsmgen-tmp-123":  false, // another thread's, maybe being saved
		"t1.json":                  false,
		"t1.events.jsonl":          false,
		".t1.jsonx.fsmgen-tmp-123": false,
		".t1.json.tmp-123":         false, // not a save's: a generic name
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

// BenchmarkSave measures a durable save (write, fsync, rename, directory
// fsync) of a thread of about 100 KB, which a round of tools now waits for
// before it starts.
func BenchmarkSave(b *testing.B) {
	store, err := thread.NewStore(b.TempDir())
	require.NoError(b, err)
	state, err := json.Marshal(map[string]string{"conversation": strings.Repeat("x", 100<<10)})
	require.NoError(b, err)
	th := &thread.Thread{Version: thread.Version, ID: "bench", State: state}
	b.SetBytes(int64(len(state)))
	for b.Loop() {
		require.NoError(b, store.Save(th))
	}
}
