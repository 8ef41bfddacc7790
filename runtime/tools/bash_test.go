package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/chat"
)

// newWorkspace returns a workspace in a fresh temporary directory.
func newWorkspace(t *testing.T) *Workspace {
	t.Helper()
	ws, err := NewWorkspace(t.TempDir())
	require.NoError(t, err)
	return ws
}

func TestBash(t *testing.T) {
	ws := newWorkspace(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws.Root(), "here.txt"), []byte("x"), 0o644))
	s := Default(ws, Options{BashOutputLimit: 1000})
	tests := []struct {
		name     string
		command  string
		want     string // exact content, when set
		contains []string
		wantErr  bool
	}{
		{name: "stdout", command: "echo hello", want: "hello\n"},
		{name: "stdout and stderr combined", command: "echo out; echo err >&2; echo out2", want: "out\nerr\nout2\n"},
		{name: "runs in the workspace root", command: "pwd; ls", want: ws.Root() + "\nhere.txt\n"},
		{name: "no output", command: "true", want: "(no output)"},
		{name: "stdin is empty", command: "cat; echo done", want: "done\n"},
		{name: "non-zero exit", command: "echo failing; exit 3", wantErr: true, want: "command exited with status 3\n\nfailing\n"},
		{name: "killed by a signal", command: "kill -TERM $$", wantErr: true, contains: []string{"killed by signal terminated"}},
		{
			name: "output is capped", command: "for i in $(seq 1 500); do echo line$i; done",
			contains: []string{"line1\n", "line500\n", "output cut: 3892 bytes in total", "showing the first 500 and the last 500 bytes"},
		},
		{name: "empty command", command: "  ", wantErr: true, contains: []string{"command is empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := call(t, s, "bash", obj{"command": tt.command})
			assert.Equal(t, tt.wantErr, out.IsError, out.Content)
			if tt.want != "" {
				assert.Equal(t, tt.want, out.Content)
			}
			for _, c := range tt.contains {
				assert.Contains(t, out.Content, c)
			}
		})
	}
}

func TestBashArguments(t *testing.T) {
	s := Default(newWorkspace(t), Options{})
	tests := []struct {
		name, raw, wantErr string
	}{
		{"missing command", `{}`, `missing required field "command"`},
		{"unknown field", `{"command": "true", "timeout": 5}`, `unknown field "timeout"`},
		{"wrong type", `{"command": ["ls"]}`, "invalid arguments"},
		{"malformed JSON", `{"command": "ls"`, "invalid arguments"},
		{"trailing data", `{"command": "ls"} {}`, "extra data after the JSON object"},
		{"not an object", `"ls"`, "expected a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := s.Run(context.Background(), chat.ToolCall{Name: "bash", Arguments: json.RawMessage(tt.raw)}, nil)
			assert.True(t, out.IsError, out.Content)
			assert.Contains(t, out.Content, tt.wantErr)
		})
	}
}

// hangingCommand starts a background child, records its pid in pidFile,
// and hangs.
func hangingCommand(pidFile string) string {
	return fmt.Sprintf("sleep 30 & echo $! > %s; echo started; sleep 30", shellQuote(pidFile))
}

// waitForPID waits for the command to write its child's pid.
func waitForPID(t *testing.T, pidFile string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(pidFile)
		if err != nil || !strings.HasSuffix(string(data), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil
	}, 5*time.Second, 10*time.Millisecond, "the command never wrote its child's pid")
	return pid
}

// alive reports whether process pid exists and is not a zombie waiting to
// be reaped.
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	i := strings.LastIndexByte(string(data), ')')
	return i < 0 || i+2 >= len(data) || data[i+2] != 'Z'
}

func TestBashKillsTheWholeGroup(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		cancel  bool // cancel the context once the child runs
		want    []string
	}{
		{name: "on timeout", timeout: 2 * time.Second, want: []string{"timed out after 2s", "process group was killed", "started"}},
		{name: "on cancellation", timeout: time.Minute, cancel: true, want: []string{"was cancelled", "process group was killed", "started"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := newWorkspace(t)
			pidFile := filepath.Join(t.TempDir(), "child.pid")
			s := Default(ws, Options{Timeout: tt.timeout})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			raw, err := json.Marshal(obj{"command": hangingCommand(pidFile)})
			require.NoError(t, err)

			done := make(chan chat.ToolOutcome, 1)
			go func() { done <- s.Run(ctx, chat.ToolCall{Name: "bash", Arguments: raw}, nil) }()
			child := waitForPID(t, pidFile)
			assert.True(t, alive(child), "the background child should be running")
			if tt.cancel {
				cancel()
			}
			var out chat.ToolOutcome
			select {
			case out = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return after the command was stopped")
			}
			assert.True(t, out.IsError, out.Content)
			for _, w := range tt.want {
				assert.Contains(t, out.Content, w)
			}
			assert.Eventually(t, func() bool { return !alive(child) }, 2*time.Second, 10*time.Millisecond,
				"the background child %d outlived the call", child)
		})
	}
}

func TestBashKillsBackgroundChildrenWhenDone(t *testing.T) {
	ws := newWorkspace(t)
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	s := Default(ws, Options{})
	// The child keeps the output pipe open; Run must still return promptly.
	out := call(t, s, "bash", obj{"command": fmt.Sprintf("sleep 30 & echo $! > %s; echo parent done", shellQuote(pidFile))})
	assert.False(t, out.IsError, out.Content)
	assert.Equal(t, "parent done\n", out.Content)
	child := waitForPID(t, pidFile)
	assert.Eventually(t, func() bool { return !alive(child) }, 2*time.Second, 10*time.Millisecond)
}

func TestBashReportsProgress(t *testing.T) {
	ws := newWorkspace(t)
	s := Default(ws, Options{ProgressEvery: 50 * time.Millisecond})
	var (
		mu      sync.Mutex
		reports []chat.ToolProgress
	)
	progress := func(p chat.ToolProgress) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, p)
	}
	// The command waits for a gate file, so the test decides when it ends
	// instead of racing a sleep.
	gate := filepath.Join(t.TempDir(), "gate")
	raw, err := json.Marshal(obj{"command": fmt.Sprintf("echo a; echo b; while [ ! -e %s ]; do sleep 0.01; done; echo c", shellQuote(gate))})
	require.NoError(t, err)
	done := make(chan chat.ToolOutcome, 1)
	go func() { done <- s.Run(context.Background(), chat.ToolCall{Name: "bash", Arguments: raw}, progress) }()

	sawTwoLines := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range reports {
			if p.UnitsProcessed == 2 {
				return true
			}
		}
		return false
	}
	require.Eventually(t, sawTwoLines, 20*time.Second, 10*time.Millisecond, "a progress report counting the two lines printed so far")
	require.NoError(t, os.WriteFile(gate, nil, 0o644))
	out := <-done
	require.False(t, out.IsError, out.Content)
	assert.Equal(t, "a\nb\nc\n", out.Content)

	mu.Lock()
	defer mu.Unlock()
	for _, p := range reports {
		if p.UnitsProcessed == 2 {
			assert.Regexp(t, `^running \d+s, 2 lines of output$`, p.Message)
		}
		assert.LessOrEqual(t, p.UnitsProcessed, int64(3))
	}
}

func TestCappedBuffer(t *testing.T) {
	tests := []struct {
		name   string
		limit  int
		writes []string
		want   string
	}{
		{name: "under the limit", limit: 10, writes: []string{"abc", "def"}, want: "abcdef"},
		{name: "exactly the limit", limit: 10, writes: []string{"0123456789"}, want: "0123456789"},
		{
			name: "over the limit in small writes", limit: 6, writes: []string{"ab", "cd", "ef", "gh", "ij", "kl", "mn"},
			want: "abc\n[... output cut: 14 bytes in total, the 8 bytes in the middle were dropped; showing the first 3 and the last 3 bytes ...]\nlmn",
		},
		{
			name: "over the limit in one write", limit: 4, writes: []string{"abcdefghij"},
			want: "ab\n[... output cut: 10 bytes in total, the 6 bytes in the middle were dropped; showing the first 2 and the last 2 bytes ...]\nij",
		},
		{
			name: "tail not yet trimmed", limit: 10, writes: []string{"01234", "56789ab"},
			want: "01234\n[... output cut: 12 bytes in total, the 2 bytes in the middle were dropped; showing the first 5 and the last 5 bytes ...]\n789ab",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newCappedBuffer(tt.limit)
			for _, w := range tt.writes {
				n, err := b.Write([]byte(w))
				require.NoError(t, err)
				require.Equal(t, len(w), n)
			}
			assert.Equal(t, tt.want, b.String())
		})
	}
}

// fakeTool is a tool whose behaviour a test chooses.
type fakeTool struct {
	name string
	run  func(ctx context.Context, progress func(chat.ToolProgress)) (string, error)
}

func (f fakeTool) Spec() chat.ToolSpec {
	return chat.ToolSpec{Name: f.name, Description: "test tool", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (f fakeTool) Run(ctx context.Context, _ json.RawMessage, progress func(chat.ToolProgress)) (string, error) {
	return f.run(ctx, progress)
}

func TestSetRun(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	tools := []Tool{
		fakeTool{name: "ok", run: func(context.Context, func(chat.ToolProgress)) (string, error) { return "fine", nil }},
		fakeTool{name: "fails", run: func(context.Context, func(chat.ToolProgress)) (string, error) {
			return "partial output", errors.New("it broke; try again")
		}},
		fakeTool{name: "panics", run: func(context.Context, func(chat.ToolProgress)) (string, error) { panic("boom") }},
		fakeTool{name: "nil_deref", run: func(context.Context, func(chat.ToolProgress)) (string, error) {
			var m map[string]int
			m["x"]++ // panics: assignment to entry in nil map
			return "", nil
		}},
		fakeTool{name: "slow", run: func(ctx context.Context, _ func(chat.ToolProgress)) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}},
		fakeTool{name: "stubborn", run: func(context.Context, func(chat.ToolProgress)) (string, error) {
			<-release // ignores its context
			return "too late", nil
		}},
	}
	s, err := NewSet(Options{Timeout: 100 * time.Millisecond}, tools...)
	require.NoError(t, err)
	s.grace = 100 * time.Millisecond

	tests := []struct {
		name     string
		call     chat.ToolCall
		ctx      func() context.Context
		want     chat.ToolOutcome
		contains []string
	}{
		{name: "success", call: chat.ToolCall{Name: "ok"}, want: chat.ToolOutcome{Content: "fine"}},
		{
			name: "tool error keeps its output", call: chat.ToolCall{Name: "fails"},
			want: chat.ToolOutcome{Content: "it broke; try again\n\npartial output", IsError: true},
		},
		{name: "unknown tool", call: chat.ToolCall{Name: "rm_rf"}, contains: []string{`unknown tool "rm_rf"`, "use one of: fails, nil_deref, ok, panics, slow, stubborn"}},
		{name: "panic", call: chat.ToolCall{Name: "panics"}, contains: []string{"tool panics crashed", "boom"}},
		{name: "runtime panic", call: chat.ToolCall{Name: "nil_deref"}, contains: []string{"crashed", "nil map"}},
		{name: "timeout", call: chat.ToolCall{Name: "slow"}, contains: []string{"tool slow timed out after 100ms"}},
		{name: "tool ignoring its context", call: chat.ToolCall{Name: "stubborn"}, contains: []string{"tool stubborn did not stop", "context deadline exceeded", "was abandoned"}},
		{
			name: "cancelled before the start", call: chat.ToolCall{Name: "ok"},
			ctx: func() context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			},
			contains: []string{"tool ok was not run", "context canceled"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx()
			}
			var out chat.ToolOutcome
			require.NotPanics(t, func() { out = s.Run(ctx, tt.call, nil) })
			if tt.contains == nil {
				assert.Equal(t, tt.want, out)
				return
			}
			assert.True(t, out.IsError, out.Content)
			for _, c := range tt.contains {
				assert.Contains(t, out.Content, c)
			}
		})
	}
}

func TestSetRunStopsProgressWhenDone(t *testing.T) {
	stop := make(chan struct{})
	finished := make(chan struct{})
	tool := fakeTool{name: "late", run: func(_ context.Context, progress func(chat.ToolProgress)) (string, error) {
		go func() { // reports after Run has returned, as a misbehaving tool might
			defer close(finished)
			<-stop
			progress(chat.ToolProgress{Message: "late"})
		}()
		progress(chat.ToolProgress{Message: "early"})
		return "done", nil
	}}
	s, err := NewSet(Options{}, tool)
	require.NoError(t, err)
	var got []string
	out := s.Run(context.Background(), chat.ToolCall{Name: "late"}, func(p chat.ToolProgress) { got = append(got, p.Message) })
	close(stop)
	<-finished
	assert.Equal(t, chat.ToolOutcome{Content: "done"}, out)
	assert.Equal(t, []string{"early"}, got)
}

func TestNewSetRefusesBadNames(t *testing.T) {
	ok := func(context.Context, func(chat.ToolProgress)) (string, error) { return "", nil }
	_, err := NewSet(Options{}, fakeTool{name: "a", run: ok}, fakeTool{name: "a", run: ok})
	assert.ErrorContains(t, err, `two tools are named "a"`)
	_, err = NewSet(Options{}, fakeTool{name: "", run: ok})
	assert.ErrorContains(t, err, "empty name")
}

func TestSpecs(t *testing.T) {
	specs := Default(newWorkspace(t), Options{}).Specs()
	var names []string
	for _, sp := range specs {
		names = append(names, sp.Name)
		assert.NotEmpty(t, sp.Description, sp.Name)
		var schema struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		require.NoError(t, json.Unmarshal(sp.InputSchema, &schema), sp.Name)
		assert.Equal(t, "object", schema.Type, sp.Name)
		require.NotNil(t, schema.AdditionalProperties, sp.Name)
		assert.False(t, *schema.AdditionalProperties, sp.Name)
		for _, r := range schema.Required {
			assert.Contains(t, schema.Properties, r, "%s requires an undeclared property", sp.Name)
		}
	}
	assert.Equal(t, []string{"bash", "edit_file", "list_files", "read_file"}, names)
	assert.Equal(t, specs, Default(newWorkspace(t), Options{}).Specs(), "specs are deterministic")
}
