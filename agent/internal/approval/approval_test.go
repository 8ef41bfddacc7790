package approval_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/approval"
)

func TestPolicy(t *testing.T) {
	tests := []struct {
		policy                   approval.Policy
		asks                     bool
		mutating, readOnly, both bool // ShouldAsk: a mutating call unrequested, a read-only one requested, a mutating one requested
	}{
		{approval.Untrusted, true, true, false, true},
		{approval.OnRequest, true, false, false, true},
		{approval.Never, false, false, false, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			var p approval.Policy
			require.NoError(t, p.Set(string(tt.policy)))
			assert.Equal(t, tt.policy, p)
			assert.Equal(t, string(tt.policy), p.String())
			assert.Equal(t, tt.asks, p.Asks())
			assert.Equal(t, tt.mutating, p.ShouldAsk(true, false))
			assert.Equal(t, tt.readOnly, p.ShouldAsk(false, true))
			assert.Equal(t, tt.both, p.ShouldAsk(true, true))
		})
	}
	_, err := approval.ParsePolicy("sometimes")
	assert.ErrorContains(t, err, `unknown approval policy "sometimes": use untrusted`)
}

func TestParseAnswer(t *testing.T) {
	tests := []struct {
		line string
		want approval.Answer
	}{
		{"y", approval.Answer{Verdict: approval.Granted}},
		{" Yes ", approval.Answer{Verdict: approval.Granted}},
		{"a", approval.Answer{Verdict: approval.Always}},
		{"always", approval.Answer{Verdict: approval.Always}},
		{"n", approval.Answer{Verdict: approval.Refused}},
		{"no", approval.Answer{Verdict: approval.Refused}},
		{"n use sed instead", approval.Answer{Verdict: approval.Refused, Reason: "use sed instead"}},
		{"no: not that file", approval.Answer{Verdict: approval.Refused, Reason: "not that file"}},
		{"", approval.Answer{Verdict: approval.Refused}},
		{"rename it to b.txt first", approval.Answer{Verdict: approval.Refused, Reason: "rename it to b.txt first"}},
		{"yes but later", approval.Answer{Verdict: approval.Refused, Reason: "yes but later"}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			assert.Equal(t, tt.want, approval.ParseAnswer(tt.line))
		})
	}
}

func TestOfferAndSplit(t *testing.T) {
	spec := chat.ToolSpec{Name: "bash", Description: "Run a command.", InputSchema: json.RawMessage(`{"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"], "additionalProperties": false}`)}
	offered, err := approval.Offer(spec)
	require.NoError(t, err)
	var schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	require.NoError(t, json.Unmarshal(offered.InputSchema, &schema))
	assert.Equal(t, "boolean", schema.Properties[approval.AskField].Type)
	assert.Equal(t, "string", schema.Properties[approval.ReasonField].Type)
	assert.Equal(t, []string{"command"}, schema.Required, "asking stays optional")
	assert.Contains(t, offered.Description, "set ask_approval")
	assert.NotContains(t, string(spec.InputSchema), approval.AskField, "the spec given is unchanged")

	_, err = approval.Offer(offered)
	assert.ErrorContains(t, err, "already has an argument")
	_, err = approval.Offer(chat.ToolSpec{Name: "x", InputSchema: json.RawMessage(`[]`)})
	assert.ErrorContains(t, err, "tool x: its input schema is not a JSON object")

	tests := []struct {
		name, args, rest string
		requested        bool
		reason           string
	}{
		{"without the fields", `{"command": "ls"}`, `{"command": "ls"}`, false, ""},
		{"asked", `{"command": "rm -r build", "ask_approval": true, "approval_reason": "deletes the build"}`, `{"command":"rm -r build"}`, true, "deletes the build"},
		{"not asked", `{"command": "ls", "ask_approval": false}`, `{"command":"ls"}`, false, ""},
		{"not a boolean", `{"command": "ls", "ask_approval": "yes"}`, `{"command":"ls"}`, false, ""},
		{"not an object", `"ask_approval"`, `"ask_approval"`, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rest, requested, reason := approval.Split(json.RawMessage(tt.args))
			assert.JSONEq(t, tt.rest, string(rest))
			assert.Equal(t, tt.requested, requested)
			assert.Equal(t, tt.reason, reason)
		})
	}
}

func TestRefusal(t *testing.T) {
	out := approval.Refusal("use sed")
	assert.True(t, out.IsError)
	assert.Equal(t, approval.Refused, out.Approval)
	assert.Contains(t, out.Content, approval.RefusedPrefix+": use sed; nothing was changed")
	assert.NotContains(t, approval.Refusal("").Content, "call: ")
}

func TestGate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testGate)
}

// testGate runs in a bubble: synctest.Wait lets Ask, its question shown,
// wait for the answer before the test gives it.
func testGate(t *testing.T) {
	g := approval.NewGate()
	assert.False(t, g.Answer("y"), "no question waits")

	type result struct {
		a   approval.Answer
		err error
	}
	ask := func(ctx context.Context, tool string) (<-chan result, <-chan struct{}) {
		shown := make(chan struct{})
		done := make(chan result, 1)
		go func() {
			a, err := g.Ask(ctx, tool, func(func()) { close(shown) })
			done <- result{a, err}
		}()
		<-shown
		synctest.Wait()
		return done, shown
	}

	done, shown := ask(context.Background(), "bash")
	<-shown
	assert.True(t, g.Waiting())
	require.True(t, g.Answer("n not now"))
	assert.Equal(t, result{a: approval.Answer{Verdict: approval.Refused, Reason: "not now"}}, <-done)
	assert.False(t, g.Waiting())
	assert.False(t, g.Answer("y"), "answered already")

	done, shown = ask(context.Background(), "edit_file")
	<-shown
	require.True(t, g.Answer("a"))
	assert.Equal(t, approval.Always, (<-done).a.Verdict)
	assert.True(t, g.Granted("edit_file"))
	assert.False(t, g.Granted("bash"))

	ctx, cancel := context.WithCancel(context.Background())
	done, shown = ask(ctx, "bash")
	<-shown
	cancel()
	select {
	case r := <-done:
		assert.ErrorIs(t, r.err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("Ask did not return when its context ended")
	}
	assert.False(t, g.Waiting(), "a question given up is gone")
	assert.False(t, g.Answer("y"), "the next line is a message again")

	done, shown = ask(context.Background(), "bash")
	<-shown
	g.Close("the input ended")
	assert.Equal(t, approval.Answer{Verdict: approval.Refused, Reason: "the input ended"}, (<-done).a, "closed, the question waiting is refused")
	a, err := g.Ask(context.Background(), "bash", func(func()) { t.Error("a closed gate shows no question") })
	require.NoError(t, err)
	assert.Equal(t, approval.Refused, a.Verdict, "and so is every later one")
	a, err = g.Ask(context.Background(), "edit_file", func(func()) { t.Error("a tool granted always is not asked about") })
	require.NoError(t, err)
	assert.Equal(t, approval.Always, a.Verdict)
}

// TestGateTypedAhead checks that a line typed while a question is on its
// way to the screen is dropped, neither its answer nor a message, and
// that the answer is read once the question is shown.
func TestGateTypedAhead(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := approval.NewGate()
		assert.Equal(t, approval.NotAnswer, g.Offer("y"), "no question")
		showing, release := make(chan struct{}), make(chan struct{})
		done := make(chan approval.Answer, 1)
		go func() {
			a, err := g.Ask(context.Background(), "bash", func(func()) { close(showing); <-release })
			assert.NoError(t, err)
			done <- a
		}()
		<-showing
		assert.Equal(t, approval.TooEarly, g.Offer("y"), "typed before the question is on the screen")
		assert.False(t, g.Waiting())
		close(release)
		synctest.Wait()
		assert.True(t, g.Waiting())
		assert.Equal(t, approval.Answered, g.Offer("n later"))
		assert.Equal(t, approval.Answer{Verdict: approval.Refused, Reason: "later"}, <-done)
		assert.Equal(t, approval.NotAnswer, g.Offer("y"), "answered: a message again")
	})
}

// TestGateAnsweredWhileDrawn checks that a line typed once the question
// is being drawn (show called onScreen) is its answer, though show has not
// returned: a program answering the question as its display shows it
// once lost the answer to TooEarly and waited for ever.
func TestGateAnsweredWhileDrawn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := approval.NewGate()
		drawn, release := make(chan struct{}), make(chan struct{})
		done := make(chan approval.Answer, 1)
		go func() {
			a, err := g.Ask(context.Background(), "bash", func(onScreen func()) {
				onScreen()
				close(drawn)
				<-release
			})
			assert.NoError(t, err)
			done <- a
		}()
		<-drawn
		assert.Equal(t, approval.Answered, g.Offer("y"), "typed once the question is drawn")
		close(release)
		assert.Equal(t, approval.Answer{Verdict: approval.Granted}, <-done)
		assert.Equal(t, approval.NotAnswer, g.Offer("y"), "answered: a message again")
	})
}

// TestDroppedNotice checks the notice for a line typed before its
// question: quoted, cut after 60 characters (runes, not bytes).
func TestDroppedNotice(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 61)
	for _, tc := range []struct{ typed, then, want string }{
		{"y", "now", `"y" was typed before the question it would answer was shown, and is dropped: answer the question now`},
		{long, "once it is", `"` + strings.Repeat("é", 60) + `…" was typed before the question it would answer was shown, and is dropped: answer the question once it is`},
	} {
		assert.Equal(t, tc.want, approval.DroppedNotice(tc.typed, tc.then))
	}
}
