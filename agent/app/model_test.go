package app

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/ledger"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
)

// TestModelCommand switches the model mid-session: /model shows the model
// and its price; /model NAME goes on with the same thread on that model,
// which the next request names, the thread records, and whose price and
// limits follow; three words are refused (TestModelCommandProviders
// switches the provider).
func TestModelCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "One."}, fakellm.Reply{Text: "Two."})
	r := e.run(t, "First.\n/model\n/model a b c\n/model a b\n/model claude-haiku-4-5-20251001\nSecond.\n/usage\n/model\n", "-price", "7,9")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Equal(t, "One.\nTwo.\n", r.stdout)
	for _, want := range []string{
		"model: fake-model (anthropic)\nprice: $7 in, $9 out per million tokens\nlimits: not known (replies of 8192 tokens",
		"/model: give a model name, or a provider and a name, e.g. /model claude-sonnet-4-5 or /model openai gpt-4.1\n",
		"switching to claude-haiku-4-5-20251001: the thread is saved and goes on with it (-price was fake-model's",
		"(anthropic claude-haiku-4-5-20251001 in " + e.ws + ")",
		"model: claude-haiku-4-5-20251001 (anthropic)\nprice: $1 in, $5 out per million tokens\nlimits: a context window of 200000 tokens, replies of 64000 at most",
		// Each turn at its own model's price: the first at fake-model's
		// -price (10 in, 20 out at $7/$9), the second at haiku's list
		// price ($1/$5), not the whole thread at haiku's ($0.0002).
		"agent: last turn: 10 tokens in, 20 out, $0.0001\n",
		"agent: thread: 20 tokens in, 40 out, $0.0004, over 2 replies",
	} {
		assert.Contains(t, r.stderr, want)
	}
	assert.NotContains(t, r.stderr, "── earlier in this thread", "the conversation is on the screen already")

	reqs := e.srv.Requests()
	require.Len(t, reqs, 2)
	var models []string
	for _, req := range reqs {
		var body struct {
			Model     string `json:"model"`
			MaxTokens int    `json:"max_tokens"`
		}
		require.NoError(t, json.Unmarshal(req.Body, &body))
		models = append(models, body.Model)
	}
	assert.Equal(t, []string{"fake-model", "claude-haiku-4-5-20251001"}, models)
	assert.Equal(t, 64000, reqs[1].MaxTokens, "the new model's limit")
	assert.Len(t, reqs[1].Messages, 3, "the same conversation goes on")
	id := e.onlyThread(t)
	assert.Equal(t, []string{"user: First.", "assistant: One.", "user: Second.", "assistant: Two."}, messages(e.state(t, id)))
	store, err := thread.NewStore(e.threads)
	require.NoError(t, err)
	th, err := store.Load(id)
	require.NoError(t, err)
	assert.Equal(t, "claude-haiku-4-5-20251001", th.Model, "the thread records the model")
	assert.Equal(t, []chat.ModelUsage{
		{Provider: "anthropic", Model: "fake-model", Usage: chat.Usage{InputTokens: 10, OutputTokens: 20}},
		{Provider: "anthropic", Model: "claude-haiku-4-5-20251001", Usage: chat.Usage{InputTokens: 10, OutputTokens: 20}},
	}, th.Ledger.Models, "the ledger records each turn's model")
}

// TestModelList: "agent -model list" lists the models known, with their
// prices and limits, and runs nothing.
func TestModelList(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil)
	r := e.run(t, "", "-model", "list")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	lines := strings.Split(r.stdout, "\n")
	assert.Regexp(t, `^MODEL +PROVIDER +PRICE IN/OUT \(\$/M TOKENS\) +CONTEXT +MAX REPLY +IMAGES`, lines[0])
	assert.Regexp(t, `(?m)^claude-sonnet-4-5 +anthropic +3 / 15 +200000 +64000 +yes +\(default\)$`, r.stdout)
	assert.Regexp(t, `(?m)^gpt-4\.1 +openai +2 / 8 +\d+ +\d+ +yes +\(default\)$`, r.stdout)
	assert.Regexp(t, `(?m)^o3-mini +openai +1\.1 / 4\.4 +200000 +100000 +no *$`, r.stdout, "a model that takes no images")
	assert.Empty(t, e.threadIDs(t), "nothing run")
}

// TestModelCommandTerminal switches the model in the line editor: the
// same terminal goes on, on the new model, and a custom command runs
// there too.
func TestModelCommandTerminal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{".agent/commands/hello.md": "Say hello to $1."},
		fakellm.Reply{Text: "One."}, fakellm.Reply{Text: "Hello, you."})
	s := startPTY(t, e, nil)
	s.waitScreen(t, "> ")
	s.typeKeys(t, "First.\r")
	s.waitScreen(t, "One.")
	s.typeKeys(t, "/model claude-haiku-4-5\r")
	s.waitScreen(t, "resumed (anthropic claude-haiku-4-5 in ")
	s.typeKeys(t, "/hello you\r")
	s.waitScreen(t, "Hello, you.")
	s.typeKeys(t, "\x04")
	require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())
	assert.Equal(t, []string{"First.", "Say hello to you."}, userMessages(e))
}

// TestModelCommandProviders switches the provider mid-session, each on a
// fake server of its own: -base-url is the first provider's, and the
// other's comes from its variable. The conversation carries over whole
// both ways: the tool calls each provider made, under their IDs, with
// their results, and Anthropic's thinking block, which OpenAI is not
// sent and Anthropic gets back intact. The thread records each provider
// and model, and the limits follow the model.
func TestModelCommandProviders(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"a.txt": "alpha\n"},
		fakellm.Reply{Thinking: "Read it first.", ToolCalls: []fakellm.ToolCall{{ID: "toolu_01AbC", Name: "read_file", Args: `{"path":"a.txt"}`}}},
		fakellm.Reply{Text: "One."},
		fakellm.Reply{Text: "Three."})
	oa := fakellm.New(t, fakellm.OpenAI,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "call_Xy9", Name: "list_files", Args: `{"path":"."}`}}},
		fakellm.Reply{Text: "Two."})
	r := e.runWith(t, "First.\n/model gpt-4.1\nSecond.\n/model\n/model anthropic claude-haiku-4-5\nThird.\n",
		[]string{"OPENAI_BASE_URL=" + oa.BaseURL()})
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Equal(t, "One.\nTwo.\nThree.\n", r.stdout)
	for _, want := range []string{
		"switching to gpt-4.1: the thread is saved and goes on with it (openai's API at " + oa.BaseURL() + " ($OPENAI_BASE_URL))",
		"(openai gpt-4.1 in " + e.ws + ")",
		"model: gpt-4.1 (openai)\nprice: $2 in, $8 out per million tokens",
		"switching to claude-haiku-4-5: the thread is saved and goes on with it (anthropic's API at " + e.srv.BaseURL() + " (-base-url))",
		"(anthropic claude-haiku-4-5 in " + e.ws + ")",
	} {
		assert.Contains(t, r.stderr, want)
	}

	an, op := e.srv.Requests(), oa.Requests()
	require.Len(t, an, 3)
	require.Len(t, op, 2)
	gpt, ok := ledger.LimitsOf("gpt-4.1")
	require.True(t, ok)
	assert.Equal(t, gpt.MaxOutput, op[0].MaxTokens, "gpt-4.1's limit")
	// OpenAI gets Anthropic's tool call and its result, without the thinking.
	msgs := op[0].Messages
	require.Len(t, msgs, 5, "%+v", msgs)
	assert.Equal(t, "First.", msgs[0].Text)
	require.Len(t, msgs[1].ToolCalls, 1)
	assert.Equal(t, "toolu_01AbC", msgs[1].ToolCalls[0].ID)
	assert.Equal(t, "toolu_01AbC", msgs[2].ToolCallID)
	assert.Contains(t, msgs[2].Text, "alpha")
	assert.Equal(t, "One.", msgs[3].Text)
	assert.Equal(t, "Second.", msgs[4].Text)
	assert.NotContains(t, string(op[0].Body), "Read it first.", "no thinking block goes to OpenAI")
	// Anthropic gets everything back: its thinking, OpenAI's call.
	msgs = an[2].Messages
	require.Len(t, msgs, 9, "%+v", msgs)
	require.Len(t, msgs[1].Thinking, 1)
	assert.Equal(t, "Read it first.", msgs[1].Thinking[0].Text)
	assert.NotEmpty(t, msgs[1].Thinking[0].Signature, "the signature intact")
	require.Len(t, msgs[5].ToolCalls, 1)
	assert.Equal(t, "call_Xy9", msgs[5].ToolCalls[0].ID)
	assert.Equal(t, "list_files", msgs[5].ToolCalls[0].Name)
	assert.Equal(t, "call_Xy9", msgs[6].ToolCallID)
	assert.Contains(t, msgs[6].Text, "a.txt")
	assert.Equal(t, "Two.", msgs[7].Text)
	assert.Equal(t, "Third.", msgs[8].Text)
	haiku, ok := ledger.LimitsOf("claude-haiku-4-5")
	require.True(t, ok)
	assert.Equal(t, haiku.MaxOutput, an[2].MaxTokens)

	id := e.onlyThread(t)
	store, err := thread.NewStore(e.threads)
	require.NoError(t, err)
	th, err := store.Load(id)
	require.NoError(t, err)
	assert.Equal(t, []string{"anthropic", "claude-haiku-4-5"}, []string{th.Provider, th.Model}, "the thread records the last provider and model")
	log := eventLog(t, e)
	assert.Contains(t, log, `"provider":"openai"`, "the event log names each session's provider")
	assert.Equal(t, 0, replayExit(t, filepath.Join(e.threads, id+".events.jsonl")).code, "the event log replays")
}

// TestModelCommandNoKey: /model to another provider's model is refused,
// naming the variable, when that provider's key was not set; the session
// goes on on its model.
func TestModelCommandNoKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "Still here."})
	r := e.runWith(t, "/model gpt-4.1\n/model openai my-local-model\nHello.\n", []string{"OPENAI_API_KEY="})
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stderr, "/model: gpt-4.1 is a model of openai, whose API key OPENAI_API_KEY was not set when the agent started; set it and run: agent -provider openai -model gpt-4.1 -resume ")
	assert.Contains(t, r.stderr, "/model: my-local-model is a model of openai, whose API key OPENAI_API_KEY was not set")
	assert.Equal(t, "Still here.\n", r.stdout)
	require.Len(t, e.srv.Requests(), 1)
	assert.Contains(t, string(e.srv.Requests()[0].Body), `"model":"fake-model"`)
}

// TestModelTarget reads /model's argument: a known model is its
// provider's, an unknown one the session's, "PROVIDER NAME" names it.
func TestModelTarget(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		current, args, provider, name, err string
	}{
		{"anthropic", "gpt-4.1", "openai", "gpt-4.1", ""},
		{"openai", "claude-haiku-4-5-20251001", "anthropic", "claude-haiku-4-5-20251001", ""},
		{"openai", "qwen3", "openai", "qwen3", ""},
		{"anthropic", "qwen3", "anthropic", "qwen3", ""},
		{"anthropic", "openai qwen3", "openai", "qwen3", ""},
		{"anthropic", "  openai   qwen3 ", "openai", "qwen3", ""},
		{"anthropic", "azure qwen3", "", "", "give a model name, or a provider and a name, e.g. /model claude-sonnet-4-5 or /model openai gpt-4.1"},
		{"openai", "a b c", "", "", "give a model name, or a provider and a name, e.g. /model gpt-4.1 or /model anthropic claude-sonnet-4-5"},
	} {
		t.Run(tt.args, func(t *testing.T) {
			t.Parallel()
			p, n, err := modelTarget(tt.current, tt.args)
			if tt.err != "" {
				assert.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []string{tt.provider, tt.name}, []string{p, n})
		})
	}
}

// TestSessionBaseURL: -base-url is the first session's provider's; a
// session of the other provider gets none (its variable, or its public
// API, applies).
func TestSessionBaseURL(t *testing.T) {
	t.Parallel()
	o := options{provider: "anthropic", baseURL: "http://127.0.0.1:1", baseURLFor: "anthropic"}
	assert.Equal(t, "http://127.0.0.1:1", sessionBaseURL(o))
	o.provider = "openai"
	assert.Empty(t, sessionBaseURL(o))
	o.baseURLFor = ""
	assert.Equal(t, "http://127.0.0.1:1", sessionBaseURL(o), "before the first session settled it")
}
