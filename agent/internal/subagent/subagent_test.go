package subagent

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/internal/gittest"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// testKey is the API key of the tests, redacted from all the child says.
const testKey = "sk-test-SUBAGENT-KEY-0a1b2c3d"

// fixture is a runner over a fake LLM server, a workspace holding
// notes.txt and a threads folder.
type fixture struct {
	srv    *fakellm.Server
	store  *thread.Store
	runner *Runner

	mu       sync.Mutex
	progress []string                        // the messages of the progress reports
	used     chat.Ledger                     // what Usage was given
	synced   map[string][]*threadwire.Thread // the saves Sync's hooks got, by thread
}

func newFixture(t *testing.T, maxCalls int, replies ...fakellm.Reply) *fixture {
	t.Helper()
	f := &fixture{srv: fakellm.New(t, fakellm.Anthropic, replies...), synced: map[string][]*threadwire.Thread{}}
	dir := gittest.NewRepo(t, map[string]string{"notes.txt": "hello from the notes; the key is " + testKey + "\n"})
	ws, err := tools.NewWorkspace(dir)
	require.NoError(t, err)
	set, err := tools.NewSet(tools.Options{}, tools.ReadFile(ws), tools.ListFiles(ws))
	require.NoError(t, err)
	bc := behavior.DefaultConfig()
	bc.Model, bc.System, bc.Tools, bc.MutatingTools = "fake-model", Prompt, set.Specs(), set.MutatingNames()
	b, err := behavior.New(bc)
	require.NoError(t, err)
	provider, err := llm.New(llm.NameAnthropic, llm.Config{APIKey: testKey, BaseURL: f.srv.BaseURL()})
	require.NoError(t, err)
	f.store, err = thread.NewStore(t.TempDir())
	require.NoError(t, err)
	f.runner, err = New(Config{Behavior: b, Provider: provider, Tools: set, Workspace: ws.Root(),
		Store: f.store, Parent: "parent-thread", Secrets: []string{testKey}, MaxCalls: maxCalls,
		Usage: func(_ context.Context, l chat.Ledger) { f.mu.Lock(); f.used = l; f.mu.Unlock() },
		Sync: func(id string) func(*threadwire.Thread) {
			return func(t *threadwire.Thread) {
				c := *t
				f.mu.Lock()
				f.synced[id] = append(f.synced[id], &c)
				f.mu.Unlock()
			}
		}})
	require.NoError(t, err)
	return f
}

// run runs one task as call c1 would.
func (f *fixture) run(ctx context.Context) (string, error) {
	set, err := tools.NewSet(tools.Options{Timeout: time.Minute}, f.runner.Tool())
	if err != nil {
		return "", err
	}
	out := set.Run(ctx, chat.ToolCall{ID: "c1", Name: tools.TaskName, Arguments: []byte(`{"description": "read the notes", "prompt": "Read notes.txt."}`)},
		func(p chat.ToolProgress) { f.mu.Lock(); f.progress = append(f.progress, p.Message); f.mu.Unlock() })
	if out.IsError {
		return out.Content, fmt.Errorf("%s", out.Content)
	}
	return out.Content, nil
}

// read is a reply that reads notes.txt n times.
func read(n int) fakellm.Reply {
	r := fakellm.Reply{Text: "Reading."}
	for i := range n {
		r.ToolCalls = append(r.ToolCalls, fakellm.ToolCall{ID: fmt.Sprintf("r%d", i), Name: "read_file", Args: `{"path": "notes.txt"}`})
	}
	return r
}

// TestRun runs sub-tasks to their end: the answer is the child's last
// reply, redacted; its thread is saved in the store, naming the parent
// and the call; its steps are reported as progress; what it used is
// given to Usage; a child beyond its calls is refused them, and one that
// goes on is stopped.
func TestRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		maxCalls int
		replies  []fakellm.Reply
		answer   string // the call's result
		errPart  string // when it fails: in its result
		// results are what the child's second request carries back, in
		// any order (the reads run in parallel).
		results []string
		counted int // the replies the ledger counts
	}{
		{
			name:     "reads and answers",
			replies:  []fakellm.Reply{read(1), {Text: "The notes say hello; the key was " + testKey + "."}},
			answer:   "The notes say hello; the key was [REDACTED].",
			results:  []string{"hello from the notes; the key is [REDACTED]\n"},
			maxCalls: 5,
			counted:  2,
		},
		{
			name:     "calls beyond the limit are refused",
			maxCalls: 1,
			replies:  []fakellm.Reply{read(2), {Text: "Enough."}},
			answer:   "Enough.",
			results:  []string{"hello from the notes; the key is [REDACTED]\n", LimitPrefix + " (1); no more tools will run: answer now with what you found, and say what is left to find out"},
			counted:  2,
		},
		{
			name:     "a child that goes on calling is stopped",
			maxCalls: 1,
			replies:  []fakellm.Reply{read(1), read(graceCalls + 1)},
			errPart:  "was stopped: it went on calling tools after its limit of 1 calls",
			counted:  2,
		},
		{
			name:     "a failed reply fails the call",
			replies:  []fakellm.Reply{{Status: http.StatusBadRequest, ErrorMessage: "bad request"}},
			errPart:  "ended with an error",
			maxCalls: 5,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tt.maxCalls, tt.replies...)
			got, err := f.run(t.Context())
			if tt.errPart != "" {
				require.Error(t, err)
				assert.Contains(t, got, tt.errPart)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tt.answer, got)
			}
			assert.Empty(t, f.srv.Unexpected())
			reqs := f.srv.Requests()
			require.Len(t, reqs, len(tt.replies))
			assert.Equal(t, Prompt, reqs[0].System)
			require.Len(t, reqs[0].Messages, 1)
			assert.Equal(t, "Read notes.txt.", reqs[0].Messages[0].Text)
			if tt.results != nil {
				var results []string
				for _, m := range reqs[1].Messages {
					if m.Role == "tool" {
						results = append(results, m.Text)
					}
				}
				assert.ElementsMatch(t, tt.results, results)
			}

			ids, err := f.store.List()
			require.NoError(t, err)
			require.Len(t, ids, 1, "the child's thread is saved")
			th, err := f.store.Load(ids[0])
			require.NoError(t, err)
			assert.Equal(t, "parent-thread", th.SubagentOf)
			assert.Equal(t, "c1", th.SubagentCall)
			assert.Equal(t, "fake-model", th.Model)
			_, err = os.Stat(filepath.Join(f.store.Dir(), th.ID+".events.jsonl"))
			require.NoError(t, err, "the child's event log is beside its thread")
			assert.NotEmpty(t, th.LogChain, "the thread notes the log's chain")

			f.mu.Lock()
			defer f.mu.Unlock()
			require.NotEmpty(t, f.progress)
			assert.Equal(t, Mark+" "+th.ID+": read the notes", f.progress[0], "the first step names the child")
			if tt.counted > 0 {
				assert.Contains(t, f.progress, Mark+" → read_file", "its calls are shown")
			}
			assert.Equal(t, tt.counted, f.used.Replies, "its replies count in the parent's ledger")
			assert.Equal(t, th.Ledger.Total, f.used.Total)
			require.Len(t, f.synced, 1, "Sync is asked for the child's thread alone")
			saves := f.synced[th.ID]
			require.NotEmpty(t, saves)
			assert.Equal(t, th.Updated, saves[len(saves)-1].Updated, "the last save synced is the thread's")
			assert.Equal(t, "parent-thread", saves[0].SubagentOf)
		})
	}
}

// TestRunStops cancels the call while the child waits for a reply that
// stalls: the child stops, the call ends with the cancellation, and the
// child's thread stays saved as it was.
func TestRunStops(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 5, fakellm.Reply{Text: "Thinking", Stall: true})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := f.run(ctx); done <- err }()
	require.Eventually(t, func() bool { return len(f.srv.Requests()) == 1 }, 20*time.Second, 5*time.Millisecond)
	cancel()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "tool task was cancelled")
	case <-time.After(time.Minute):
		t.Fatal("the call did not end once cancelled")
	}
	ids, err := f.store.List()
	require.NoError(t, err)
	require.Len(t, ids, 1)
	assert.Len(t, f.srv.Requests(), 1, "nothing more is sent")
}

// TestNewRefuses checks that a runner needs its behaviour, provider and
// tools, and that the child runs no turn_end hook.
func TestNewRefuses(t *testing.T) {
	t.Parallel()
	b, err := behavior.New(behavior.DefaultConfig())
	require.NoError(t, err)
	provider, err := llm.New(llm.NameAnthropic, llm.Config{APIKey: testKey, BaseURL: "http://127.0.0.1:1"})
	require.NoError(t, err)
	set, err := tools.NewSet(tools.Options{})
	require.NoError(t, err)
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no behaviour", Config{Provider: provider, Tools: set}, "Config.Behavior is nil"},
		{"no provider", Config{Behavior: b, Tools: set}, "Config.Provider is nil"},
		{"no tools", Config{Behavior: b, Provider: provider}, "Config.Tools is nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(tt.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	var _ agentexec.ToolRunner = set
}
