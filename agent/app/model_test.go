package app

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
)

// TestModelCommand switches the model mid-session: /model shows the model
// and its price; /model NAME goes on with the same thread on that model,
// which the next request names, the thread records, and whose price and
// limits follow; another provider's model and a second name are refused.
func TestModelCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "One."}, fakellm.Reply{Text: "Two."})
	r := e.run(t, "First.\n/model\n/model gpt-4.1\n/model a b\n/model claude-haiku-4-5-20251001\nSecond.\n/usage\n/model\n", "-price", "7,9")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Equal(t, "One.\nTwo.\n", r.stdout)
	for _, want := range []string{
		"model: fake-model (anthropic)\nprice: $7 in, $9 out per million tokens\nlimits: not known (replies of 8192 tokens",
		"/model: gpt-4.1 is a model of openai, and this session talks to anthropic: start a session with -provider openai -model gpt-4.1 -resume ",
		"/model: give one model name",
		"switching to claude-haiku-4-5-20251001: the thread is saved and goes on with it (-price was fake-model's",
		"(anthropic claude-haiku-4-5-20251001 in " + e.ws + ")",
		"model: claude-haiku-4-5-20251001 (anthropic)\nprice: $1 in, $5 out per million tokens\nlimits: a context window of 200000 tokens, replies of 64000 at most",
		"agent: thread: 20 tokens in, 40 out, $0.0002, over 2 replies",
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
}

// TestModelList: "agent -model list" lists the models known, with their
// prices and limits, and runs nothing.
func TestModelList(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil)
	r := e.run(t, "", "-model", "list")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	lines := strings.Split(r.stdout, "\n")
	assert.Regexp(t, `^MODEL +PROVIDER +PRICE IN/OUT \(\$/M TOKENS\) +CONTEXT +MAX REPLY`, lines[0])
	assert.Regexp(t, `(?m)^claude-sonnet-4-5 +anthropic +3 / 15 +200000 +64000 +\(default\)$`, r.stdout)
	assert.Regexp(t, `(?m)^gpt-4\.1 +openai +2 / 8 +\d+ +\d+ +\(default\)$`, r.stdout)
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
