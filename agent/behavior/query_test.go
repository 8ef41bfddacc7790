package behavior_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
)

// TestQueryLimitReached counts the query results of the turn, from the
// user's last message on, against MaxQueries.
func TestQueryLimitReached(t *testing.T) {
	q := chat.Query{Kind: chat.QueryRead, Path: "a.go"}
	result := chat.UserMessage(behavior.FormatQueryResult(q, chat.ToolOutcome{Content: "package a"}))
	asked := chat.Message{Role: chat.RoleAssistant, Content: "QUERY: read a.go"}
	turn := func(n int) []chat.Message {
		msgs := []chat.Message{chat.UserMessage("go")}
		for range n {
			msgs = append(msgs, asked, result)
		}
		return msgs
	}
	tests := []struct {
		name string
		max  int
		msgs []chat.Message
		want bool
	}{
		{"no query yet", 2, turn(0), false},
		{"one of two", 2, turn(1), false},
		{"two of two", 2, turn(2), true},
		{"the turn before does not count", 2, append(turn(2), chat.Message{Role: chat.RoleAssistant, Content: "done"}, chat.UserMessage("more")), false},
		{"a stopped turn does not count", 2, append(turn(2), chat.UserMessage(chat.UserStoppedNote)), false},
		{"none allowed", 0, turn(0), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := behavior.DefaultConfig()
			cfg.MaxQueries = tt.max
			b, err := behavior.New(cfg)
			require.NoError(t, err)
			assert.Equal(t, tt.want, b.QueryLimitReached(chat.NewConversation("T").Append(tt.msgs...)))
		})
	}
}

// TestInjectQueryResult checks the message that carries a query's result
// and the request built after it.
func TestInjectQueryResult(t *testing.T) {
	b, err := behavior.New(behavior.DefaultConfig())
	require.NoError(t, err)
	conv := chat.NewConversation("T").Append(chat.UserMessage("go"))
	conv = b.StartQuery(conv, "Let me read a.go.")
	tests := []struct {
		name    string
		q       chat.Query
		outcome chat.ToolOutcome
		want    string
	}{
		{"a result", chat.Query{Kind: chat.QueryRead, Path: "a.go"}, chat.ToolOutcome{Content: "package a\n"},
			"[query read a.go: result]\npackage a\n[end of the query's result]"},
		{"an error", chat.Query{Kind: chat.QuerySearch, Pattern: "x", Path: "d"}, chat.ToolOutcome{Content: "no such directory", IsError: true},
			"[query search \"x\" in d: failed]\nno such directory\n[end of the query's result]"},
		{"nothing", chat.Query{Kind: chat.QueryEnvironment}, chat.ToolOutcome{},
			"[query environment: result]\n(nothing)\n[end of the query's result]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, req := b.InjectQueryResult(conv, tt.q, tt.outcome)
			require.Equal(t, 3, c.Len())
			last, _ := c.Last()
			assert.Equal(t, chat.RoleUser, last.Role)
			assert.Equal(t, tt.want, last.Content)
			assert.True(t, strings.HasPrefix(last.Content, chat.QueryResultPrefix))
			assert.Len(t, req.Messages, 3)
			assert.Equal(t, "assistant", string(c.Messages()[1].Role))
		})
	}
}

// TestQueryLimitSurvivesCompaction compacts a turn in the middle of its
// queries: the turn's queries are kept with the replies that asked them,
// however long, so the limit counts them all after the summary too.
func TestQueryLimitSurvivesCompaction(t *testing.T) {
	q := chat.Query{Kind: chat.QueryRead, Path: "a.go"}
	small := chat.UserMessage(behavior.FormatQueryResult(q, chat.ToolOutcome{Content: "package a"}))
	large := chat.UserMessage(behavior.FormatQueryResult(q, chat.ToolOutcome{Content: strings.Repeat("x", 100<<10)}))
	asked := chat.Message{Role: chat.RoleAssistant, Content: "QUERY: read a.go"}
	tests := []struct {
		name   string
		result chat.Message
		n      int
		tail   []chat.Message
		want   bool
	}{
		{"two of three", small, 2, nil, false},
		{"three of three", small, 3, nil, true},
		{"long results", large, 3, nil, true},
		{"a continuation after them", small, 3, []chat.Message{{Role: chat.RoleAssistant, Content: "cut"}, chat.UserMessage(chat.ContinueNote)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := behavior.DefaultConfig()
			cfg.MaxQueries = 3
			b, err := behavior.New(cfg)
			require.NoError(t, err)
			c := chat.NewConversation("T").Append(chat.UserMessage("earlier"), chat.Message{Role: chat.RoleAssistant, Content: "earlier answer"}, chat.UserMessage("go"))
			for range tt.n {
				c = c.Append(asked, tt.result)
			}
			c = c.Append(tt.tail...)
			require.Equal(t, tt.want, b.QueryLimitReached(c))
			require.True(t, b.CanCompact(c))
			compacted := b.Compact(c, chat.Response{Message: chat.Message{Role: chat.RoleAssistant, Content: "summary"}})
			assert.Equal(t, tt.want, b.QueryLimitReached(compacted), "the count survives the compaction")
			assert.Equal(t, c.Messages()[3:], compacted.Messages()[2:], "the turn's queries are kept")
		})
	}
}
