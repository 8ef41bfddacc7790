package app

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
)

// taskCall is a reply that hands a task to a subagent.
var taskCall = fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "t1", Name: "task", Args: `{"description": "look", "prompt": "Look."}`}}}

// requestModels returns the model each request named.
func requestModels(t *testing.T, reqs []fakellm.Request) []string {
	t.Helper()
	var models []string
	for _, req := range reqs {
		var body struct {
			Model string `json:"model"`
		}
		require.NoError(t, json.Unmarshal(req.Body, &body))
		models = append(models, body.Model)
	}
	return models
}

// usage is what each reply of the fake server used.
var usage = chat.Usage{InputTokens: 10, OutputTokens: 20}

// TestSubagentFollowsModel: a subagent started after /model runs on the
// session's model then, of its provider, not on the model the session
// started with; its thread records that model, and the parent's ledger
// counts its replies under it.
func TestSubagentFollowsModel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		switchTo string
		provider string // of the model switched to
		want     []chat.ModelUsage
	}{
		{"same provider", "claude-haiku-4-5", "anthropic", []chat.ModelUsage{
			{Provider: "anthropic", Model: "fake-model", Usage: usage},
			{Provider: "anthropic", Model: "claude-haiku-4-5", Usage: chat.Usage{InputTokens: 30, OutputTokens: 60}}}},
		{"another provider", "gpt-4.1", "openai", []chat.ModelUsage{
			{Provider: "anthropic", Model: "fake-model", Usage: usage},
			{Provider: "openai", Model: "gpt-4.1", Usage: chat.Usage{InputTokens: 30, OutputTokens: 60}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "One."})
			after := e.srv // the server of the model switched to
			var extra []string
			if tt.provider == "openai" {
				after = fakellm.New(t, fakellm.OpenAI)
				extra = []string{"OPENAI_BASE_URL=" + after.BaseURL()}
			}
			after.Add(taskCall, fakellm.Reply{Text: "Child."}, fakellm.Reply{Text: "Two."})
			r := e.runWith(t, "First.\n/model "+tt.switchTo+"\nSecond.\n", extra)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Contains(t, r.stderr, "✓ task: Child.")

			reqs := after.Requests()
			if after == e.srv {
				reqs = reqs[1:]
			}
			require.Len(t, reqs, 3)
			assert.Contains(t, reqs[1].System, "You are a subagent")
			assert.Equal(t, []string{tt.switchTo, tt.switchTo, tt.switchTo}, requestModels(t, reqs), "the parent and its subagent on the new model")
			parent, child := e.subagentThreads(t)
			assert.Equal(t, []string{tt.provider, tt.switchTo}, []string{child.Provider, child.Model})
			assert.Equal(t, []chat.ModelUsage{{Provider: tt.provider, Model: tt.switchTo, Usage: usage}}, child.Ledger.Models)
			assert.Equal(t, tt.want, parent.Ledger.Models, "the subagent's reply counted under the model that ran it")
		})
	}
}

// TestSubagentModelFlag: with -subagent-model the subagents run on that
// model, of its provider (here the other's, through its base URL
// variable), before and after a /model switch of the session's; the
// parent's ledger counts each reply under its model, and a turn's cost
// prices each model's tokens at its price.
func TestSubagentModelFlag(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil, taskCall, fakellm.Reply{Text: "One."}, taskCall, fakellm.Reply{Text: "Two."})
	oa := fakellm.New(t, fakellm.OpenAI, fakellm.Reply{Text: "Child one."}, fakellm.Reply{Text: "Child two."})
	r := e.runWith(t, "First.\n/usage\n/model claude-haiku-4-5\nSecond.\n/model\n", []string{"OPENAI_BASE_URL=" + oa.BaseURL()},
		"-subagent-model", "o3-mini", "-price", "7,9")
	require.Equal(t, 0, r.code, r.stderr)
	// The first turn: 20 tokens in and 40 out of fake-model's at -price
	// ($7, $9), 10 in and 20 out of o3-mini's at its list price ($1.1,
	// $4.4): $0.0006, not $0.0008 were it all fake-model's.
	assert.Contains(t, r.stderr, "agent: last turn: 30 tokens in, 60 out, $0.0006\n")
	assert.Contains(t, r.stderr, "agent: thread: 30 tokens in, 60 out, $0.0006, over 3 replies\n")
	assert.Contains(t, r.stderr, "model: claude-haiku-4-5 (anthropic)\n")
	assert.Contains(t, r.stderr, "subagents: o3-mini (openai), as -subagent-model says\n")
	assert.Contains(t, r.stderr, "✓ task: Child one.")
	assert.Contains(t, r.stderr, "✓ task: Child two.")
	assert.Equal(t, []string{"fake-model", "fake-model", "claude-haiku-4-5", "claude-haiku-4-5"}, requestModels(t, e.srv.Requests()))
	child := oa.Requests()
	require.Len(t, child, 2)
	assert.Equal(t, []string{"o3-mini", "o3-mini"}, requestModels(t, child), "the subagents on -subagent-model, an image-less model")
	assert.Contains(t, child[0].System, "You are a subagent")

	var parent string
	for _, id := range e.threadIDs(t) {
		_, th, err := e.saved(id)
		require.NoError(t, err)
		if th.SubagentOf == "" {
			parent = id
			assert.Equal(t, []chat.ModelUsage{
				{Provider: "anthropic", Model: "fake-model", Usage: usage},
				{Provider: "openai", Model: "o3-mini", Usage: usage},
				{Provider: "anthropic", Model: "fake-model", Usage: usage},
				{Provider: "anthropic", Model: "claude-haiku-4-5", Usage: usage},
				{Provider: "openai", Model: "o3-mini", Usage: usage},
				{Provider: "anthropic", Model: "claude-haiku-4-5", Usage: usage},
			}, th.Ledger.Models)
			continue
		}
		assert.Equal(t, []string{"openai", "o3-mini"}, []string{th.Provider, th.Model})
	}
	require.NotEmpty(t, parent)
	assert.Len(t, e.threadIDs(t), 3)
}

// TestSubagentModelRefused: -subagent-model is checked when the agent
// starts, as -model is: each refusal says why and what to give, exits 2
// and sends nothing.
func TestSubagentModelRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		extra []string
		args  []string
		want  string
	}{
		{"list", nil, []string{"-subagent-model", "list"},
			"agent: -subagent-model list: agent -model list lists the models; give -subagent-model the name of one\n"},
		{"unknown, to the public API", nil, []string{"-base-url", "", "-subagent-model", "claude-haiku-4-6"},
			`agent: -subagent-model claude-haiku-4-6: not a model the agent knows (did you mean "claude-haiku-4-5"?) (agent -model list lists them); a name it does not know is sent only to a server of your own (-base-url, or $ANTHROPIC_BASE_URL)`},
		{"no key", []string{"OPENAI_API_KEY="}, []string{"-subagent-model", "gpt-4.1"},
			"agent: -subagent-model gpt-4.1: a model of openai, whose API key OPENAI_API_KEY is not set; set it, or give a model of anthropic\n"},
		{"max tokens", nil, []string{"-max-tokens", "100000", "-subagent-model", "claude-haiku-4-5"},
			"agent: -subagent-model claude-haiku-4-5: -max-tokens 100000: claude-haiku-4-5 writes at most 64000 tokens a reply; give 64000 or less\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, nil)
			r := e.runWith(t, "", tt.extra, append(tt.args, "-p", "Hello.")...)
			assert.Equal(t, exitUsage, r.code, r.stderr)
			assert.Contains(t, r.stderr, tt.want)
			assert.Empty(t, e.srv.Requests())
			assert.Empty(t, e.threadIDs(t))
		})
	}
}

// TestSubagentModelLocal: a model the agent does not know is taken for
// the subagents of a session whose server is the user's own, as -model
// takes one, and named in their requests.
func TestSubagentModelLocal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil, taskCall, fakellm.Reply{Text: "Child."}, fakellm.Reply{Text: "Done."})
	r := e.run(t, "", "-subagent-model", "my-small-model", "-p", "Look.")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{"fake-model", "my-small-model", "fake-model"}, requestModels(t, e.srv.Requests()))
	h := e.run(t, "", "-h")
	assert.Contains(t, h.stderr, "-subagent-model name")
}

// TestSubagentModelKeepsProvider: a -subagent-model the agent does not
// know is of the provider the run started on, and stays so after /model
// moves the session to the other provider.
func TestSubagentModelKeepsProvider(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "One."}, fakellm.Reply{Text: "Child."})
	oa := fakellm.New(t, fakellm.OpenAI, taskCall, fakellm.Reply{Text: "Two."})
	r := e.runWith(t, "First.\n/model gpt-4.1\nSecond.\n", []string{"OPENAI_BASE_URL=" + oa.BaseURL()}, "-subagent-model", "my-small-model")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "✓ task: Child.")
	assert.Equal(t, []string{"fake-model", "my-small-model"}, requestModels(t, e.srv.Requests()), "the subagent on the first provider's server")
	assert.Equal(t, []string{"gpt-4.1", "gpt-4.1"}, requestModels(t, oa.Requests()))
}
