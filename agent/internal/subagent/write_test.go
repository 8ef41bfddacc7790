package subagent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/approval"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// fakeAsker is the parent's gate of the tests: it records the questions
// and answers each with answer; granted tools are not asked about.
type fakeAsker struct {
	granted string
	answer  string

	mu        sync.Mutex
	questions []approval.Question
}

func (a *fakeAsker) Granted(tool string) bool { return tool == a.granted }

func (a *fakeAsker) AskUser(_ context.Context, _ string, q approval.Question) (approval.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.questions = append(a.questions, q)
	return approval.ParseAnswer(a.answer), nil
}

// newWriter returns a runner whose writing child has read_file and
// edit_file under -approve untrusted, asking through ask (nil: no
// Writer, refused with NoWrite), in a workspace holding notes.txt.
func newWriter(t *testing.T, ask *fakeAsker, replies ...fakellm.Reply) (*Runner, string) {
	t.Helper()
	srv := fakellm.New(t, fakellm.Anthropic, replies...)
	dir := gittest.NewRepo(t, map[string]string{"notes.txt": "hello\n"})
	ws, err := tools.NewWorkspace(dir)
	require.NoError(t, err)
	provider, err := llm.New(llm.NameAnthropic, llm.Config{APIKey: testKey, BaseURL: srv.BaseURL()})
	require.NoError(t, err)
	newBehavior := func(system string, set *tools.Set) *behavior.Agent {
		bc := behavior.DefaultConfig()
		bc.Model, bc.System, bc.Tools, bc.MutatingTools = "fake-model", system, set.Specs(), set.MutatingNames()
		b, err := behavior.New(bc)
		require.NoError(t, err)
		return b
	}
	ro, err := tools.NewSet(tools.Options{}, tools.ReadFile(ws))
	require.NoError(t, err)
	cfg := Config{Behavior: newBehavior(Prompt, ro), Provider: provider, Tools: ro, Workspace: ws.Root(),
		NoWrite: "not run: no writing subagents here"}
	if ask != nil {
		rw, err := tools.NewSet(tools.Options{}, tools.ReadFile(ws), tools.EditFile(ws))
		require.NoError(t, err)
		cfg.Writer = &Writer{Behavior: newBehavior(WritePrompt, rw), Tools: rw, Approval: approval.Untrusted, Ask: ask}
	}
	r, err := New(cfg)
	require.NoError(t, err)
	return r, dir
}

// runWrite runs one writing task as call c1 would.
func runWrite(t *testing.T, r *Runner) chat.ToolOutcome {
	t.Helper()
	set, err := tools.NewSet(tools.Options{Timeout: time.Minute}, tools.WritingTask(r.Run))
	require.NoError(t, err)
	return set.Run(t.Context(), chat.ToolCall{ID: "c1", Name: tools.TaskName,
		Arguments: []byte(`{"description": "fix the notes", "prompt": "Replace hello with bye.", "write": true}`)}, nil)
}

// edit is the child's reply that edits notes.txt.
var edit = fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "e1", Name: "edit_file", Args: `{"path": "notes.txt", "old_str": "hello", "new_str": "bye"}`}}}

// TestRunWrite runs writing children: each call of a mutating tool is
// asked about through the parent's asker, labelled as the child's, and
// runs only once granted; a tool the parent was granted for the session
// is not asked about; without a Writer the call is refused with NoWrite
// and no child starts.
func TestRunWrite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		ask     *fakeAsker
		replies []fakellm.Reply
		asked   int
		notes   string
		errPart string
	}{
		{name: "granted", ask: &fakeAsker{answer: "y"}, replies: []fakellm.Reply{edit, {Text: "Done."}}, asked: 1, notes: "bye\n"},
		{name: "refused", ask: &fakeAsker{answer: "n not now"}, replies: []fakellm.Reply{edit, {Text: "Refused."}}, asked: 1, notes: "hello\n"},
		{name: "granted for the session", ask: &fakeAsker{granted: "edit_file"}, replies: []fakellm.Reply{edit, {Text: "Done."}}, notes: "bye\n"},
		{name: "no writer", notes: "hello\n", errPart: "not run: no writing subagents here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, dir := newWriter(t, tt.ask, tt.replies...)
			out := runWrite(t, r)
			if tt.errPart != "" {
				assert.True(t, out.IsError)
				assert.Contains(t, out.Content, tt.errPart)
			} else {
				assert.False(t, out.IsError, out.Content)
			}
			b, err := os.ReadFile(filepath.Join(dir, "notes.txt"))
			require.NoError(t, err)
			assert.Equal(t, tt.notes, string(b))
			if tt.ask == nil {
				return
			}
			require.Len(t, tt.ask.questions, tt.asked)
			for _, q := range tt.ask.questions {
				assert.Equal(t, "edit_file", q.Call.Name)
				assert.True(t, strings.HasPrefix(q.By, Mark+" "), q.By)
				assert.True(t, strings.HasSuffix(q.By, ": fix the notes"), q.By)
			}
		})
	}
}
