package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
)

// longRounds is how many rounds of tools the session of
// TestLongSessionJournalGrowsLinearly runs.
const longRounds = 500

// TestLongSessionJournalGrowsLinearly runs one turn of longRounds rounds
// of a read_file call, each reading the same file, and notes the
// journal's length at each request of the model: every round appends
// about as many bytes as the early rounds did, whatever the round (issue
// 23 item 9: the thread was rewritten whole at every save, so the bytes
// written grew with the square of the session).
func TestLongSessionJournalGrowsLinearly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"notes.txt": strings.Repeat("a line of notes\n", 20)})
	var (
		mu    sync.Mutex
		sizes []int64
	)
	e.srv.Respond(func(req fakellm.Request) fakellm.Reply {
		mu.Lock()
		defer mu.Unlock()
		var size int64
		if journals, _ := filepath.Glob(filepath.Join(e.threads, "*.journal")); len(journals) == 1 {
			if fi, err := os.Stat(journals[0]); err == nil {
				size = fi.Size()
			}
		}
		sizes = append(sizes, size)
		if len(sizes) > longRounds {
			return fakellm.Reply{Text: "Done."}
		}
		return fakellm.Reply{Text: fmt.Sprintf("Round %04d.", len(sizes)), ToolCalls: []fakellm.ToolCall{
			{ID: fmt.Sprintf("call-%04d", len(sizes)), Name: "read_file", Args: `{"path":"notes.txt"}`}}}
	})
	r := e.run(t, "", "-p", "Read the notes again and again.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, sizes, longRounds+1)
	per := func(round int) int64 { return sizes[round] - sizes[round-1] }
	early := int64(0)
	for round := 2; round <= 11; round++ {
		early = max(early, per(round))
	}
	require.Positive(t, early)
	for round := 12; round <= longRounds; round++ {
		require.LessOrEqual(t, per(round), early+32, "round %d appended %d bytes to the journal, rounds 2 to 11 at most %d", round, per(round), early)
	}
	t.Logf("a round appends %d bytes; the journal holds %d bytes after %d rounds", early, sizes[longRounds], longRounds)
}

// TestJournalTailRepaired cuts the journal's last record short, as a kill
// -9 in the middle of an append leaves it, and resumes the thread: the
// agent removes the record with a message, and the conversation up to the
// save before it goes on.
func TestJournalTailRepaired(t *testing.T) {
	t.Parallel()
	// lastRecord returns the journal's last record, its newline included.
	lastRecord := func(d []byte) []byte { return d[strings.LastIndexByte(string(d[:len(d)-1]), '\n')+1:] }
	tests := []struct {
		name string
		cut  func(data []byte) []byte
	}{
		{"half a record", func(d []byte) []byte { last := lastRecord(d); return append(d, last[:len(last)/2]...) }},
		{"a record without its newline", func(d []byte) []byte { last := lastRecord(d); return append(d, last[:len(last)-1]...) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "One."}, fakellm.Reply{Text: "Two."})
			r := e.run(t, "", "-p", "First.")
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			id := e.onlyThread(t)
			path := filepath.Join(e.threads, id+".journal")
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			cut := tt.cut(data)
			require.NoError(t, os.WriteFile(path, cut, 0o600))

			r = e.run(t, "Second.\n", "-resume", id)
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Contains(t, r.stderr, fmt.Sprintf("agent: the last record of %s (at offset %d, %d bytes) was cut short by a crash and was removed", path, len(data), len(cut)-len(data)))
			assert.Equal(t, []string{"user: First.", "assistant: One.", "user: Second.", "assistant: Two."}, messages(e.state(t, id)))
		})
	}
}

// TestJournalDamageRefused changes a byte of a journal's first record:
// resuming the thread is refused, naming the file and the offset, and the
// journal is left as it was.
func TestJournalDamageRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "One."})
	r := e.run(t, "", "-p", "First.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	id := e.onlyThread(t)
	path := filepath.Join(e.threads, id+".journal")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[20] ^= 1
	require.NoError(t, os.WriteFile(path, data, 0o600))

	r = e.run(t, "", "-resume", id)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, fmt.Sprintf("the thread's journal is damaged: %s at offset 0 (record 1): checksum mismatch", path))
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, data, after)
}

// TestNoLeftovers starts the agent and ends its input before any message,
// and starts it with a workspace that does not exist: the threads folder
// is left empty (issue 23 item 6: failed starts left thread files and
// empty .lock files behind).
func TestNoLeftovers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"no message", nil, 0},
		{"a failed start", []string{"-workspace", "/nonexistent/dir"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, nil)
			r := e.run(t, "", tt.args...)
			require.Equal(t, tt.code, r.code, "stderr:\n%s", r.stderr)
			entries, err := os.ReadDir(e.threads)
			require.NoError(t, err)
			var names []string
			for _, de := range entries {
				names = append(names, de.Name())
			}
			assert.Empty(t, names, "the threads folder holds what the session left")
		})
	}
}
