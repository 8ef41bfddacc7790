package thread_test

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// start returns a new thread, not yet saved.
func start(id string) *threadwire.Thread {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &threadwire.Thread{Version: threadwire.Version, ID: id, Created: now, Updated: now,
		Provider: "anthropic", Model: "m", Workspace: "/w"}
}

// round changes th as a round of the agent does: a reply with a tool
// call, its result (of size bytes), a new state, tokens counted; every
// fifth round ends a turn.
func round(th *threadwire.Thread, n, size int) {
	msg := func(v map[string]any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return b
	}
	th.Messages = append(th.Messages,
		msg(map[string]any{"role": "assistant", "content": fmt.Sprintf("Round %d.", n),
			"tool_calls": []any{map[string]any{"id": fmt.Sprint("c", n), "name": "bash", "arguments": map[string]string{"command": "ls"}}}}),
		msg(map[string]any{"role": "tool", "tool_call_id": fmt.Sprint("c", n), "content": strings.Repeat("x", size)}))
	th.State = msg(map[string]any{"format": 1, "state": map[string]any{"kind": "calling_llm", "retries": n % 3}})
	th.Updated = th.Updated.Add(time.Second)
	// The model changes at rounds 5, 20 and 40 (/model): the ledger's
	// entries of each model's usage read back too.
	model := "model-a"
	if n >= 5 && n < 20 || n >= 40 {
		model = "model-b"
	}
	th.Ledger.AddOf("anthropic", model, chat.Usage{InputTokens: 100 * n, OutputTokens: n})
	if n%5 == 0 {
		th.Ledger.EndTurn()
	}
	th.LogChain = fmt.Sprintf("%064x", n)
	th.QueuedInput = nil
	if n%7 == 0 {
		th.QueuedInput = []string{fmt.Sprint("typed at ", n)}
	}
}

// loaded loads thread id through a store of its own, as another process
// would.
func loaded(t *testing.T, s *thread.Store, id string) *threadwire.Thread {
	t.Helper()
	other, err := thread.NewStore(s.Dir())
	require.NoError(t, err)
	th, err := other.Load(id)
	require.NoError(t, err)
	return th
}

// clone returns a deep copy of th, as the journal holds it.
func clone(t *testing.T, th *threadwire.Thread) *threadwire.Thread {
	t.Helper()
	b, err := json.Marshal(th)
	require.NoError(t, err)
	var c threadwire.Thread
	require.NoError(t, json.Unmarshal(b, &c))
	return &c
}

// TestJournalReadsBackIdentical saves a thread through its journal after
// every change — rounds, a change of the queue alone, a resume through
// Open — and
// loads it after each: it reads back identical to the thread in memory.
func TestJournalReadsBackIdentical(t *testing.T) {
	s := newStore(t)
	th := start("t1")
	j, err := s.Create(th)
	require.NoError(t, err)
	assert.Equal(t, th, loaded(t, s, "t1"), "a new thread")

	steps := []struct {
		name   string
		change func(t *testing.T)
	}{
		{"rounds", func(t *testing.T) {
			for n := 1; n <= 12; n++ {
				round(th, n, 100)
				require.NoError(t, j.Save(th))
				require.Equal(t, th, loaded(t, s, "t1"), "after round %d", n)
			}
		}},
		{"a save that changes nothing but the queue", func(t *testing.T) {
			th.QueuedInput = []string{"one", "two"}
			require.NoError(t, j.Save(th))
		}},
		{"cut back, then rounds added", func(t *testing.T) {
			keep := len(th.Messages) - 5
			j.Cut(keep)
			j.Cut(keep + 2) // the lowest cut wins
			th.Messages = th.Messages[:keep:keep]
			round(th, 100, 20)
			require.NoError(t, j.Save(th))
			require.Equal(t, th, loaded(t, s, "t1"), "the cut and the round after it")
			j.Cut(0)
			th.Messages = nil
			require.NoError(t, j.Save(th))
			require.Equal(t, th, loaded(t, s, "t1"), "everything cut")
			round(th, 101, 20)
			require.NoError(t, j.Save(th))
		}},
		{"resumed", func(t *testing.T) {
			require.NoError(t, j.Close())
			var again *threadwire.Thread
			again, j, err = s.Open("t1")
			require.NoError(t, err)
			assert.Zero(t, j.Repaired())
			require.Equal(t, th, again)
			th = again
			round(th, 13, 10)
			require.NoError(t, j.Save(th))
		}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.change(t)
			require.Equal(t, th, loaded(t, s, "t1"))
		})
	}
	require.NoError(t, j.Close())

	fi, err := os.Stat(s.Path("t1"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "threads hold code and conversations")
}

// TestJournalErrors checks the saves a journal refuses.
func TestJournalErrors(t *testing.T) {
	s := newStore(t)
	th := start("t1")
	j, err := s.Create(th)
	require.NoError(t, err)
	defer j.Close()
	round(th, 1, 10)
	require.NoError(t, j.Save(th))

	_, err = s.Create(start("t1"))
	require.ErrorContains(t, err, "resume it with -resume t1", "a thread is created once")
	require.ErrorContains(t, j.Save(&threadwire.Thread{ID: "t1"}), "fewer than the 2 saved and kept: call Cut")
}

// saveRounds creates thread id and saves rounds 1 to n of it; it returns
// the thread and the journal's length after each save.
func saveRounds(t testing.TB, s *thread.Store, id string, n, size int) (*threadwire.Thread, []int64) {
	t.Helper()
	th := start(id)
	j, err := s.Create(th)
	require.NoError(t, err)
	defer j.Close()
	var sizes []int64
	for r := 1; r <= n; r++ {
		round(th, r, size)
		require.NoError(t, j.Save(th))
		fi, err := os.Stat(s.Path(id))
		require.NoError(t, err)
		sizes = append(sizes, fi.Size())
	}
	return th, sizes
}

// TestJournalTail damages the end of a journal as a crash in the middle
// of an append can: Load leaves the last record out, Open removes it and
// says where, and the thread goes on from the save before it.
func TestJournalTail(t *testing.T) {
	tests := []struct {
		name string
		// damage changes the journal, whose last record starts at last.
		damage func(data []byte, last int) []byte
	}{
		{"cut in the middle", func(d []byte, last int) []byte { return d[:last+(len(d)-last)/2] }},
		{"without its newline", func(d []byte, last int) []byte { return d[:len(d)-1] }},
		{"only its first byte", func(d []byte, last int) []byte { return d[:last+1] }},
		{"zeros in place of its end", func(d []byte, last int) []byte {
			for i := last + 20; i < len(d)-1; i++ {
				d[i] = 0
			}
			return d
		}},
		{"a byte changed", func(d []byte, last int) []byte { d[len(d)-5] ^= 1; return d }},
		{"a second line cut short after it", func(d []byte, last int) []byte { return append(d, `0000`...) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			want, sizes := saveRounds(t, s, "t1", 4, 50)
			before := clone(t, want)
			data, err := os.ReadFile(s.Path("t1"))
			require.NoError(t, err)
			last := int(sizes[len(sizes)-2])
			if tt.name == "a second line cut short after it" {
				last = len(data) // the sound last record stays
			} else {
				// The thread as the save before the last left it.
				var th *threadwire.Thread
				th, _ = saveRounds(t, newStore(t), "t1", 3, 50)
				before = th
			}
			damaged := tt.damage(data, last)
			require.NoError(t, os.WriteFile(s.Path("t1"), damaged, 0o600))

			got, err := s.Load("t1")
			require.NoError(t, err)
			assert.Equal(t, before, got, "Load leaves the damaged record out")
			after, err := os.ReadFile(s.Path("t1"))
			require.NoError(t, err)
			assert.Equal(t, damaged, after, "Load changes nothing")

			got, j, err := s.Open("t1")
			require.NoError(t, err)
			defer j.Close()
			assert.Equal(t, before, got)
			assert.Equal(t, thread.Repair{Offset: int64(last), Bytes: int64(len(damaged) - last)}, j.Repaired())
			round(got, 9, 10)
			require.NoError(t, j.Save(got))
			assert.Equal(t, got, loaded(t, s, "t1"), "the journal goes on after the repair")
		})
	}
}

// TestJournalDamaged damages a journal before its last record: it is
// refused, naming the file and the offset of the damaged record.
func TestJournalDamaged(t *testing.T) {
	tests := []struct {
		name   string
		damage func(data []byte, sizes []int64) ([]byte, int64)
		want   string
	}{
		{"a byte of the second record changed", func(d []byte, sizes []int64) ([]byte, int64) {
			d[sizes[0]+30] ^= 1
			return d, sizes[0]
		}, "checksum mismatch"},
		{"a newline lost", func(d []byte, sizes []int64) ([]byte, int64) {
			return append(d[:sizes[1]-1:sizes[1]-1], d[sizes[1]:]...), sizes[0]
		}, "checksum mismatch"},
		{"the first record changed", func(d []byte, sizes []int64) ([]byte, int64) {
			d[3] ^= 1
			return d, 0
		}, "checksum mismatch"},
		{"a record left out", func(d []byte, sizes []int64) ([]byte, int64) {
			return append(d[:sizes[1]:sizes[1]], d[sizes[2]:]...), sizes[1]
		}, "a step after message 6 of a thread of 4 messages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			_, sizes := saveRounds(t, s, "t1", 5, 50)
			data, err := os.ReadFile(s.Path("t1"))
			require.NoError(t, err)
			damaged, off := tt.damage(data, sizes)
			require.NoError(t, os.WriteFile(s.Path("t1"), damaged, 0o600))
			_, err = s.Load("t1")
			require.ErrorIs(t, err, thread.ErrDamaged)
			assert.ErrorContains(t, err, fmt.Sprintf("%s at offset %d", s.Path("t1"), off))
			assert.ErrorContains(t, err, tt.want)
			_, _, err = s.Open("t1")
			require.ErrorIs(t, err, thread.ErrDamaged)
			after, err := os.ReadFile(s.Path("t1"))
			require.NoError(t, err)
			assert.Equal(t, damaged, after, "a damaged journal is left as it is")
		})
	}
}

// TestLoadErrors loads threads that are missing, of another format or
// misnamed.
func TestLoadErrors(t *testing.T) {
	s := newStore(t)
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), "old.json"), []byte(`{"version":2,"id":"old"}`), 0o600))
	for _, id := range []string{"future", "renamed"} {
		th := start(id)
		if id == "future" {
			th.Version = 99
		}
		j, err := s.Create(th)
		require.NoError(t, err)
		require.NoError(t, j.Close())
	}
	require.NoError(t, os.Rename(s.Path("renamed"), filepath.Join(s.Dir(), "other.journal")))
	require.NoError(t, os.WriteFile(s.Path("empty"), nil, 0o600))
	misspelled := `{"kind":"thread","thraed":{}}`
	line := fmt.Sprintf("%08x %s\n", crc32.Checksum([]byte(misspelled), crc32.MakeTable(crc32.Castagnoli)), misspelled)
	require.NoError(t, os.WriteFile(s.Path("misspelled"), []byte(line), 0o600))
	tests := []struct {
		id, want string
		is       error
	}{
		{"missing", "thread not found", thread.ErrNotFound},
		{"../etc/passwd", "bad thread ID", nil},
		{"", "bad thread ID", nil},
		{"old", "continue it with the agent that saved it", thread.ErrOldFormat},
		{"future", "format version 99", nil},
		{"other", `the journal says it is thread "renamed"`, nil},
		{"empty", "is empty", thread.ErrDamaged},
		{"misspelled", `at offset 0 (record 1): json: unknown field "thraed"`, thread.ErrDamaged},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			_, err := s.Load(tt.id)
			require.ErrorContains(t, err, tt.want)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
		})
	}
}

// TestJournalCompacts saves a long thread whose records repeat a large
// state: the journal is compacted now and then, so that it stays within
// about twice the thread and the slack, and reads back identical.
func TestJournalCompacts(t *testing.T) {
	s := newStore(t)
	th := start("t1")
	j, err := s.Create(th)
	require.NoError(t, err)
	defer j.Close()
	bigState := json.RawMessage(`{"format":1,"state":{"kind":"executing_tools","x":"` + strings.Repeat("s", 20<<10) + `"}}`)
	shrank := 0
	var prev int64
	for n := 1; n <= 300; n++ {
		round(th, n, 100)
		th.State = bigState
		require.NoError(t, j.Save(th))
		fi, err := os.Stat(s.Path("t1"))
		require.NoError(t, err)
		if fi.Size() < prev {
			shrank++
		}
		prev = fi.Size()
		require.Less(t, fi.Size(), int64(3<<20), "round %d: the journal grows without bound", n)
	}
	assert.Positive(t, shrank, "the journal was compacted")
	assert.Equal(t, th, loaded(t, s, "t1"))
	left, err := filepath.Glob(filepath.Join(s.Dir(), ".*"))
	require.NoError(t, err)
	assert.Empty(t, left, "no temporary file is left behind")
}

// TestJournalGrowsLinearly saves 500 rounds of the same size: no save
// appends more than the saves of rounds 10 to 45 did (every pattern of
// ended turns and queued input among them), give or take the digits of
// the numbers in it, whatever the round.
func TestJournalGrowsLinearly(t *testing.T) {
	_, sizes := saveRounds(t, newStore(t), "t1", 500, 200)
	most := int64(0)
	for r := 10; r < 45; r++ {
		most = max(most, sizes[r]-sizes[r-1])
	}
	for r := 45; r < len(sizes); r++ {
		require.LessOrEqual(t, sizes[r]-sizes[r-1], most+16, "round %d appended %d bytes, rounds 10 to 45 at most %d", r+1, sizes[r]-sizes[r-1], most)
	}
	assert.Less(t, sizes[len(sizes)-1], 500*(most+16)+sizes[0], "the journal is the sum of its rounds")
}

// BenchmarkSaveRound measures saving one round of the agent (two
// messages of about 1 KB, a new state and account of tokens) into the
// journal of a thread at round 10 and at round 200: appending and syncing
// one record, whatever the thread's length. Every ten saves the thread is
// put back to the round measured (outside the timer).
func BenchmarkSaveRound(b *testing.B) {
	for _, at := range []int{10, 200} {
		b.Run(fmt.Sprintf("round=%d", at), func(b *testing.B) {
			s, err := thread.NewStore(b.TempDir())
			require.NoError(b, err)
			base, _ := saveRounds(b, s, "t1", at, 1000)
			data, err := os.ReadFile(s.Path("t1"))
			require.NoError(b, err)
			var (
				th *threadwire.Thread
				j  *thread.Journal
				n  int
			)
			reset := func() {
				if j != nil {
					require.NoError(b, j.Close())
				}
				require.NoError(b, os.WriteFile(s.Path("t1"), data, 0o600))
				th, j, err = s.Open("t1")
				require.NoError(b, err)
				n = at
			}
			reset()
			require.Len(b, th.Messages, len(base.Messages))
			for b.Loop() {
				if n == at+10 {
					b.StopTimer()
					reset()
					b.StartTimer()
				}
				n++
				round(th, n, 1000)
				if err := j.Save(th); err != nil {
					b.Fatal(err)
				}
			}
			require.NoError(b, j.Close())
		})
	}
}

// TestList lists the threads of a store: those with a journal, not their
// event logs, lock files or the files of an earlier format.
func TestList(t *testing.T) {
	s := newStore(t)
	for _, name := range []string{"b.events.jsonl", "a.lock", "old.json", ".c.journal.fsmgen-tmp-1"} {
		require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), name), nil, 0o600))
	}
	for _, id := range []string{"b", "a"} {
		j, err := s.Create(start(id))
		require.NoError(t, err)
		require.NoError(t, j.Close())
	}
	ids, err := s.List()
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, ids)
}

// TestJournalFirstPrompt: a first prompt set after the thread was created
// (a thread saved before it was kept, resumed) is written with the next
// step, once, and read back after later steps and a reopening.
func TestJournalFirstPrompt(t *testing.T) {
	t.Parallel()
	s, err := thread.NewStore(t.TempDir())
	require.NoError(t, err)
	th := start("fp")
	round(th, 1, 10)
	j, err := s.Create(th)
	require.NoError(t, err)
	assert.Empty(t, loaded(t, s, "fp").FirstPrompt)

	th.FirstPrompt = "FIRST-PROMPT-TEXT"
	for n := 2; n < 5; n++ {
		round(th, n, 10)
		require.NoError(t, j.Save(th))
		assert.Equal(t, "FIRST-PROMPT-TEXT", loaded(t, s, "fp").FirstPrompt)
	}
	require.NoError(t, j.Close())
	raw, err := os.ReadFile(s.Path("fp"))
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(raw), "FIRST-PROMPT-TEXT"), "written once: %s", raw)

	got, j, err := s.Open("fp")
	require.NoError(t, err)
	assert.Equal(t, "FIRST-PROMPT-TEXT", got.FirstPrompt)
	round(got, 5, 10)
	require.NoError(t, j.Save(got))
	require.NoError(t, j.Close())
	raw, err = os.ReadFile(s.Path("fp"))
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(raw), "FIRST-PROMPT-TEXT"), "not again once reopened")
	assert.Equal(t, "FIRST-PROMPT-TEXT", loaded(t, s, "fp").FirstPrompt)
}

// journalLines returns a journal of the records, each its JSON, with
// their checksums.
func journalLines(records ...string) []byte {
	var b strings.Builder
	for _, r := range records {
		fmt.Fprintf(&b, "%08x %s\n", crc32.Checksum([]byte(r), crc32.MakeTable(crc32.Castagnoli)), r)
	}
	return []byte(b.String())
}

// TestJournalHookNote: a journal an agent wrote before the hook note was
// kept (no hook_note in its records) loads without one; a note saved
// with a step is read back, also once the journal is reopened, and a
// step without one clears it (the next message took it); a misspelled
// field is refused, not dropped.
func TestJournalHookNote(t *testing.T) {
	t.Parallel()
	s, err := thread.NewStore(t.TempDir())
	require.NoError(t, err)
	older := journalLines(
		`{"kind":"thread","thread":{"version":3,"id":"old1","created":"2026-01-02T03:04:05Z","updated":"2026-01-02T03:04:06Z","provider":"anthropic","model":"m","workspace":"/w","messages":[{"content":"Hi.","role":"user"},{"content":"Hello.","role":"assistant"}],"ledger":{"total":{"input_tokens":100,"output_tokens":1},"turn":{"input_tokens":100,"output_tokens":1},"replies":1}}}`,
		`{"kind":"step","base":2,"state":{"format":1,"state":{"kind":"waiting_for_user_input"}},"total":{"input_tokens":100,"output_tokens":1},"turn":{"input_tokens":100,"output_tokens":1},"replies":1,"updated":"2026-01-02T03:04:07Z","provider":"anthropic","model":"m","workspace":"/w"}`)
	require.NoError(t, os.WriteFile(s.Path("old1"), older, 0o600))
	th := loaded(t, s, "old1")
	assert.Empty(t, th.HookNote, "a thread saved before the note was kept")
	assert.Len(t, th.Messages, 2)

	got, j, err := s.Open("old1")
	require.NoError(t, err)
	got.HookNote = "[what the end-of-turn hooks gave after your last reply]\nlint: 1 issue"
	require.NoError(t, j.Save(got))
	assert.Equal(t, got.HookNote, loaded(t, s, "old1").HookNote)
	require.NoError(t, j.Close())

	again, j, err := s.Open("old1")
	require.NoError(t, err)
	assert.Equal(t, got.HookNote, again.HookNote, "reopened")
	again.HookNote = ""
	round(again, 3, 10)
	require.NoError(t, j.Save(again))
	require.NoError(t, j.Close())
	assert.Empty(t, loaded(t, s, "old1").HookNote, "a step without the note clears it")

	misspelled := journalLines(`{"kind":"thread","thread":{"version":3,"id":"bad","hook_notes":"x","ledger":{}}}`)
	require.NoError(t, os.WriteFile(s.Path("bad"), misspelled, 0o600))
	_, err = s.Load("bad")
	assert.ErrorContains(t, err, `unknown field "hook_notes"`)
}
