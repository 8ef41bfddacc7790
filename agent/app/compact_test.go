package app

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/ledger"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// compactWindow is the context window the compaction tests give the
// agent (-context-window), in tokens: a few rounds of bigFile fill it.
const compactWindow = 12000

// bigFile is a file of the workspace whose reading makes the context grow.
var bigFile = strings.Repeat("the quick brown fox jumps over the lazy dog\n", 60) // 2640 bytes

// isSummaryRequest reports whether a request is a summary request: the
// agent offers its tools with every other request.
func isSummaryRequest(req fakellm.Request) bool { return len(req.Tools) == 0 }

// summaryText is the fake model's summary.
const summaryText = "Task: read big.txt again and again. Decisions: none. Files: big.txt (read). State: reading goes on."

// compactingModel is a fake model that reads big.txt in rounds of one
// call, rounds times, then answers "All done."; it answers summary
// requests with summaryText. It counts the rounds itself, since
// compaction shortens the conversation the requests carry.
func compactingModel(rounds int) func(fakellm.Request) fakellm.Reply {
	var mu sync.Mutex
	n := 0
	return func(req fakellm.Request) fakellm.Reply {
		if isSummaryRequest(req) {
			return fakellm.Reply{Text: summaryText}
		}
		mu.Lock()
		defer mu.Unlock()
		if n++; n > rounds {
			return fakellm.Reply{Text: "All done."}
		}
		return fakellm.Reply{Text: fmt.Sprintf("Reading, round %d.", n),
			ToolCalls: []fakellm.ToolCall{{ID: fmt.Sprintf("call_%d", n), Name: "read_file", Args: `{"path":"big.txt"}`}}}
	}
}

// estimator returns the agent's behaviour as the tests' runs configure it
// (system prompt, tools, window), to estimate the requests' sizes as the
// agent does.
func estimator(t *testing.T, e *env, model string, window int) *behavior.Agent {
	t.Helper()
	ws, err := tools.NewWorkspace(e.ws)
	require.NoError(t, err)
	defer ws.Close()
	cfg := behavior.DefaultConfig()
	cfg.Model, cfg.System, cfg.Tools, cfg.ContextWindow = model, systemPrompt, tools.Default(ws, tools.Options{}).Specs(), window
	cfg.MaxTokens = ledger.DefaultMaxOutput
	if lim, ok := ledger.LimitsOf(model); ok {
		cfg.MaxTokens = lim.MaxOutput
	}
	b, err := behavior.New(cfg)
	require.NoError(t, err)
	return b
}

// requestTokens estimates a recorded request's tokens as the agent does:
// its messages, system prompt and tools (a summary request has none).
func requestTokens(b *behavior.Agent, req fakellm.Request) int {
	c := chat.NewConversation("x")
	for _, m := range req.Messages {
		msg := chat.Message{Role: chat.Role(m.Role), Content: m.Text, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, chat.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: []byte(tc.Args)})
		}
		c = c.Append(msg)
	}
	if isSummaryRequest(req) {
		return (len(req.System) + c.Size()) / behavior.BytesPerToken
	}
	return b.EstimateTokens(c)
}

// compactionStats checks every request a compacting session sent: none
// refused by the server's context window, each under the threshold (a
// summary request under the window with its reply), each with room for
// its max_tokens in the window, and counted by the agent at least as
// high as the server counts it; each request right after a summary
// starts with the summary, holds the user's prompt verbatim, and ends
// with the pending round whole (the call and its result). It returns the
// number of summaries, the largest request's tokens and the largest of a
// request right after a summary.
func compactionStats(t *testing.T, b *behavior.Agent, window int, reqs []fakellm.Request, prompt string) (summaries, largest, after int) {
	t.Helper()
	for i, req := range reqs {
		tokens := requestTokens(b, req)
		largest = max(largest, tokens)
		require.False(t, req.Refused, "request %d passes the context window: %d tokens and max_tokens %d", i, req.InputTokens, req.MaxTokens)
		require.LessOrEqual(t, tokens+req.MaxTokens+b.Margin(), window, "request %d: its input and max_tokens pass the window", i)
		if req.InputTokens > 0 {
			require.LessOrEqual(t, req.InputTokens, tokens, "request %d: the agent counts it at least as high as the server", i)
		}
		if !isSummaryRequest(req) {
			require.LessOrEqual(t, tokens, b.Threshold(), "request %d passes the threshold", i)
			continue
		}
		assert.LessOrEqual(t, req.MaxTokens, behavior.SummaryMaxTokens, "the summary's reply is short")
		summaries++
		require.Len(t, req.Messages, 1, "a summary request is one transcript")
		assert.Contains(t, req.Messages[0].Text, "Transcript of the conversation to summarise")
		require.Less(t, i+1, len(reqs), "the request that waited for the summary was sent")
		next := reqs[i+1]
		require.NotEmpty(t, next.Messages)
		after = max(after, requestTokens(b, next))
		assert.True(t, strings.HasPrefix(next.Messages[0].Text, behavior.SummaryHeading), "request %d starts with the summary: %.80q", i+1, next.Messages[0].Text)
		assert.Contains(t, next.Messages[0].Text, summaryText)
		var user strings.Builder
		for _, m := range next.Messages {
			if m.Role == "user" {
				user.WriteString(m.Text)
			}
		}
		assert.Contains(t, user.String(), prompt, "the user's message is kept verbatim")
		msgs := next.Messages
		last, call := msgs[len(msgs)-1], msgs[len(msgs)-2]
		require.Equal(t, "tool", last.Role, "request %d ends with the pending round's result", i+1)
		require.Len(t, call.ToolCalls, 1, "the pending round's call precedes its result")
		assert.Equal(t, call.ToolCalls[0].ID, last.ToolCallID)
		assert.True(t, strings.TrimSuffix(last.Text, "\n") == strings.TrimSuffix(bigFile, "\n"), "request %d: the pending round's result is whole", i+1)
	}
	return summaries, largest, after
}

// TestCompactionAtThreshold runs a one-shot session of many rounds of
// tools against both wire formats with a small context window, which the
// fake server enforces as the providers do (a request whose input and
// max_tokens pass it is refused), and models whose replies are limited to
// a third of it (claude-3-5-haiku's 8192 tokens) or more than half
// (gpt-4o's 16384), at their default max_tokens: the conversation is
// compacted whenever the next request would pass the threshold, which
// leaves room for the reply; every request stays under that with its
// max_tokens, the session ends with the answer, the thread resumes from
// the compacted conversation, and the event log replays.
func TestCompactionAtThreshold(t *testing.T) {
	t.Parallel()
	const window = 24000
	tests := []struct {
		p      fakellm.Provider
		model  string
		rounds int
	}{
		{fakellm.Anthropic, "claude-3-5-haiku", 40},
		{fakellm.OpenAI, "gpt-4o", 40},
		{fakellm.Anthropic, "claude-3-5-haiku", 500},
		{fakellm.OpenAI, "gpt-4o", 500},
	}
	for _, tt := range tests {
		p, model, rounds := tt.p, tt.model, tt.rounds
		t.Run(fmt.Sprintf("%s/%d rounds", p, rounds), func(t *testing.T) {
			t.Parallel()
			if rounds > 100 && testing.Short() {
				t.Skip("a long session; run without -short")
			}
			prompt := fmt.Sprintf("Read big.txt %d times.", rounds)
			e := newEnv(t, p, map[string]string{"big.txt": bigFile})
			e.srv.ContextWindow(window)
			e.srv.Respond(compactingModel(rounds))
			r := e.run(t, "", "-model", model, "-context-window", fmt.Sprint(window), "-p", prompt)
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Equal(t, "All done.\n", r.stdout)
			assert.Contains(t, r.stderr, "compacting the conversation")
			assert.Contains(t, r.stderr, "compacted:")

			b := estimator(t, e, model, window)
			reqs := e.srv.Requests()
			summaries, largest, after := compactionStats(t, b, window, reqs, prompt)
			assert.GreaterOrEqual(t, summaries, rounds/16, "a session of %d rounds is compacted every few rounds", rounds)
			assert.Equal(t, rounds+1+summaries, len(reqs))
			t.Logf("%s, %d rounds: %d requests, %d compactions, largest request %d tokens (threshold %d), after a compaction at most %d", p, rounds, len(reqs), summaries, largest, b.Threshold(), after)
			assert.Less(t, after, b.Threshold()/2, "compaction shortens the request")

			id := e.onlyThread(t)
			msgs := messages(e.state(t, id))
			require.NotEmpty(t, msgs)
			assert.True(t, strings.HasPrefix(msgs[0], "user: "+behavior.SummaryHeading), "the saved thread starts with the summary: %q", msgs[0])
			assert.Equal(t, "assistant: All done.", msgs[len(msgs)-1])
			rp := replayExit(t, filepath.Join(e.threads, id+".events.jsonl"))
			assert.Equal(t, 0, rp.code, "the event log replays: %s", rp.stdout+rp.stderr)

			// Resumed, the thread goes on from the compacted conversation.
			e.srv.Respond(func(req fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: "Resumed."} })
			before := len(e.srv.Requests())
			r = e.run(t, "", "-model", model, "-context-window", fmt.Sprint(window), "-resume", id, "-p", "And now?")
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Equal(t, "Resumed.\n", r.stdout)
			reqs = e.srv.Requests()[before:]
			require.Len(t, reqs, 1)
			assert.True(t, strings.HasPrefix(reqs[0].Messages[0].Text, behavior.SummaryHeading))
			assert.Equal(t, "And now?", reqs[0].Messages[len(reqs[0].Messages)-1].Text)
			assert.Equal(t, 0, replayExit(t, filepath.Join(e.threads, id+".events.jsonl")).code, "the event log replays after the resume")
			e.checkNoSecret(t)
		})
	}
}

// TestCompactCommand compacts between turns with /compact: the summary
// request carries no tools, and the next request holds the summary, the
// last exchange whole and the new message.
func TestCompactCommand(t *testing.T) {
	t.Parallel()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, p, nil,
				fakellm.Reply{Text: "First answer."},
				fakellm.Reply{Text: "Second answer."},
				fakellm.Reply{Text: summaryText},
				fakellm.Reply{Text: "Third answer."},
			)
			r := e.run(t, "First task.\nSecond task.\n/compact\nThird task.\n")
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Contains(t, r.stderr, "compacting the conversation (4 messages), as you asked")
			assert.Contains(t, r.stderr, "compacted: 4 messages are now 3")
			assert.NotContains(t, r.stdout, summaryText, "the summary is not shown as a reply")

			reqs := e.srv.Requests()
			require.Len(t, reqs, 4)
			assert.Empty(t, reqs[2].Tools, "the summary request offers no tools")
			assert.Contains(t, reqs[2].Messages[0].Text, "First answer.")
			var texts []string
			for _, m := range reqs[3].Messages {
				texts = append(texts, m.Role+": "+m.Text)
			}
			head := "user: " + behavior.SummaryHeading + "\n\n" + summaryText
			if p == fakellm.Anthropic { // consecutive user messages are one
				assert.Equal(t, []string{head + "Second task.", "assistant: Second answer.", "user: Third task."}, texts)
			} else {
				assert.Equal(t, []string{head, "user: Second task.", "assistant: Second answer.", "user: Third task."}, texts)
			}

			id := e.onlyThread(t)
			msgs := messages(e.state(t, id))
			assert.Equal(t, []string{"user: " + behavior.SummaryHeading + "\n\n" + summaryText, "user: Second task.", "assistant: Second answer.", "user: Third task.", "assistant: Third answer."}, msgs)
			assert.Equal(t, 0, replayExit(t, filepath.Join(e.threads, id+".events.jsonl")).code, "the event log replays")

			// The thread keeps its first prompt through the compaction.
			r = e.sessionsOf(t)
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Regexp(t, ` First task\.\n$`, r.stdout)
			assert.NotContains(t, r.stdout, "(compacted)")
		})
	}
}

// TestCompactCommandRefused: /compact with nothing to summarise says so
// and sends nothing; /compact's summary refused by the server ends the
// command with the error and keeps the conversation whole.
func TestCompactCommandRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.OpenAI, nil,
		fakellm.Reply{Text: "First answer."},
		fakellm.Reply{Text: "Second answer."},
		fakellm.Reply{Status: 400, ErrorMessage: "prompt is too long"},
	)
	r := e.run(t, "/compact\nFirst task.\n/compact\nSecond task.\n/compact\n")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stdout+r.stderr, "nothing to compact: the conversation holds no exchange before the last one")
	assert.Contains(t, r.stderr, "compacting the conversation failed")
	assert.Contains(t, r.stderr, "prompt is too long")
	assert.Len(t, e.srv.Requests(), 3)
	assert.Equal(t, []string{"user: First task.", "assistant: First answer.", "user: Second task.", "assistant: Second answer."}, messages(e.state(t, e.onlyThread(t))))
}

// TestKillDuringCompaction kills the agent with SIGKILL while the summary
// request is in flight, then resumes the thread: one-shot, the compaction
// is done again and the turn ends; interactively, the turn is stopped as
// Ctrl-C stops it and nothing is sent. Nothing is lost and the log
// replays.
func TestKillDuringCompaction(t *testing.T) {
	t.Parallel()
	for _, oneShot := range []bool{true, false} {
		t.Run(fmt.Sprintf("one-shot=%v", oneShot), func(t *testing.T) {
			t.Parallel()
			const prompt, rounds = "Read big.txt twenty times.", 20
			e := newEnv(t, fakellm.Anthropic, map[string]string{"big.txt": bigFile})
			hold := make(chan struct{})
			defer close(hold)
			model := compactingModel(rounds)
			e.srv.Respond(func(req fakellm.Request) fakellm.Reply {
				if isSummaryRequest(req) {
					return fakellm.Reply{Wait: hold, Text: summaryText}
				}
				return model(req)
			})
			killWhen(t, e, func() bool {
				for _, req := range e.srv.Requests() {
					if isSummaryRequest(req) {
						return true
					}
				}
				return false
			}, "-context-window", fmt.Sprint(compactWindow), "-p", prompt)
			id := e.onlyThread(t)
			st := e.state(t, id)
			require.Equal(t, "Compacting", st.Kind().String(), "the thread was saved compacting")
			whole := messages(st)
			conv, _ := agent.ConversationOf(st)
			last, _ := conv.Last()
			require.Equal(t, chat.RoleTool, last.Role, "the request that waits for the summary follows a round of tools")
			before := len(e.srv.Requests())
			e.srv.Respond(model)

			if !oneShot {
				r := e.run(t, "", "-context-window", fmt.Sprint(compactWindow), "-resume", id)
				require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
				assert.Len(t, e.srv.Requests(), before, "nothing is sent before the user types")
				assert.Equal(t, append(whole, "user: "+chat.UserStoppedNote), messages(e.state(t, id)), "the conversation is whole, the turn stopped")
				assert.Equal(t, 0, replayExit(t, filepath.Join(e.threads, id+".events.jsonl")).code, "the event log replays")
				return
			}
			r := e.run(t, "", "-context-window", fmt.Sprint(compactWindow), "-resume", id, "-p", "Go on.")
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Contains(t, r.stderr, "resuming: asking the model for the summary of the conversation again")
			msgs := messages(e.state(t, id))
			assert.True(t, strings.HasPrefix(msgs[0], "user: "+behavior.SummaryHeading))
			assert.Contains(t, msgs, "user: "+prompt, "the user's message survived")
			assert.Equal(t, "assistant: All done.", msgs[len(msgs)-1])
			reqs := e.srv.Requests()[before:]
			require.GreaterOrEqual(t, len(reqs), 2)
			assert.True(t, isSummaryRequest(reqs[0]), "the summary is asked for again")
			pending := reqs[1].Messages[len(reqs[1].Messages)-1]
			assert.Equal(t, last.ToolCallID, pending.ToolCallID, "the round pending at the kill is sent after the summary")
			assert.Equal(t, 0, replayExit(t, filepath.Join(e.threads, id+".events.jsonl")).code, "the event log replays")
		})
	}
}

// TestCompactionKeepsTheTurnsCommit edits files in a second turn
// compacted on the way: the turn's one commit still names the user's
// request.
func TestCompactionKeepsTheTurnsCommit(t *testing.T) {
	t.Parallel()
	const prompt, rounds = "Write twelve copies of the file.", 12
	e := newEnv(t, fakellm.OpenAI, nil)
	var mu sync.Mutex
	n := 0
	e.srv.Respond(func(req fakellm.Request) fakellm.Reply {
		if isSummaryRequest(req) {
			return fakellm.Reply{Text: summaryText}
		}
		mu.Lock()
		defer mu.Unlock()
		switch n++; {
		case n == 1:
			return fakellm.Reply{Text: "Hi."}
		case n > rounds+1:
			return fakellm.Reply{Text: "Wrote the copies."}
		}
		args := fmt.Sprintf(`{"path":"copy%02d.txt","old_str":"","new_str":%q}`, n, bigFile)
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: fmt.Sprintf("call_%d", n), Name: "edit_file", Args: args}}}
	})
	r := e.run(t, "Hello.\n"+prompt+"\n", "-context-window", fmt.Sprint(compactWindow))
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	require.Contains(t, r.stderr, "compacted:")
	msg := gittest.Git(t, e.ws, "log", "-1", "--format=%B")
	assert.Contains(t, msg, "Wrote the copies.")
	assert.Contains(t, msg, "Asked: "+prompt)
	assert.NotContains(t, msg, "Summary of the earlier conversation")
	assert.Equal(t, "2", gittest.Git(t, e.ws, "rev-list", "--count", "HEAD"), "one commit for the turn")
}

// TestCompactionAfterACutReply compacts the conversation before the
// request that continues a reply cut at its token limit: the request
// after the summary still holds the cut reply before the note that asks
// to continue it, and the turn's answer is the pieces joined.
func TestCompactionAfterACutReply(t *testing.T) {
	t.Parallel()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			cut := "Here is the long story: " + strings.Repeat("once upon a time ", 900) // 15,000 bytes
			e := newEnv(t, p, nil,
				fakellm.Reply{Text: "First answer. " + strings.Repeat("detail ", 400)},
				fakellm.Reply{Text: cut, AtLimit: true},
				fakellm.Reply{Text: summaryText},
				fakellm.Reply{Text: " The end."})
			e.srv.ContextWindow(compactWindow)
			r := e.run(t, "First task.\nTell a long story.\n", "-context-window", fmt.Sprint(compactWindow))
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Contains(t, r.stderr, "compacted:")
			reqs := e.srv.Requests()
			require.Len(t, reqs, 4)
			require.True(t, isSummaryRequest(reqs[2]), "the continuation waits for a compaction")
			var texts []string
			for _, m := range reqs[3].Messages {
				texts = append(texts, m.Role+": "+m.Text)
			}
			head := "user: " + behavior.SummaryHeading + "\n\n" + summaryText
			want := []string{head, "user: Tell a long story.", "assistant: " + cut, "user: " + chat.ContinueNote}
			if p == fakellm.Anthropic { // consecutive user messages are one
				want = []string{head + "Tell a long story.", "assistant: " + cut, "user: " + chat.ContinueNote}
			}
			assert.Equal(t, want, texts, "the model sees the reply it is asked to continue")
			assert.Contains(t, r.stdout, "once upon a time once upon a time")
			assert.Contains(t, r.stdout, " The end.")
		})
	}
}
