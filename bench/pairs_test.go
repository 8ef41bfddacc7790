package bench_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/bench/agentcore"
	"github.com/fsmgen/fsmgen/gen/agent"
)

// restingStates lead a machine from WaitingForUserInput to each state it
// can rest in, and to each way a state's guards can read its data (an
// Error or a Compacting of each origin, a round of tools with and without
// a mutating call, a conversation with and without an exchange to
// compact).
var restingStates = []struct {
	name   string
	cfg    behavior.Config
	prefix []agentcore.Event
}{
	{"WaitingForUserInput, empty", benchConfig, nil},
	{"WaitingForUserInput after two exchanges", benchConfig, []agentcore.Event{user("fix it"), reply("fixed"), user("docs"), reply("done")}},
	{"CallingLlm", benchConfig, []agentcore.Event{user("hi")}},
	{"ExecutingTools, reads", benchConfig, []agentcore.Event{user("hi"), reply("", call("a", "read_file"), call("b", "read_file"))}},
	{"ExecutingTools, an edit", benchConfig, []agentcore.Event{user("hi"), reply("", call("a", "read_file"), call("e", "edit_file"))}},
	{"PostToolsHook", benchConfig, []agentcore.Event{user("hi"), reply("", call("a", "bash")), done("a", "A")}},
	{"Error of a request", benchConfig, []agentcore.Event{user("hi"), llmErr(chat.ErrOverloaded, 529)}},
	{"Error of a compaction", compactConfig, then(user("go on"), llmErr(chat.ErrOverloaded, 529))},
	{"Error of /compact", benchConfig, []agentcore.Event{user("fix it"), reply("fixed"), user("docs"), reply("done"), compactNow(), llmErr(chat.ErrOverloaded, 529)}},
	{"StoppingTurn", benchConfig, []agentcore.Event{user("hi"), reply("", call("a", "bash")), interrupt()}},
	{"Compacting before a request", compactConfig, then(user("go on"))},
	{"Compacting for /compact", benchConfig, []agentcore.Event{user("fix it"), reply("fixed"), user("docs"), reply("done"), compactNow()}},
	{"RunningQuery", benchConfig, []agentcore.Event{user("hi"), query(chat.QueryRead, "go.mod", "Read go.mod.")}},
	{"ShuttingDown", benchConfig, []agentcore.Event{shutdown()}},
}

// oneOfEach returns an event of every kind, with what it carries.
func oneOfEach() []agentcore.Event {
	return []agentcore.Event{
		user("next"), delta("text"), {Kind: agentcore.ToolCallDelta, CallID: "a", ToolName: "read_file", ArgumentsFragment: "{"},
		reply("A summary of it."), llmErr(chat.ErrOverloaded, 529), progress("a"), done("a", "A"), hookDone(), fire(), shutdown(),
		interrupt(), undo(), compactNow(), query(chat.QueryList, "", "List them."), queryDone("a\nb", false),
	}
}

// pairs returns a scenario for every resting state and event: the way to
// the state, then the event.
func pairs() []scenario {
	var out []scenario
	for _, s := range restingStates {
		for _, ev := range oneOfEach() {
			out = append(out, scenario{
				name:   fmt.Sprintf("%s × %s", s.name, ev.Kind),
				cfg:    s.cfg,
				events: append(append([]agentcore.Event(nil), s.prefix...), ev),
			})
		}
	}
	return out
}

// TestEveryPair feeds every event in every resting state to the five
// contenders and checks that they take the same steps: the rules of the
// table, and the events each state ignores or refuses.
func TestEveryPair(t *testing.T) {
	t.Parallel()
	require.Len(t, oneOfEach(), int(agentcore.QueryCompleted), "an event of every kind")
	for _, sc := range pairs() {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			sameSteps(t, sc)
		})
	}
}

// TestScenarioCoversTheMachine checks on the generated machine's observer
// that the scenarios and the pairs take every rule of its table: every
// transition, and every pair a state ignores or refuses. The equivalence
// tests are then over the whole machine, not a corner of it.
func TestScenarioCoversTheMachine(t *testing.T) {
	t.Parallel()
	fired := map[int]bool{}
	for _, sc := range append(append([]scenario(nil), scenarios...), pairs()...) {
		m, err := agent.New(agent.Config{Behavior: mustBehavior(sc.cfg), Handler: &agent.Recorder{}, Initial: agent.WaitingForUserInput{Conversation: chat.NewConversation("T-cov")}})
		require.NoError(t, err)
		m.SetObserver(func(s agent.Step) { fired[s.Rule] = true })
		for i := range sc.events {
			_ = m.HandleEvent(toAgent(&sc.events[i]))
		}
	}
	var missed []string
	for i, r := range agent.Rules() {
		if !fired[i] {
			missed = append(missed, fmt.Sprintf("rule %d (%s: %s × %s)", i, r.Kind, r.From, r.Event))
		}
	}
	assert.Empty(t, missed, "rules no scenario takes")
	assert.NotEmpty(t, fired)
}
