package agentexec_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/autocommit"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// TestMultiRoundSession runs one turn of two rounds: the model asks for
// read_file and edit_file in one reply, both run in parallel, the file
// changes, the hook notes it, the model answers, the turn ends and its
// commit holds the change.
func TestMultiRoundSession(t *testing.T) {
	t.Parallel()
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			s := newSession(t, p,
				map[string]string{"hello.txt": "Hello, world\n", "notes.txt": "Greet the agent, not the world.\n"},
				fakellm.Reply{
					Text: "Let me read the notes and fix the greeting.",
					ToolCalls: []fakellm.ToolCall{
						{ID: "call_read", Name: "read_file", Args: `{"path":"notes.txt"}`},
						{ID: "call_edit", Name: "edit_file", Args: `{"path":"hello.txt","old_str":"world","new_str":"agent"}`},
					},
				},
				fakellm.Reply{Text: "Done: hello.txt now greets the agent."},
			)
			d := &recorder{}
			res, err := s.run(t, run{prompt: "Fix the greeting as the notes say.", tools: newBarrier(s.defaultTools(t), 2), display: d})
			require.NoError(t, err)
			used := chat.Usage{InputTokens: 20, OutputTokens: 40} // the fake server's 10 in and 20 out, twice
			assert.Equal(t, agentexec.Result{Turns: 1, Idle: true, State: agent.StateWaitingForUserInput,
				Ledger: chat.Ledger{Total: used, Turns: []chat.Usage{used}, Replies: 2,
					Models: []chat.ModelUsage{{Provider: string(s.provider), Model: "fake-model", Usage: used}}}}, res)

			// The file changed and the hook committed it.
			assert.Equal(t, "Hello, agent\n", gittest.ReadFile(t, s.ws, "hello.txt"))
			assert.Equal(t, "agent: Done: hello.txt now greets the agent.", gittest.Git(t, s.ws, "log", "-1", "--format=%s"), "one commit for the turn, named for what it did")
			assert.Equal(t, "hello.txt", gittest.Git(t, s.ws, "show", "--name-only", "--format=", "HEAD"))
			assert.Empty(t, gittest.Git(t, s.ws, "status", "--porcelain"))
			require.Len(t, d.hooks, 2, "the round's hook, then the turn's commit")
			assert.Equal(t, autocommit.SkippedRecorded, d.hooks[0].Skipped)
			assert.True(t, d.hooks[1].Committed)

			// The second request carries the results in the LLM's order.
			reqs := s.srv.Requests()
			require.Len(t, reqs, 2)
			assert.Equal(t, []string{"bash", "edit_file", "list_files", "read_file"}, reqs[0].Tools)
			m := reqs[1].Messages
			require.Len(t, m, 4)
			assert.Equal(t, "user", m[0].Role)
			assert.Equal(t, "Fix the greeting as the notes say.", m[0].Text)
			assert.Equal(t, "assistant", m[1].Role)
			require.Len(t, m[1].ToolCalls, 2)
			assert.Equal(t, []string{"tool", "call_read"}, []string{m[2].Role, m[2].ToolCallID})
			assert.Contains(t, m[2].Text, "Greet the agent, not the world.")
			assert.False(t, m[2].IsError, m[2].Text)
			assert.Equal(t, []string{"tool", "call_edit"}, []string{m[3].Role, m[3].ToolCallID})
			assert.False(t, m[3].IsError, m[3].Text)

			// What the user saw.
			assert.Equal(t, []string{"read_file", "edit_file"}, d.calls)
			assert.Equal(t, "Let me read the notes and fix the greeting.Done: hello.txt now greets the agent.", d.text.String())
			assert.Equal(t, 1, d.turns)
			assert.Empty(t, d.errors)
			// Each event is shown before what it caused: the reply before the
			// calls it asks for, the results before the hook. The results
			// come in either order.
			require.Len(t, d.shown, 9)
			assert.Equal(t, []string{"reply", "call read_file", "call edit_file"}, d.shown[:3])
			assert.ElementsMatch(t, []string{"result read_file", "result edit_file"}, d.shown[3:5])
			assert.Equal(t, []string{"hook", "reply", "hook", "turn end"}, d.shown[5:], "the round's hook, the reply, the turn's commit")

			// The thread is saved at the turn end with the whole conversation.
			assert.Equal(t, []string{
				"user: Fix the greeting as the notes say.",
				`assistant: Let me read the notes and fix the greeting. [read_file {"path":"notes.txt"}] [edit_file {"path":"hello.txt","old_str":"world","new_str":"agent"}]`,
				"tool: " + m[2].Text,
				"tool: " + m[3].Text,
				"assistant: Done: hello.txt now greets the agent.",
			}, s.conversation(t))
			assert.IsType(t, agent.WaitingForUserInput{}, s.state(t))

			rep := s.checkReplay(t)
			assert.Equal(t, len(s.records(t)), rep.Events)
			s.checkNoSecret(t)
		})
	}
}

// TestFaults makes the LLM fail in the ways providers fail: each fault is
// retried per the machine's policy, and reported once retries are used up
// or when the error is not worth retrying. The conversation stays intact.
func TestFaults(t *testing.T) {
	t.Parallel()
	ok := fakellm.Reply{Text: "The answer is 42."}
	const ms = time.Millisecond
	tests := []struct {
		name       string
		anthropic  bool // Anthropic only
		replies    []fakellm.Reply
		maxRetries int // 0: the default, behavior.DefaultMaxRetries
		wantRetry  []retry
		wantError  string // the DisplayError the turn ends with, if any
	}{
		{
			name:      "429 with retry-after",
			replies:   []fakellm.Reply{{Status: 429, Header: map[string]string{"retry-after-ms": "15"}}, ok},
			wantRetry: []retry{{1, 15 * ms, chat.ErrRateLimited}},
		},
		{
			name:      "529 overloaded",
			replies:   []fakellm.Reply{{Status: 529}, ok},
			wantRetry: []retry{{1, ms, chat.ErrOverloaded}},
		},
		{
			name:      "500",
			replies:   []fakellm.Reply{{Status: 500}, ok},
			wantRetry: []retry{{1, ms, chat.ErrServer}},
		},
		{
			name:      "stream cut after some deltas",
			replies:   []fakellm.Reply{{Text: "The answer is, let me think, probably", CutAfter: 2}, ok},
			wantRetry: []retry{{1, ms, chat.ErrNetwork}},
		},
		{
			name:      "malformed event",
			replies:   []fakellm.Reply{{Text: "The", Malformed: true}, ok},
			wantRetry: []retry{{1, ms, chat.ErrMalformed}},
		},
		{
			name:      "overloaded error event mid-stream",
			anthropic: true,
			replies:   []fakellm.Reply{{Text: "The answer", StreamError: "overloaded_error"}, ok},
			wantRetry: []retry{{1, ms, chat.ErrOverloaded}},
		},
		{
			name:      "faults in a row back off exponentially",
			replies:   []fakellm.Reply{{Status: 500}, {Status: 529}, {Text: "cut", CutAfter: 1}, ok},
			wantRetry: []retry{{1, ms, chat.ErrServer}, {2, 2 * ms, chat.ErrOverloaded}, {3, 4 * ms, chat.ErrNetwork}},
		},
		{
			name:       "retries used up",
			replies:    []fakellm.Reply{{Status: 500}, {Status: 500}, {Status: 500}},
			maxRetries: 2,
			wantRetry:  []retry{{1, ms, chat.ErrServer}, {2, 2 * ms, chat.ErrServer}},
			wantError:  "LLM request failed after 3 attempts: server (HTTP 500)",
		},
		{
			name:      "not retryable",
			replies:   []fakellm.Reply{{Status: 401, ErrorMessage: "invalid x-api-key"}},
			wantError: "(not retried)",
		},
	}
	for _, p := range providers {
		for _, tt := range tests {
			if tt.anthropic && p != fakellm.Anthropic {
				continue
			}
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				s := newSession(t, p, nil, tt.replies...)
				d := &recorder{}
				bcfg := func(c *behavior.Config) {
					if tt.maxRetries != 0 {
						c.MaxRetries = tt.maxRetries
					}
				}
				res, err := s.run(t, run{prompt: "What is the answer?", display: d, bcfg: bcfg})
				require.NoError(t, err)
				assert.Equal(t, tt.wantRetry, d.retries)
				assert.Len(t, s.srv.Requests(), len(tt.replies))
				for i, r := range s.srv.Requests() {
					require.Len(t, r.Messages, 1, "request %d", i)
					assert.Equal(t, "What is the answer?", r.Messages[0].Text, "request %d", i)
				}
				assert.Equal(t, 1, res.Turns)
				assert.True(t, res.Idle)
				if tt.wantError != "" {
					require.Len(t, d.errors, 1)
					assert.Contains(t, d.errors[0], tt.wantError)
					assert.Equal(t, d.errors[0], res.LastError)
					assert.Equal(t, []string{"user: What is the answer?"}, s.conversation(t))
				} else {
					assert.Empty(t, d.errors)
					assert.Empty(t, res.LastError)
					assert.Equal(t, []string{"user: What is the answer?", "assistant: The answer is 42."}, s.conversation(t))
					assert.Equal(t, []string{"The answer is 42."}, d.replies)
				}
				s.checkReplay(t)
				s.checkNoSecret(t)
			})
		}
	}
}

// TestToolFailures runs a tool that hangs and one that panics in one
// round: the first is timed out, the second becomes a tool error, and the
// turn goes on.
func TestToolFailures(t *testing.T) {
	t.Parallel()
	hang := toolFunc{name: "hang", run: func(ctx context.Context, _ json.RawMessage, progress func(chat.ToolProgress)) (string, error) {
		progress(chat.ToolProgress{Message: "waiting forever"})
		<-ctx.Done()
		return "", ctx.Err()
	}}
	boom := toolFunc{name: "boom", run: func(context.Context, json.RawMessage, func(chat.ToolProgress)) (string, error) {
		panic("kaboom")
	}}
	set, err := tools.NewSet(tools.Options{Timeout: 100 * time.Millisecond}, hang, boom)
	require.NoError(t, err)

	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			s := newSession(t, p, nil,
				fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c_hang", Name: "hang", Args: "{}"}, {ID: "c_boom", Name: "boom", Args: "{}"}}},
				fakellm.Reply{Text: "Both tools failed."},
			)
			d := &recorder{}
			res, err := s.run(t, run{prompt: "Run both.", tools: set, display: d})
			require.NoError(t, err)
			assert.Equal(t, 1, res.Turns)
			assert.Empty(t, res.LastError)

			reqs := s.srv.Requests()
			require.Len(t, reqs, 2)
			m := reqs[1].Messages
			require.Len(t, m, 4)
			assert.Equal(t, "c_hang", m[2].ToolCallID)
			assert.True(t, m[2].IsError)
			assert.Contains(t, m[2].Text, "timed out")
			assert.Equal(t, "c_boom", m[3].ToolCallID)
			assert.True(t, m[3].IsError)
			assert.Contains(t, m[3].Text, "kaboom")

			assert.Equal(t, []string{"hang: waiting forever"}, d.progress)
			assert.True(t, d.results["hang"].IsError)
			assert.True(t, d.results["boom"].IsError)
			assert.Empty(t, d.hooks, "no mutating tool ran, so no hook")
			s.checkReplay(t)
		})
	}
}

// TestResume stops the agent (with a signal, as Ctrl-C would) in each
// state that has work in flight, then resumes the thread: the work is
// taken up again and the turn completes, with nothing saved lost.
func TestResume(t *testing.T) {
	sig := syscall.SIGUSR1
	editHello := fakellm.ToolCall{ID: "c_edit", Name: "edit_file", Args: `{"path":"hello.txt","old_str":"world","new_str":"agent"}`}
	tests := []struct {
		name string
		// first is the script of the run that is stopped, then the one that
		// resumes.
		first, second []fakellm.Reply
		// stop sets up the first run so that it signals itself to stop.
		stop      func(t *testing.T, r *run, s *session)
		wantState agent.StateKind
		// resumed changes the behaviour's configuration of the run that
		// resumes.
		resumed  func(c *behavior.Config)
		wantConv []string
		check    func(t *testing.T, s *session)
	}{
		{
			name:  "calling the LLM",
			first: []fakellm.Reply{{Text: "Thinking hard about", Stall: true}},
			stop: func(t *testing.T, r *run, s *session) {
				r.display.onText = func() { signalSelf(t, sig) }
			},
			wantState: agent.StateCallingLLM,
			second:    []fakellm.Reply{{Text: "Fresh answer."}},
			wantConv:  []string{"user: Go.", "assistant: Fresh answer."},
			check: func(t *testing.T, s *session) {
				reqs := s.srv.Requests()
				require.Len(t, reqs, 2)
				assert.JSONEq(t, string(reqs[0].Body), string(reqs[1].Body), "the request is sent again as it was")
			},
		},
		{
			name:  "executing tools",
			first: []fakellm.Reply{{ToolCalls: []fakellm.ToolCall{editHello, {ID: "c_block", Name: "block", Args: "{}"}}}},
			stop: func(t *testing.T, r *run, s *session) {
				r.display.onToolResult = func(call chat.ToolCall) {
					if call.Name == "edit_file" {
						signalSelf(t, sig)
					}
				}
			},
			wantState: agent.StateExecutingTools,
			second:    []fakellm.Reply{{Text: "The block tool was interrupted."}},
			wantConv: []string{
				"user: Go.",
				`assistant:  [edit_file {"path":"hello.txt","old_str":"world","new_str":"agent"}] [block {}]`,
				"tool: edited hello.txt",
				"tool: " + agentexec.InterruptedPrefix + "; it may or may not have taken effect, so check before running it again (error)",
				"assistant: The block tool was interrupted.",
			},
			check: func(t *testing.T, s *session) {
				assert.Equal(t, "Hello, agent\n", gittest.ReadFile(t, s.ws, "hello.txt"))
				// What the round cut by the stop changed is not known to be
				// the agent's alone: it stays in the work tree, uncommitted.
				assert.Equal(t, "initial", gittest.Git(t, s.ws, "log", "-1", "--format=%s"))
				assert.Equal(t, "M hello.txt", gittest.Git(t, s.ws, "status", "--porcelain"))
			},
		},
		{
			name:  "waiting to retry",
			first: []fakellm.Reply{{Status: 500}},
			stop: func(t *testing.T, r *run, s *session) {
				r.bcfg = func(c *behavior.Config) { c.BaseDelay, c.MaxDelay = time.Hour, time.Hour }
				r.display.onRetry = func() { signalSelf(t, sig) }
			},
			wantState: agent.StateError,
			second:    []fakellm.Reply{{Text: "Recovered."}},
			wantConv:  []string{"user: Go.", "assistant: Recovered."},
		},
		{
			name:  "running the post-tools hook",
			first: []fakellm.Reply{{ToolCalls: []fakellm.ToolCall{editHello}}},
			stop: func(t *testing.T, r *run, s *session) {
				c, err := autocommit.Open(context.Background(), s.ws, autocommit.Options{})
				require.NoError(t, err)
				r.commits = blockingHook{c, func() { signalSelf(t, sig) }}
			},
			wantState: agent.StatePostToolsHook,
			second:    []fakellm.Reply{{Text: "Edited."}},
			wantConv: []string{
				"user: Go.",
				`assistant:  [edit_file {"path":"hello.txt","old_str":"world","new_str":"agent"}]`,
				"tool: edited hello.txt",
				"assistant: Edited.",
			},
			check: func(t *testing.T, s *session) {
				// What the round cut by the stop changed is not known to be
				// the agent's alone: it stays in the work tree, uncommitted.
				assert.Equal(t, "initial", gittest.Git(t, s.ws, "log", "-1", "--format=%s"))
				assert.Equal(t, "M hello.txt", gittest.Git(t, s.ws, "status", "--porcelain"))
			},
		},
		{
			name:  "running the post-tools hook, resumed with other settings",
			first: []fakellm.Reply{{ToolCalls: []fakellm.ToolCall{editHello}}},
			stop: func(t *testing.T, r *run, s *session) {
				c, err := autocommit.Open(context.Background(), s.ws, autocommit.Options{})
				require.NoError(t, err)
				r.commits = blockingHook{c, func() { signalSelf(t, sig) }}
			},
			wantState: agent.StatePostToolsHook,
			resumed: func(c *behavior.Config) {
				c.System, c.MaxTokens = "You are resumed.", 1234
				c.Tools = slices.DeleteFunc(c.Tools, func(s chat.ToolSpec) bool { return s.Name == "block" })
			},
			second: []fakellm.Reply{{Text: "Edited."}},
			wantConv: []string{
				"user: Go.",
				`assistant:  [edit_file {"path":"hello.txt","old_str":"world","new_str":"agent"}]`,
				"tool: edited hello.txt",
				"assistant: Edited.",
			},
			check: func(t *testing.T, s *session) {
				reqs := s.srv.Requests()
				require.Len(t, reqs, 2)
				assert.Equal(t, "You are resumed.", reqs[1].System, "the frozen request is built again with this session's settings")
				assert.Equal(t, 1234, reqs[1].MaxTokens)
				assert.ElementsMatch(t, []string{"read_file", "edit_file"}, reqs[1].Tools)
				assert.Len(t, reqs[1].Messages, 3)
			},
		},
	}
	for _, p := range providers {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				s := newSession(t, p, map[string]string{"hello.txt": "Hello, world\n"}, tt.first...)
				block := toolFunc{name: "block", run: func(ctx context.Context, _ json.RawMessage, _ func(chat.ToolProgress)) (string, error) {
					<-ctx.Done()
					return "", ctx.Err()
				}}
				ws, err := tools.NewWorkspace(s.ws)
				require.NoError(t, err)
				set, err := tools.NewSet(tools.Options{}, tools.ReadFile(ws), tools.EditFile(ws), block)
				require.NoError(t, err)

				r := run{prompt: "Go.", tools: set, display: &recorder{}, signals: []os.Signal{sig}}
				tt.stop(t, &r, s)
				res, err := s.run(t, r)
				require.NoError(t, err)
				assert.False(t, res.Idle, "stopped in the middle of the turn")
				assert.Equal(t, tt.wantState, res.State)
				assert.Equal(t, tt.wantState, s.state(t).Kind())
				assert.Equal(t, 0, res.Turns)

				s.srv.Add(tt.second...)
				d := &recorder{}
				res, err = s.run(t, run{tools: set, display: d, continueTurn: true, bcfg: tt.resumed})
				require.NoError(t, err)
				assert.True(t, res.Idle)
				assert.Equal(t, 1, res.Turns)
				assert.Empty(t, res.LastError)
				assertConversation(t, tt.wantConv, s.conversation(t))
				if tt.check != nil {
					tt.check(t, s)
				}
				rep := s.checkReplay(t)
				assert.Equal(t, 2, rep.Sessions)
				s.checkNoSecret(t)
			})
		}
	}
}

// TestDemoReplays plays back the recorded demo session (made by running
// the agent against the fake server: see cmd/agent's TestInteractive) with
// no network.
func TestDemoReplays(t *testing.T) {
	t.Parallel()
	f, err := os.Open("../../app/testdata/demo/demo.events.jsonl")
	require.NoError(t, err)
	defer f.Close()
	rep, err := agentexec.ReplayAgent(f)
	require.NoError(t, err)
	require.Nil(t, rep.Diff)
	assert.Equal(t, 1, rep.Sessions)
	assert.Greater(t, rep.Events, 30)
}

// stuckReader blocks every read until released: input that neither takes
// a deadline nor can be closed.
type stuckReader struct{ release chan struct{} }

// Read implements io.Reader.
func (r stuckReader) Read([]byte) (int, error) {
	<-r.release
	return 0, io.EOF
}

// TestStopsWithBlockedInput asks the agent to stop while its input is
// blocked in a read: Run still returns.
func TestStopsWithBlockedInput(t *testing.T) {
	sig := syscall.SIGUSR1
	tests := []struct {
		name  string
		input func(t *testing.T) io.Reader
	}{
		{"a pipe nobody writes to", func(t *testing.T) io.Reader {
			r, w := io.Pipe()
			t.Cleanup(func() { _ = w.Close() })
			return r
		}},
		{"a reader that cannot be interrupted", func(t *testing.T) io.Reader {
			r := stuckReader{release: make(chan struct{})}
			t.Cleanup(func() { close(r.release) })
			return r
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "Hi."})
			d := &recorder{onTurnEnd: func() { signalSelf(t, sig) }}
			res, err := s.run(t, run{prompt: "Hello.", input: tt.input(t), display: d, signals: []os.Signal{sig}})
			require.NoError(t, err)
			assert.Equal(t, 1, res.Turns)
			assert.True(t, res.Idle)
			assert.Equal(t, []string{"user: Hello.", "assistant: Hi."}, s.conversation(t))
		})
	}
}

// blockingHook is a Committer whose post-tools hook calls started, then
// blocks until it is cancelled.
type blockingHook struct {
	*autocommit.Committer
	started func()
}

// Hook implements agentexec.Committer.
func (b blockingHook) Hook(ctx context.Context, _ string, _ []chat.CompletedTool) (autocommit.Result, error) {
	b.started()
	<-ctx.Done()
	return autocommit.Result{}, ctx.Err()
}
