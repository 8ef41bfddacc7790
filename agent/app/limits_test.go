package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// TestLimits runs the agent as a user would against servers and models
// that push each limit, and checks that every limit holds with a message
// that says what happened and which flag changes it.
func TestLimits(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 2048)
	tests := []struct {
		name     string
		files    map[string]string
		replies  []fakellm.Reply
		args     []string
		stdin    string
		wantCode int
		wantErr  []string // in stderr
		requests int      // LLM requests made, when not 0
		check    func(t *testing.T, e *env)
	}{
		{
			name:     "a server that stalls after its headers",
			replies:  []fakellm.Reply{{HeadersOnly: true}},
			args:     []string{"-llm-idle-timeout", "200ms", "-max-retries", "0", "-p", "Hi."},
			wantCode: 1,
			wantErr:  []string{"the server sent nothing for 200ms", "-llm-idle-timeout"},
		},
		{
			name:     "a server that never sends its headers",
			replies:  []fakellm.Reply{{NoHeaders: true}},
			args:     []string{"-llm-header-timeout", "200ms", "-max-retries", "0", "-p", "Hi."},
			wantCode: 1,
			wantErr:  []string{"-llm-header-timeout"},
		},
		{
			name:     "a reply that never ends",
			replies:  []fakellm.Reply{{Text: "more ", Forever: true}},
			args:     []string{"-llm-max-reply", "64KiB", "-p", "Hi."},
			wantCode: 1,
			wantErr:  []string{"the reply passed the limit of 65536 bytes", "-llm-max-reply"},
			requests: 1,
			check: func(t *testing.T, e *env) {
				id := e.onlyThread(t)
				fi, err := os.Stat(filepath.Join(e.threads, id+".events.jsonl"))
				require.NoError(t, err)
				assert.Less(t, fi.Size(), int64(4<<20), "the event log stays small")
			},
		},
		{
			name: "too many tool calls in one reply",
			replies: []fakellm.Reply{
				{ToolCalls: []fakellm.ToolCall{
					{ID: "c1", Name: "list_files", Args: `{}`}, {ID: "c2", Name: "list_files", Args: `{}`}, {ID: "c3", Name: "list_files", Args: `{}`},
				}},
				{Text: "Listed."},
			},
			args:    []string{"-max-tool-calls", "2", "-p", "List."},
			wantErr: []string{"✗ list_files: not run: too many tool calls in one reply: the reply asked for 3 and at most 2 are run"},
		},
		{
			name:    "thousands of tool calls in one reply",
			replies: []fakellm.Reply{{ToolCalls: manyCalls(3000)}, {Text: "Listed."}},
			args:    []string{"-max-tool-calls", "2", "-p", "List."},
			wantErr: []string{"the reply asked for 3000 and at most 2 are run"},
			check: func(t *testing.T, e *env) {
				reqs := e.srv.Requests()
				require.Len(t, reqs, 2)
				assert.Len(t, reqs[1].Messages, 2+3000, "every call has its result")
			},
		},
		{
			name:    "tool arguments too large",
			replies: []fakellm.Reply{{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "edit_file", Args: `{"path":"big.txt","old_str":"","new_str":"` + big + `"}`}}}, {Text: "Too big."}},
			args:    []string{"-max-tool-args", "1KiB", "-p", "Write."},
			wantErr: []string{"✗ edit_file: the arguments of this edit_file call are"},
			check: func(t *testing.T, e *env) {
				assert.NoFileExists(t, filepath.Join(e.ws, "big.txt"))
			},
		},
		{
			name:    "a new file too large to commit",
			replies: []fakellm.Reply{{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "edit_file", Args: `{"path":"big.bin","old_str":"","new_str":"` + big + `"}`}}}, {Text: "Made it."}},
			args:    []string{"-commit-max-new-file", "1KiB", "-p", "Make it."},
			wantErr: []string{"! not committed: big.bin — new files over the size limit of the auto-commit", "-commit-max-new-file"},
			check: func(t *testing.T, e *env) {
				assert.Equal(t, "?? big.bin", gittest.Git(t, e.ws, "status", "--porcelain"))
			},
		},
		{
			name:    "a file too large to edit",
			files:   map[string]string{"big.txt": big},
			replies: []fakellm.Reply{{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "edit_file", Args: `{"path":"big.txt","old_str":"xx","new_str":"y"}`}}}, {Text: "Too big."}},
			args:    []string{"-max-edit-size", "1KiB", "-p", "Edit."},
			wantErr: []string{"✗ edit_file:", "over edit_file's limit of 1 KiB"},
			check: func(t *testing.T, e *env) {
				assert.Equal(t, big, gittest.ReadFile(t, e.ws, "big.txt"))
			},
		},
		{
			name:    "an input line too long",
			replies: []fakellm.Reply{{Text: "Short one."}},
			args:    []string{"-max-input-line", "16"},
			stdin:   big + "\nshort\n",
			wantErr: []string{"agent: a message of 2048 bytes is longer than the limit of 16 bytes (-max-input-line) and was not sent"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, tt.files, tt.replies...)
			r := e.run(t, tt.stdin, tt.args...)
			assert.Equal(t, tt.wantCode, r.code, "stderr:\n%s", r.stderr)
			for _, w := range tt.wantErr {
				assert.Contains(t, r.stderr, w)
			}
			if tt.requests > 0 {
				assert.Len(t, e.srv.Requests(), tt.requests)
			}
			if tt.check != nil {
				tt.check(t, e)
			}
		})
	}
}

// TestNotAnLLMServer points the agent at a plain web server: one request,
// no retries, a message that says the base URL is wrong.
func TestNotAnLLMServer(t *testing.T) {
	t.Parallel()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			e := &env{srv: fakellm.NewWebServer(t, 501), provider: p, ws: gittest.NewRepo(t, nil),
				threads: filepath.Join(t.TempDir(), "threads"), cache: t.TempDir()}
			r := e.run(t, "", "-p", "Hi.")
			assert.Equal(t, 1, r.code)
			assert.Contains(t, r.stderr, "does not look like an")
			assert.Contains(t, r.stderr, "-base-url")
			assert.Len(t, e.srv.Requests(), 1, "not retried")
			assert.NotContains(t, r.stderr, "<html", "the page is not printed")
			assert.Equal(t, 1, strings.Count(r.stderr, "does not look like an"), "said once:\n%s", r.stderr)
		})
	}
}

// manyCalls returns n list_files calls.
func manyCalls(n int) []fakellm.ToolCall {
	calls := make([]fakellm.ToolCall, n)
	for i := range calls {
		calls[i] = fakellm.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "list_files", Args: `{}`}
	}
	return calls
}
