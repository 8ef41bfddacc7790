package agentexec_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// TestToolsStartAfterSave checks that no tool starts before the thread
// file records its call as pending, so that a crash at any moment after a
// tool started resumes with the call "interrupted" and never runs it
// again.
func TestToolsStartAfterSave(t *testing.T) {
	t.Parallel()
	calls := []fakellm.ToolCall{{ID: "c1", Name: "probe", Args: `{}`}, {ID: "c2", Name: "probe", Args: `{}`}, {ID: "c3", Name: "probe", Args: `{}`}}
	s := newSession(t, fakellm.Anthropic, nil, fakellm.Reply{ToolCalls: calls}, fakellm.Reply{Text: "Done."})
	var mu sync.Mutex
	var seen []string
	probe := toolFunc{name: "probe", run: func(context.Context, json.RawMessage, func(chat.ToolProgress)) (string, error) {
		// The thread as a crash now would leave it.
		st := s.state(t)
		mu.Lock()
		defer mu.Unlock()
		et, ok := st.(agent.ExecutingTools)
		if !ok {
			seen = append(seen, fmt.Sprintf("saved in %s", st.Kind()))
			return "ok", nil
		}
		seen = append(seen, fmt.Sprintf("saved executing %d calls", et.Executions.Len()))
		return "ok", nil
	}}
	set, err := tools.NewSet(tools.Options{}, probe)
	require.NoError(t, err)
	res, err := s.run(t, run{prompt: "Go.", tools: set})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Turns)
	assert.Equal(t, []string{"saved executing 3 calls", "saved executing 3 calls", "saved executing 3 calls"}, seen)
}

// TestToolLimits checks the limits on the calls of one reply: how many
// run, and how many at once.
func TestToolLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		calls         int
		limits        agentexec.Limits
		wantRun       int
		wantParallel  int
		wantRefused   int
		wantInMessage string
	}{
		{name: "within the limits", calls: 4, limits: agentexec.Limits{ToolCalls: 4, ParallelTools: 4}, wantRun: 4, wantParallel: 4},
		{name: "too many calls", calls: 7, limits: agentexec.Limits{ToolCalls: 3, ParallelTools: 8}, wantRun: 3, wantParallel: 3, wantRefused: 4,
			wantInMessage: "the reply asked for 7 and at most 3 are run per reply"},
		{name: "parallel limit", calls: 6, limits: agentexec.Limits{ToolCalls: 10, ParallelTools: 2}, wantRun: 6, wantParallel: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var calls []fakellm.ToolCall
			for i := range tt.calls {
				calls = append(calls, fakellm.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "slow", Args: `{}`})
			}
			s := newSession(t, fakellm.OpenAI, nil, fakellm.Reply{ToolCalls: calls}, fakellm.Reply{Text: "Done."})
			var running, most, ran atomic.Int32
			// All the calls allowed to run together must be running before
			// any finishes, so that the maximum seen is the limit's.
			gate := make(chan struct{})
			var once sync.Once
			slow := toolFunc{name: "slow", run: func(ctx context.Context, _ json.RawMessage, _ func(chat.ToolProgress)) (string, error) {
				n := running.Add(1)
				defer running.Add(-1)
				ran.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				if int(n) == tt.wantParallel {
					once.Do(func() { close(gate) })
				}
				select {
				case <-gate:
				case <-ctx.Done():
					return "", ctx.Err()
				}
				return "ok", nil
			}}
			set, err := tools.NewSet(tools.Options{}, slow)
			require.NoError(t, err)
			res, err := s.run(t, run{prompt: "Go.", tools: set, limits: tt.limits})
			require.NoError(t, err)
			assert.Equal(t, 1, res.Turns)
			assert.Equal(t, tt.wantRun, int(ran.Load()), "calls run")
			assert.Equal(t, tt.wantParallel, int(most.Load()), "most calls running at once")
			refused := 0
			for _, line := range s.conversation(t) {
				if strings.Contains(line, agentexec.TooManyCallsPrefix) {
					refused++
					assert.Contains(t, line, tt.wantInMessage)
					assert.True(t, strings.HasSuffix(line, "(error)"), "a refused call is an error result: %s", line)
				}
			}
			assert.Equal(t, tt.wantRefused, refused, "calls refused")
		})
	}
}

// TestDamagedThreads checks that a thread saved in a state the agent
// cannot resume from, or saved with a field misspelled, gives a clear error
// at once instead of an agent waiting forever or an empty conversation.
func TestDamagedThreads(t *testing.T) {
	t.Parallel()
	saved := func(state string) string {
		return `{"format":1,"machine":"Agent","shape":"sha256:x","state":` + state + `}`
	}
	tests := []struct {
		name  string
		state string
		want  string
	}{
		{"executing no tools", saved(`{"kind":"executing_tools"}`), "executing a round of no tool calls"},
		{"calling with nothing", saved(`{"kind":"calling_llm","conversation":{"id":"x","messages":[]},"retries":0}`), "calling the LLM with an empty conversation"},
		{"retrying nothing", saved(`{"kind":"error","conversation":{"id":"x","messages":[]}}`), "waiting to retry an empty conversation"},
		{"transient state", saved(`{"kind":"processing_llm_response","conversation":{"id":"x","messages":[{"role":"user","content":"hi"}]}}`), "cannot restore the transient state ProcessingLlmResponse"},
		{"shutting down", saved(`{"kind":"shutting_down"}`), "saved shutting down"},
		{"not a state", saved(`{"kind":"dancing"}`), "the thread's journal is damaged"},
		{"a misspelled field", saved(`{"kind":"waiting_for_user_input","conversaton":{"id":"x","messages":[]}}`), `unknown field "conversaton" (did you mean "conversation"?)`},
		{"another machine", `{"format":1,"machine":"Door","shape":"sha256:x","state":{"kind":"shutting_down"}}`, `it is a "Door" machine, not a "Agent" one`},
	}
	b, err := behavior.New(func() behavior.Config { c := behavior.DefaultConfig(); c.Model = "m"; return c }())
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			th := &threadwire.Thread{Version: threadwire.Version, ID: "t1", State: json.RawMessage(tt.state)}
			_, err := agentexec.New(agentexec.Config{Behavior: b, Provider: nopProvider{}, Tools: &tools.Set{}, Thread: th})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "resume thread t1")
		})
	}
}

// nopProvider is a provider that is never called.
type nopProvider struct{}

func (nopProvider) Stream(context.Context, chat.Request, func(llm.Event)) error { return nil }
func (nopProvider) Name() string                                                { return "nop" }

// TestInputLineLimit checks that a line over the limit is refused with a
// notice, and the lines around it are sent.
func TestInputLineLimit(t *testing.T) {
	t.Parallel()
	s := newSession(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "One."}, fakellm.Reply{Text: "Two."})
	d := &recorder{}
	input := "first\n" + strings.Repeat("x", 100) + "\nsecond\n"
	res, err := s.run(t, run{input: strings.NewReader(input), display: d, limits: agentexec.Limits{InputLine: 50}})
	require.NoError(t, err)
	assert.Equal(t, 2, res.Turns)
	assertConversation(t, []string{"user: first", "assistant: One.", "user: second", "assistant: Two."}, s.conversation(t))
	var refused []string
	for _, n := range d.notices {
		if strings.Contains(n, "-max-input-line") {
			refused = append(refused, n)
		}
	}
	require.Len(t, refused, 1, "notices: %q", d.notices)
	assert.Contains(t, refused[0], "a message of 100 bytes is longer than the limit of 50 bytes (-max-input-line) and was not sent")
}

// TestSecretsRedacted checks that a secret a tool printed, raw or
// encoded, or one the LLM wrote, reaches neither the next request, the
// display, the thread nor the event log.
func TestSecretsRedacted(t *testing.T) {
	t.Parallel()
	s := newSession(t, fakellm.OpenAI, nil,
		fakellm.Reply{Text: "Key is " + testKey + ".", ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "leak", Args: `{"k":"` + testKey + `"}`}}},
		fakellm.Reply{Text: "Done."})
	leak := toolFunc{name: "leak", run: func(_ context.Context, _ json.RawMessage, progress func(chat.ToolProgress)) (string, error) {
		progress(chat.ToolProgress{Message: "found " + testKey})
		return "raw " + testKey + "\nbase64 " + base64.StdEncoding.EncodeToString([]byte("u:"+testKey)), nil
	}}
	set, err := tools.NewSet(tools.Options{}, leak)
	require.NoError(t, err)
	d := &recorder{}
	_, err = s.run(t, run{prompt: "Go.", tools: set, display: d})
	require.NoError(t, err)
	reqs := s.srv.Requests()
	require.Len(t, reqs, 2)
	assert.NotContains(t, string(reqs[1].Body), testKey)
	assert.NotContains(t, string(reqs[1].Body), base64.StdEncoding.EncodeToString([]byte("u:" + testKey))[4:30])
	assert.Contains(t, string(reqs[1].Body), "[REDACTED]")
	shown := fmt.Sprint(d.text.String(), d.replies, d.progress, d.results)
	assert.NotContains(t, shown, testKey)
	s.checkNoSecret(t)
}

// TestLedger checks the account of tokens: per turn, per thread, saved
// with the thread and carried over a resume, shown on "/usage".
func TestLedger(t *testing.T) {
	t.Parallel()
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			// The fake server reports 10 tokens in and 20 out for every reply.
			per := chat.Usage{InputTokens: 10, OutputTokens: 20}
			s := newSession(t, p, map[string]string{"a.txt": "a\n"},
				fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "read_file", Args: `{"path":"a.txt"}`}}},
				fakellm.Reply{Text: "Read it."},
				fakellm.Reply{Text: "Second."})
			d := &recorder{}
			res, err := s.run(t, run{input: strings.NewReader("First.\nSecond.\n/usage\n"), display: d,
				commands: func(ctx context.Context, a *agentexec.Agent, line string) {
					assert.Equal(t, "/usage", line)
					assert.NoError(t, a.ShowUsage(ctx))
				}})
			require.NoError(t, err)
			assert.Equal(t, 2, res.Turns)
			want := chat.Ledger{Total: per.Add(per).Add(per), Turns: []chat.Usage{per.Add(per), per}, Replies: 3,
				Models: []chat.ModelUsage{{Provider: string(s.provider), Model: "fake-model", Usage: per.Add(per).Add(per)}}}
			assert.Equal(t, want, res.Ledger)
			assert.Equal(t, want, s.thread(t).Ledger, "the ledger is saved with the thread")
			require.NotEmpty(t, d.usage, "/usage shows the ledger")

			s.srv.Add(fakellm.Reply{Text: "Third."})
			res, err = s.run(t, run{prompt: "Third."})
			require.NoError(t, err)
			assert.Equal(t, 4, res.Ledger.Replies, "a resumed thread goes on counting")
			assert.Equal(t, per.Add(per).Add(per).Add(per), res.Ledger.Total)
			assert.Len(t, res.Ledger.Turns, 3)
		})
	}
}

// splitProvider streams a reply whose text and tool arguments split the
// test key across deltas.
type splitProvider struct{}

func (splitProvider) Name() string { return "split" }

func (splitProvider) Stream(_ context.Context, req chat.Request, emit func(llm.Event)) error {
	half := len(testKey) / 2
	if req.Messages[len(req.Messages)-1].Role == chat.RoleTool {
		emit(llm.TextDelta{Text: "Done."})
		emit(llm.Completed{Response: chat.Response{Message: chat.Message{Role: chat.RoleAssistant, Content: "Done."}}})
		return nil
	}
	for _, piece := range []string{"key: ", testKey[:half], testKey[half:], " end"} {
		emit(llm.TextDelta{Text: piece})
	}
	args := `{"k":"` + testKey + `"}`
	for _, piece := range []string{args[:5], args[5 : 5+half], args[5+half:]} {
		emit(llm.ToolCallDelta{CallID: "c1", ToolName: "probe", Fragment: piece})
	}
	msg := chat.Message{Role: chat.RoleAssistant, Content: "key: " + testKey + " end"}
	msg.ToolCalls = []chat.ToolCall{{ID: "c1", Name: "probe", Arguments: []byte(args)}}
	emit(llm.Completed{Response: chat.Response{Message: msg}})
	return nil
}

// TestSecretSplitAcrossDeltas checks that a secret the LLM streams in two
// pieces is redacted from the display and the event log too.
func TestSecretSplitAcrossDeltas(t *testing.T) {
	t.Parallel()
	s := newSession(t, fakellm.Anthropic, nil)
	probe := toolFunc{name: "probe", run: func(context.Context, json.RawMessage, func(chat.ToolProgress)) (string, error) { return "ok", nil }}
	set, err := tools.NewSet(tools.Options{}, probe)
	require.NoError(t, err)
	d := &recorder{}
	_, err = s.run(t, run{prompt: "Go.", tools: set, display: d, provider: splitProvider{}})
	require.NoError(t, err)
	assert.Equal(t, "key: [REDACTED] endDone.", d.text.String(), "the streamed text, redacted, nothing lost")
	s.checkNoSecret(t)
	log, err := os.ReadFile(s.logPath)
	require.NoError(t, err)
	assert.NotContains(t, string(log), testKey[:len(testKey)/2+1])
	assert.NotContains(t, string(log), testKey[len(testKey)/2-1:])
}
