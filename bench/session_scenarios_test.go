package bench_test

import (
	"strings"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/bench/agentcore"
)

// long is a message of about a kilobyte: two exchanges of them bring
// compactConfig's conversation to its threshold.
var long = strings.Repeat("The loader reads the file, then the tests. ", 24)

// compactConfig has a context window of 2,000 tokens, no system prompt
// and no tools: its threshold is 1,232 estimated tokens (the window less
// the reply's 512 and the margin's 256), about 3,700 bytes of messages,
// which two exchanges of long messages and a user message pass.
var compactConfig = config(func(c *behavior.Config) {
	c.Model, c.MaxTokens, c.ContextWindow, c.CompactAt = "m", 512, 2000, 0.8
	c.MaxRetries, c.MaxQueries, c.MaxContinuations = 1, 2, 2
})

// nearThreshold is two exchanges of long messages: the next request
// with a message of its own passes compactConfig's threshold.
func nearThreshold() []agentcore.Event {
	return []agentcore.Event{user(long), reply(long), user(long), reply(long)}
}

// then returns nearThreshold's events followed by evs.
func then(evs ...agentcore.Event) []agentcore.Event { return append(nearThreshold(), evs...) }

// afterOne returns one exchange of long messages followed by evs: two
// kilobytes more pass compactConfig's threshold.
func afterOne(evs ...agentcore.Event) []agentcore.Event {
	return append([]agentcore.Event{user(long), reply(long)}, evs...)
}

// sessionScenarios cover what a session does besides turns: messages
// typed during a turn, held until it ends (deferred), the user
// stopping a turn in every state (Interrupt), taking it back (/undo),
// compacting (at the threshold before any request, and by /compact), a
// reply cut at its token limit and continued, and the queries of a model
// without tool calling, with their limits, failures and retries.
var sessionScenarios = []scenario{
	{"the user stops the turn", benchConfig, []agentcore.Event{
		interrupt(), // ignored between turns
		user("hi"), delta("Hel"), interrupt(), interrupt(),
		user("read it"), reply("", call("a", "read_file"), call("b", "read_file")), done("b", "B"), interrupt(), // reads: cancelled, no hook
		user("edit it"), reply("", call("e", "edit_file"), call("r", "read_file")), done("r", "R"), interrupt(), // the edit may have run: the hook
		interrupt(), user("now?"), done("e", "late"), hookDone(), // ignored, held while the hook runs, the hook's end
		user("run it"), reply("", call("b", "bash")), done("b", "ok"), interrupt(), hookDone(), // the hook of a finished round, stopped
		user("again"), llmErr(chat.ErrOverloaded, 529), interrupt(), fire(), // stopped while a retry waits; the stale timer refused
		user("look"), query(chat.QueryRead, "go.mod", "I need go.mod."), interrupt(), queryDone("late", false),
		user("bye"), reply("", call("x", "bash")), done("x", "ok"), interrupt(), shutdown(), hookDone(),
	}},
	{"messages typed during a turn wait for its end", benchConfig, []agentcore.Event{
		user("one"), user("two"), delta("On"), user("three"), // two and three held (deferred)
		reply("first"),                                               // the turn ends and two starts the next
		reply("", call("a", "read_file")), user("four"), interrupt(), // stopped: three starts the next
		reply("third"),                         // four starts the next
		user("five"), shutdown(), user("late"), // five dropped with the session, late ignored
	}},
	{"undo", benchConfig, []agentcore.Event{
		undo(), // nothing to take back
		user("first"), reply("one"), user("second"), reply("", call("a", "read_file")), done("a", "A"), reply("two"),
		undo(), undo(), undo(),
		user("third"), undo(), // refused while calling
		reply("three"), undo(),
	}},
	{"a reply cut at its token limit", compactConfig, []agentcore.Event{
		user("write the docs"),
		cut("The package has", "max_tokens"), cut(" three parts", "length"), cut(" and more", "max_tokens"), // continued twice, then kept
		user("and the tests"), cut("", "max_tokens", call("a", "read_file")), // cut in a call: not continued
		done("a", "A"), cut("Tested", "end_turn"), // not cut
		user("once more"), cut("Part one", "length"), reply("and two."),
	}},
	{"continuations off", config(func(c *behavior.Config) { c.Model, c.MaxContinuations = "m", 0 }), []agentcore.Event{
		user("write"), cut("cut", "max_tokens"),
	}},
	{"queries", compactConfig, []agentcore.Event{
		user("what does it need?"),
		query(chat.QueryRead, "go.mod", "Let me read go.mod."), user("held"), delta("refused"),
		queryDone("module m", false),
		query(chat.QueryList, "", "And list the files."), queryDone("no such directory", true),
		query(chat.QuerySearch, "src", "One more."), // the third of a turn allowed two: refused with an error
		user("next turn"), query(chat.QueryProject, "", "What project is this?"), queryDone("a Go module", false), reply("A Go module."),
		user("last"), query(chat.QueryEnvironment, "", "Which Go?"), shutdown(), queryDone("late", false),
	}},
	{"queries off", config(func(c *behavior.Config) { c.Model, c.MaxQueries = "m", 0 }), []agentcore.Event{
		user("hi"), query(chat.QueryRead, "a", "Read a."),
	}},
	{"compaction before a request, resumed", compactConfig, then(
		user("go on"), delta("ignored"), agentcore.Event{Kind: agentcore.ToolCallDelta, CallID: "a"}, user("held"), compactNow(),
		reply("The user asked for the loader; it reads the file."), reply("Going on."),
	)},
	{"compaction with an empty summary", compactConfig, then(user("go on"), reply("  "), user("go on"), reply("Summary."), reply("ok"))},
	{"compaction retried, then given up", compactConfig, then(
		user("go on"), llmErr(chat.ErrOverloaded, 529), user("held"), fire(), llmErr(chat.ErrOverloaded, 529),
		user("go on"), llmErr(chat.ErrAuth, 401),
	)},
	{"compaction retried, then done", compactConfig, then(
		user("go on"), llmErr(chat.ErrRateLimited, 429), fire(), reply("Summary."), reply("ok"),
	)},
	{"compaction stopped", compactConfig, then(
		user("go on"), interrupt(),
		user("go on"), llmErr(chat.ErrServer, 500), interrupt(), fire(),
	)},
	{"compaction after tools", compactConfig, afterOne(
		user("read it"), reply("", call("a", "read_file")), done("a", long+long), reply("Summary."), reply("ok"),
	)},
	{"compaction after the hook", compactConfig, afterOne(
		user("edit it"), reply("", call("e", "edit_file")), done("e", long+long), hookDone(), reply("Summary."), reply("ok"),
	)},
	{"compaction after a continuation", compactConfig, afterOne(
		user("write"), cut(long+long, "max_tokens"), reply("Summary."), reply("ok"),
	)},
	{"compaction after a query", compactConfig, afterOne(
		user("what?"), query(chat.QueryRead, "a", "Read a."), queryDone(long+long, false), reply("Summary."), reply("ok"),
	)},
	{"compaction asked for", benchConfig, []agentcore.Event{
		compactNow(),                                       // nothing to compact
		user("fix the test"), reply("fixed"), compactNow(), // the last exchange is kept: nothing before it
		user("now the docs"), reply("done"),
		compactNow(), delta("ignored"), reply("The user asked to fix the test, then the docs; both are done."),
		user("and the README"), reply("done too"),
		compactNow(), interrupt(), // stopped: nothing changed
		compactNow(), llmErr(chat.ErrOverloaded, 529), interrupt(),
		compactNow(), llmErr(chat.ErrOverloaded, 529), fire(), reply(""), // an empty summary refused
		compactNow(), llmErr(chat.ErrInvalidRequest, 400), // not retried
		compactNow(), shutdown(), reply("late"),
	}},
}
