package app

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/ledger"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// TestContinuation runs a one-shot turn whose reply is cut at its token
// limit against both wire formats: the agent asks the model to continue,
// the answer is the pieces joined, the thread keeps both, and the session
// replays.
func TestContinuation(t *testing.T) {
	t.Parallel()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, p, nil,
				fakellm.Reply{Text: "The package has three parts: the parser,", AtLimit: true},
				fakellm.Reply{Text: " the checker and the emitter."})
			r := e.run(t, "", "-p", "Describe the package.")
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Equal(t, "The package has three parts: the parser, the checker and the emitter.\n", r.stdout)
			assert.Contains(t, r.stderr, "the reply reached its token limit; the model is asked to continue it (1 of 3)")
			reqs := e.srv.Requests()
			require.Len(t, reqs, 2)
			last := reqs[1].Messages[len(reqs[1].Messages)-1]
			assert.Equal(t, chat.ContinueNote, last.Text, "the model is asked to continue")
			id := e.onlyThread(t)
			assert.Equal(t, []string{"user: Describe the package.", "assistant: The package has three parts: the parser,",
				"user: " + chat.ContinueNote, "assistant:  the checker and the emitter."}, messages(e.state(t, id)))
			assert.Equal(t, 0, replayExit(t, filepath.Join(e.threads, id+".events.jsonl")).code)

			r = e.run(t, "", "-resume", id)
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Contains(t, r.stderr, "── earlier in this thread (4 messages; the last 4 shown) ──\n> Describe the package.\nThe package has three parts: the parser,\nthe checker and the emitter.\n──\n",
				"the agent's request to continue is not shown as the user's")
		})
	}
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p)+"/a tool call cut inside its arguments", func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, p, nil,
				fakellm.Reply{Text: "Writing.", ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "edit_file", Args: `{"path":"x.txt","new_text":"abc`}}, AtLimit: true},
				fakellm.Reply{Text: "I will write it in parts."})
			r := e.run(t, "", "-p", "Write x.txt.")
			require.Equal(t, 0, r.code, "the turn goes on; stderr:\n%s", r.stderr)
			assert.Equal(t, "I will write it in parts.\n", r.stdout)
			reqs := e.srv.Requests()
			require.Len(t, reqs, 2)
			res := reqs[1].Messages[len(reqs[1].Messages)-1]
			assert.True(t, res.IsError)
			assert.Contains(t, res.Text, "were cut off: the reply reached its token limit")
			assert.Contains(t, res.Text, "make the change in smaller calls")
			assert.NoFileExists(t, filepath.Join(e.ws, "x.txt"))
		})
	}
	t.Run("continuations are bounded", func(t *testing.T) {
		t.Parallel()
		cut := fakellm.Reply{Text: "more", AtLimit: true}
		e := newEnv(t, fakellm.Anthropic, nil, cut, cut, cut, cut)
		r := e.run(t, "", "-p", "Write forever.")
		require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
		assert.Equal(t, "moremoremoremore\n", r.stdout)
		assert.Len(t, e.srv.Requests(), 4, "the first reply and three continuations")
	})
}

// TestMaxTokens checks the reply's token limit each request asks for:
// the model's own, -max-tokens, or a default said once; and the flags'
// errors.
func TestMaxTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		want     int
		wantErr  string
		wantNote bool
	}{
		{name: "an unknown model gets the default, said once", want: ledger.DefaultMaxOutput, wantNote: true},
		{name: "a known model gets its own limit", args: []string{"-model", "claude-sonnet-4-5-20250929"}, want: 64_000},
		{name: "a known OpenAI model", args: []string{"-model", "gpt-4.1"}, want: 32_768},
		{name: "the flag", args: []string{"-max-tokens", "1000"}, want: 1000},
		{name: "the flag within the model's limit", args: []string{"-model", "claude-3-5-haiku", "-max-tokens", "8000"}, want: 8000},
		{name: "the flag beyond the model's limit", args: []string{"-model", "claude-3-5-haiku", "-max-tokens", "9000"},
			wantErr: "-max-tokens 9000: claude-3-5-haiku writes at most 8192 tokens a reply; give 8192 or less"},
		{name: "thinking that leaves no room for the answer", args: []string{"-thinking", "8192"},
			wantErr: "-thinking 8192: the thinking budget must be less than the reply's limit of 8192 tokens"},
		{name: "a negative limit", args: []string{"-max-tokens", "-1"}, wantErr: "-max-tokens must be positive"},
	}
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				var replies []fakellm.Reply
				if tt.wantErr == "" {
					replies = append(replies, fakellm.Reply{Text: "Hi."})
				}
				e := newEnv(t, p, nil, replies...)
				r := e.run(t, "", append(tt.args, "-p", "Hi.")...)
				if tt.wantErr != "" {
					assert.Equal(t, exitUsage, r.code)
					assert.Contains(t, r.stderr, tt.wantErr)
					assert.Empty(t, e.srv.Requests())
					return
				}
				require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
				reqs := e.srv.Requests()
				require.Len(t, reqs, 1)
				assert.Equal(t, tt.want, reqs[0].MaxTokens)
				note := "the token limits of fake-model are not known: its replies are limited to 8192 tokens (-max-tokens changes it)"
				if tt.wantNote {
					assert.Equal(t, 1, strings.Count(r.stderr, note), "said once:\n%s", r.stderr)
				} else {
					assert.NotContains(t, r.stderr, "are not known")
				}
			})
		}
	}
}

// TestThinking runs a turn with -thinking against the Anthropic wire
// format: the thinking budget is asked for, the thinking blocks go back
// with the tool results, signatures intact, the screen shows them dimmed
// apart from the answer, the thread keeps them and the session replays.
func TestThinking(t *testing.T) {
	t.Parallel()
	thought := "The user wants the files listed.\nI will call list_files."
	e := newEnv(t, fakellm.Anthropic, map[string]string{"a.txt": "a\n"},
		fakellm.Reply{Thinking: thought, RedactedThinking: "RU5DUllQVEVE", ToolCalls: []fakellm.ToolCall{{ID: "toolu_1", Name: "list_files", Args: `{}`}}},
		fakellm.Reply{Text: "There is a.txt."})
	r := e.run(t, "", "-thinking", "2000", "-p", "What files are there?")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Equal(t, "There is a.txt.\n", r.stdout, "thinking is not the answer")
	assert.Contains(t, r.stderr, "thinking: The user wants the files listed. (10 words; -v shows it whole)")
	assert.Contains(t, r.stderr, "thinking: (encrypted by the provider)")

	reqs := e.srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, 2000, reqs[0].Thinking)
	want := []chat.Thinking{{Text: thought, Signature: fakellm.Signature(thought)}, {Redacted: "RU5DUllQVEVE"}}
	require.GreaterOrEqual(t, len(reqs[1].Messages), 2)
	assert.Equal(t, want, reqs[1].Messages[1].Thinking, "sent back with the tool results")

	id := e.onlyThread(t)
	c, ok := agent.ConversationOf(e.state(t, id))
	require.True(t, ok)
	assert.Equal(t, want, c.Messages()[1].Thinking, "the thread keeps the thinking")
	assert.Equal(t, 0, replayExit(t, filepath.Join(e.threads, id+".events.jsonl")).code)
	e.checkNoSecret(t)
}

// TestCaching measures what a long turn is billed against fake servers
// that bill the prompt cache as the providers do (fakellm.Server.Bill):
// after the first request, the input billed at the full rate stays flat
// however long the conversation grows, the rest read from the cache; the
// thread's ledger and "agent sessions" have the cache reads.
func TestCaching(t *testing.T) {
	t.Parallel()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		for _, rounds := range []int{50, 200} {
			t.Run(fmt.Sprintf("%s/%d rounds", p, rounds), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, p, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
				e.srv.Bill()
				n := 0 // the rounds are numbered with four digits, so that each is as long as the one before
				e.srv.Respond(func(fakellm.Request) fakellm.Reply {
					n++
					if n > rounds {
						return fakellm.Reply{Text: "Listed them all."}
					}
					return fakellm.Reply{Text: fmt.Sprintf("Round %04d.", n), ToolCalls: []fakellm.ToolCall{{ID: fmt.Sprintf("call_%04d", n), Name: "list_files", Args: `{}`}}}
				})
				r := e.run(t, "", "-p", "List the files again and again.")
				require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
				reqs := e.srv.Requests()
				require.Len(t, reqs, rounds+1)
				var total chat.Usage
				full := make([]int, len(reqs)) // input billed at the full rate
				for i, req := range reqs {
					u := req.Billed
					total = total.Add(u)
					full[i] = u.InputTokens - u.CacheReadInputTokens - u.CacheCreationInputTokens
					if i > 1 {
						// From the third request on, each repeats the one before and adds one round.
						assert.Equal(t, full[1], full[i], "request %d: the input billed at the full rate stays flat", i+1)
						assert.Greater(t, u.CacheReadInputTokens, reqs[i-1].Billed.CacheReadInputTokens, "request %d reads more from the cache", i+1)
						assert.Equal(t, reqs[1].Billed.CacheCreationInputTokens, u.CacheCreationInputTokens, "request %d writes only its round to the cache", i+1)
					}
				}
				if p == fakellm.Anthropic {
					assert.Positive(t, reqs[0].Billed.CacheCreationInputTokens, "the first request writes the cache")
				}
				last := reqs[len(reqs)-1].Billed
				t.Logf("%s, %d rounds: first request %d tokens in, %d at the full rate; last request %d in, %d read from the cache, %d written, %d at the full rate; in all %d in, %d read, %d written, %d at the full rate (%.1f%%)",
					p, rounds, reqs[0].Billed.InputTokens, full[0], last.InputTokens, last.CacheReadInputTokens, last.CacheCreationInputTokens, full[len(full)-1],
					total.InputTokens, total.CacheReadInputTokens, total.CacheCreationInputTokens,
					total.InputTokens-total.CacheReadInputTokens-total.CacheCreationInputTokens,
					100*float64(total.InputTokens-total.CacheReadInputTokens-total.CacheCreationInputTokens)/float64(total.InputTokens))

				id := e.onlyThread(t)
				th := loadThread(t, e, id)
				assert.Equal(t, total, th.Ledger.Total, "the ledger has what the server billed")
				s := e.sessionsOf(t)
				require.Equal(t, 0, s.code, s.stderr)
				assert.Regexp(t, fmt.Sprintf(` %d +%d +- +List the files`, total.InputTokens+total.OutputTokens, total.CacheReadInputTokens), s.stdout)
			})
		}
	}
}

// loadThread loads a saved thread of the env.
func loadThread(t *testing.T, e *env, id string) *threadwire.Thread {
	t.Helper()
	store, err := thread.NewStore(e.threads)
	require.NoError(t, err)
	th, err := store.Load(id)
	require.NoError(t, err)
	return th
}

// TestThinkingRedacted checks that thinking that holds the API key is
// redacted before the screen, the thread and the event log see it, and
// that -thinking with the openai provider says that it does nothing.
func TestThinkingRedacted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Thinking: "The key is " + testKey + ", I must not say it.", Text: "Done."})
	r := e.run(t, "", "-thinking", "2000", "-v", "-p", "Hi.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stderr, "thinking: The key is [REDACTED], I must not say it.")
	assert.Empty(t, keyLeaks(r.stdout+r.stderr))
	e.checkNoSecret(t)

	o := newEnv(t, fakellm.OpenAI, nil, fakellm.Reply{Thinking: "hmm", Text: "Done."})
	r = o.run(t, "", "-thinking", "2000", "-p", "Hi.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stderr, "agent: -thinking applies to the anthropic provider")
	assert.Equal(t, "Done.\n", r.stdout)
	assert.Zero(t, o.srv.Requests()[0].Thinking)
}
