package app

import (
	"errors"
	"fmt"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/ledger"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/agent/internal/query"
)

// Default models per provider.
var defaultModels = map[string]string{
	llm.NameAnthropic: "claude-sonnet-4-5",
	llm.NameOpenAI:    "gpt-4.1",
}

// systemPrompt is the system prompt of every request.
const systemPrompt = `You are a coding agent working in a software project (the workspace).
Use the tools to look at the code before changing it: list_files to find your way, read_file to read a file before editing it, edit_file to change or create files, bash to build, test and inspect.
Paths are relative to the workspace root. Make small, focused changes and check them (build, run the tests) when you can.
Your changes are committed to git automatically at the end of each turn; the first line of your last reply becomes the commit's subject, so end by saying briefly what you did.`

// queryPrompt is the system prompt of every request to a model without
// tool calling (-tool-calls=false): it teaches the queries the agent
// recognises in the model's replies (see agent/internal/query).
const queryPrompt = `You are a coding agent working in a software project (the workspace), helping the user with its code.
` + query.ProtocolHelp + `
You cannot change files or run commands yourself: once you know enough, answer with the changes to make (as unified diffs or whole files) and the commands to run.`

// behaviorFlags are the flags that set the behaviour's configuration: how
// each sets it, and what behavior.New asks of it, in the user's terms.
var behaviorFlags = []struct {
	name string
	set  func(c *behavior.Config, o options)
	want string
}{
	{"max-retries", func(c *behavior.Config, o options) { c.MaxRetries = o.maxRetries }, "must be 0 or more"},
	{"retry-delay", func(c *behavior.Config, o options) { c.BaseDelay = o.retryDelay },
		"must be positive and at most " + behavior.DefaultMaxDelay.String() + " (the longest delay between retries)"},
	{"compact-at", func(c *behavior.Config, o options) { c.CompactAt = o.compactAt },
		"must be a share of the context window from 0 (never compact) to 1, e.g. 0.8"},
	{"context-window", func(c *behavior.Config, o options) { c.ContextWindow = o.contextWindow },
		"must be the model's context window in tokens, e.g. 200000 (0: not known, no compaction)"},
	{"max-queries", func(c *behavior.Config, o options) { c.MaxQueries = o.maxQueries }, "must be 0 or more"},
}

// behaviorConfig returns the behaviour's configuration: the defaults, the
// flags, and what the program settled on (the model: -model, the resumed
// thread's or the provider's default; the reply's token limit, see
// maxTokensOf) or provides (the system prompt, the tools).
func behaviorConfig(o options, model string, specs []chat.ToolSpec) behavior.Config {
	c := behavior.DefaultConfig()
	for _, f := range behaviorFlags {
		f.set(&c, o)
	}
	c.Model, c.System, c.Tools = model, systemPromptOf(o.mode), specs
	if !o.set["context-window"] {
		c.ContextWindow = contextWindowOf(model)
	}
	c.MaxTokens, _, _ = maxTokensOf(o, model)
	c.Thinking = o.thinking
	if !o.toolCalls {
		c.System, c.Tools = queryPromptOf(o.mode), nil
	}
	return c
}

// maxTokensOf returns the reply's token limit for model: -max-tokens, or
// the model's largest reply, or ledger.DefaultMaxOutput with a note to
// show once for a model whose limits are not known. It is an error for
// -max-tokens to pass the model's known limit, or for -thinking not to
// leave room for an answer.
func maxTokensOf(o options, model string) (n int, note string, err error) {
	lim, known := ledger.LimitsOf(model)
	switch {
	case o.maxTokens > 0:
		n = o.maxTokens
		if known && n > lim.MaxOutput {
			return n, "", fmt.Errorf("-%s %d: %s writes at most %d tokens a reply; give %d or less", llm.FlagMaxTokens, n, model, lim.MaxOutput, lim.MaxOutput)
		}
	case known:
		n = lim.MaxOutput
	default:
		n = ledger.DefaultMaxOutput
		note = fmt.Sprintf("the token limits of %s are not known: its replies are limited to %d tokens (-%s changes it)", model, n, llm.FlagMaxTokens)
	}
	if o.thinking > 0 && o.thinking >= n {
		return n, note, fmt.Errorf("-%s %d: the thinking budget must be less than the reply's limit of %d tokens, which it is part of; lower it or raise -%s", llm.FlagThinking, o.thinking, n, llm.FlagMaxTokens)
	}
	return n, note, nil

}

// queryStrategy returns how the replies are read for queries: not at all
// when the model calls tools.
func queryStrategy(o options) query.Strategy {
	if o.toolCalls {
		return nil
	}
	return query.Phrases{}
}

// checkBehavior reports, in terms of the flags, what behavior.New would
// refuse in the configuration the flags give: each flag is tried alone on
// the defaults, so the error names every flag at fault.
func checkBehavior(o options) error {
	var errs []error
	for _, f := range behaviorFlags {
		c := behavior.DefaultConfig()
		f.set(&c, o)
		if _, err := behavior.New(c); err != nil {
			errs = append(errs, fmt.Errorf("-%s %s", f.name, f.want))
		}
	}
	return errors.Join(errs...)
}

// priceOf returns the model's price: -price, or the known list price.
func priceOf(o options) (ledger.Price, error) {
	if o.price != "" {
		p, err := ledger.ParsePrice(o.price)
		if err != nil {
			return p, fmt.Errorf("-price: %w", err)
		}
		return p, nil
	}
	return ledger.PriceOf(o.model)
}
