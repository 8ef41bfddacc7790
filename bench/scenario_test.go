package bench_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/bench/agentcore"
)

// Events of the scenarios, in agentcore's form.

func user(text string) agentcore.Event {
	return agentcore.Event{Kind: agentcore.UserInput, Message: chat.UserMessage(text)}
}

func delta(text string) agentcore.Event {
	return agentcore.Event{Kind: agentcore.TextDelta, Content: text}
}

func call(id, name string) chat.ToolCall {
	return chat.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(`{"path":"main.go"}`)}
}

func reply(text string, calls ...chat.ToolCall) agentcore.Event {
	return agentcore.Event{Kind: agentcore.LLMCompleted, Response: chat.Response{
		Message:    chat.Message{Role: chat.RoleAssistant, Content: text, ToolCalls: calls},
		Usage:      chat.Usage{InputTokens: 1200, OutputTokens: 80},
		StopReason: "end_turn",
	}}
}

func done(id, content string) agentcore.Event {
	return agentcore.Event{Kind: agentcore.ToolCompleted, CallID: id, Outcome: chat.ToolOutcome{Content: content}}
}

func failed(id, content string) agentcore.Event {
	return agentcore.Event{Kind: agentcore.ToolCompleted, CallID: id, Outcome: chat.ToolOutcome{Content: content, IsError: true}}
}

func progress(id string) agentcore.Event {
	return agentcore.Event{Kind: agentcore.ToolProgress, CallID: id, Progress: chat.ToolProgress{Fraction: 0.5, Message: "half way"}}
}

func llmErr(kind chat.ErrorKind, status int) agentcore.Event {
	return agentcore.Event{Kind: agentcore.LLMError, Error: chat.LLMError{Kind: kind, StatusCode: status, Message: string(kind)}}
}

func hookDone() agentcore.Event {
	return agentcore.Event{Kind: agentcore.PostToolsHookCompleted, ActionTaken: true}
}

func fire() agentcore.Event       { return agentcore.Event{Kind: agentcore.RetryTimeoutFired} }
func shutdown() agentcore.Event   { return agentcore.Event{Kind: agentcore.ShutdownRequested} }
func interrupt() agentcore.Event  { return agentcore.Event{Kind: agentcore.Interrupt} }
func undo() agentcore.Event       { return agentcore.Event{Kind: agentcore.UndoTurn} }
func compactNow() agentcore.Event { return agentcore.Event{Kind: agentcore.CompactRequested} }

// cut is a reply that stopped at its token limit, for reason (Anthropic's
// max_tokens, OpenAI's length).
func cut(text, reason string, calls ...chat.ToolCall) agentcore.Event {
	e := reply(text, calls...)
	e.Response.StopReason = reason
	return e
}

// query is the query a model without tool calling asked, after text.
func query(kind chat.QueryKind, path, text string) agentcore.Event {
	return agentcore.Event{Kind: agentcore.QueryDetected, Query: chat.Query{Kind: kind, Path: path}, Text: text,
		Usage: chat.Usage{InputTokens: 900, OutputTokens: 20}}
}

// queryDone is a query's result; failed makes it an error result.
func queryDone(content string, failed bool) agentcore.Event {
	return agentcore.Event{Kind: agentcore.QueryCompleted, Outcome: chat.ToolOutcome{Content: content, IsError: failed}}
}

// standardTurn is the benchmark's turn: user input, five text deltas, a
// reply with two tool calls (one mutating), both completions, the hook,
// and the final reply: eleven events, back to WaitingForUserInput.
func standardTurn() []agentcore.Event {
	return []agentcore.Event{
		user("Rename the config loader and fix its tests."),
		delta("I'll "), delta("look at "), delta("the loader "), delta("and its "), delta("tests first."),
		reply("I'll look at the loader and its tests first.", call("toolu_01", "read_file"), call("toolu_02", "edit_file")),
		done("toolu_01", "package config\n\nfunc Load(path string) (*Config, error) {\n\t...\n}\n"),
		done("toolu_02", "edited config/load.go: 3 lines changed"),
		hookDone(),
		reply("Done: the loader is renamed and its tests pass."),
	}
}

const turnEvents = 11

// benchConfig is the configuration every contender gets. Compaction is
// on, as in a session with a known model, with a context window of 2^30
// tokens, which the benchmark's conversations never fill: every request
// is estimated and checked against the threshold, and none is compacted.
var benchConfig = config(func(c *behavior.Config) {
	c.Model = "claude-sonnet-4-5"
	c.System = "You are a careful coding agent."
	c.MaxTokens = 8192
	c.ContextWindow = 1 << 30
	c.Tools = []chat.ToolSpec{
		{Name: "read_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "edit_file", Description: "Edit a file.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "bash", Description: "Run a command.", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
})

// config returns the default configuration with changes applied.
func config(change func(*behavior.Config)) behavior.Config {
	cfg := behavior.DefaultConfig()
	change(&cfg)
	return cfg
}

// scenario is a sequence of events fed to every contender from
// WaitingForUserInput with an empty conversation.
type scenario struct {
	name   string
	cfg    behavior.Config
	events []agentcore.Event
}

// scenarios are the turn's scenarios and the session's (see
// sessionScenarios): together they take every transition of the agent.
var scenarios = append(turnScenarios, sessionScenarios...)

// turnScenarios cover the turn: tool rounds with and without the hook,
// progress, out-of-order, duplicate and unknown completions, retries up to
// the limit and giving up, errors that are not retried, refused, ignored
// and deferred events, and shutdown from every state of the turn.
var turnScenarios = []scenario{
	{"a long session", benchConfig, []agentcore.Event{
		user("hi"), delta("Hel"), {Kind: agentcore.ToolCallDelta, CallID: "a", ToolName: "read_file", ArgumentsFragment: "{"},
		user("are you there?"), // held while busy (deferred), taken once the turn ends
		reply("", call("a", "read_file"), call("b", "bash"), call("c", "read_file")),
		progress("b"), progress("zzz"), // known, then ignored
		done("c", "C"), done("c", "again"), done("nope", "x"), delta("late"), // duplicate, unknown, refused
		done("a", "A"), user("done yet?"), failed("b", "exit 1"), // a failed bash still runs the hook
		user("now?"), hookDone(),
		llmErr(chat.ErrOverloaded, 529), fire(), llmErr(chat.ErrServer, 500), fire(),
		llmErr(chat.ErrRateLimited, 429), fire(), llmErr(chat.ErrOverloaded, 529), // gives up after 4 attempts
		fire(),                                                                    // stale timer, refused
		user("read it"), reply("reading", call("r", "read_file")), done("r", "R"), // no hook
		llmErr(chat.ErrAuth, 401), // not retried
		user("again"), reply("ok"),
		user("edit"), reply("", call("e", "edit_file"), call("e", "edit_file")), done("e", "one"), done("e", "two"),
		hookDone(), reply("edited"),
		shutdown(), shutdown(), user("still there?"), done("e", "late"), delta("late"), fire(),
	}},
	{"shutdown while calling", benchConfig, []agentcore.Event{user("hi"), shutdown(), reply("late")}},
	{"shutdown while executing", benchConfig, []agentcore.Event{user("hi"), reply("", call("a", "bash")), shutdown(), done("a", "A")}},
	{"shutdown in the hook", benchConfig, []agentcore.Event{user("hi"), reply("", call("a", "bash")), done("a", "A"), shutdown(), hookDone()}},
	{"shutdown in error", benchConfig, []agentcore.Event{user("hi"), llmErr(chat.ErrTimeout, 408), shutdown(), fire()}},
	{"retries off", config(func(c *behavior.Config) { c.Model, c.MaxRetries = "m", 0 }), []agentcore.Event{
		user("hi"), llmErr(chat.ErrNetwork, 0), user("again"), llmErr(chat.ErrInvalidRequest, 400),
	}},
	{"capped backoff and retry-after", config(func(c *behavior.Config) {
		c.Model, c.MaxRetries, c.BaseDelay, c.MaxDelay = "m", 5, 10*time.Second, 25*time.Second
	}), []agentcore.Event{
		user("hi"), llmErr(chat.ErrServer, 500), fire(), llmErr(chat.ErrServer, 500), fire(), llmErr(chat.ErrServer, 500), fire(),
		{Kind: agentcore.LLMError, Error: chat.LLMError{Kind: chat.ErrRateLimited, StatusCode: 429, RetryAfter: 7 * time.Second}},
	}},
	{"three standard turns", benchConfig, append(append(standardTurn(), standardTurn()...), standardTurn()...)},
}

// TestSameSteps feeds each scenario to the five contenders and checks
// that each event leaves them in the same state with the same action,
// carrying the same data, and that they refuse the same events.
func TestSameSteps(t *testing.T) {
	t.Parallel()
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			sameSteps(t, sc)
		})
	}
}

// sameSteps runs sc on every contender and requires the outcome of each
// event to be the generated machine's.
func sameSteps(t *testing.T, sc scenario) {
	t.Helper()
	var want []outcome
	for _, c := range contenders {
		r := c.make(sc.cfg, chat.NewConversation("T-eq"), sc.events)
		var got []outcome
		for i := range sc.events {
			got = append(got, r.step(i))
		}
		if want == nil {
			want = got
			continue
		}
		for i := range want {
			require.Equal(t, want[i], got[i], "%s, event %d (%s)", c.name, i, sc.events[i].Kind)
		}
	}
}

// TestStandardTurn checks the turn the benchmarks time: eleven events,
// each with an action, ending where it started, five messages longer.
func TestStandardTurn(t *testing.T) {
	evs := standardTurn()
	require.Len(t, evs, turnEvents)
	for _, c := range contenders {
		r := c.make(benchConfig, chat.NewConversation("T-turn"), evs)
		var actions []string
		for i := range evs {
			o := r.step(i)
			require.False(t, o.Rejected, "%s: event %d", c.name, i)
			actions = append(actions, o.Action)
			if i == len(evs)-1 {
				assert.Equal(t, "WaitingForUserInput", o.State, c.name)
				assert.Equal(t, 5, o.ConvLen, c.name)
			}
		}
		assert.Equal(t, []string{"SendLlmRequest", "DisplayMessage", "DisplayMessage", "DisplayMessage", "DisplayMessage",
			"DisplayMessage", "ExecuteTools", "WaitForInput", "RunPostToolsHook", "SendLlmRequest", "WaitForInput"}, actions, c.name)
		require.NoError(t, r.turn(), "%s: a second turn", c.name)
	}
}
