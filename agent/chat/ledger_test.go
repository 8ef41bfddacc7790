package chat_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
)

func TestLedger(t *testing.T) {
	var l chat.Ledger
	_, ok := l.LastTurn()
	assert.False(t, ok)
	l.Add(chat.Usage{InputTokens: 100, OutputTokens: 10, CacheReadInputTokens: 80})
	l.Add(chat.Usage{InputTokens: 200, OutputTokens: 20})
	l.EndTurn()
	l.Add(chat.Usage{InputTokens: 5, OutputTokens: 1, ReasoningTokens: 1})
	assert.Equal(t, chat.Usage{InputTokens: 305, OutputTokens: 31, CacheReadInputTokens: 80, ReasoningTokens: 1}, l.Total)
	assert.Equal(t, chat.Usage{InputTokens: 5, OutputTokens: 1, ReasoningTokens: 1}, l.Turn)
	last, ok := l.LastTurn()
	require.True(t, ok)
	assert.Equal(t, chat.Usage{InputTokens: 300, OutputTokens: 30, CacheReadInputTokens: 80}, last)
	assert.Equal(t, 3, l.Replies)

	data, err := json.Marshal(l)
	require.NoError(t, err)
	var back chat.Ledger
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, l, back)
}

// TestLedgerModels counts each model's replies apart, an entry for each
// stretch of one model's replies, so that a thread that changed models
// is priced per model; what was added without a model is unattributed.
func TestLedgerModels(t *testing.T) {
	t.Parallel()
	u := func(in, out int) chat.Usage { return chat.Usage{InputTokens: in, OutputTokens: out} }
	tests := []struct {
		name   string
		add    func(l *chat.Ledger)
		models []chat.ModelUsage
		rest   chat.Usage
		last   string
	}{
		{"none", func(*chat.Ledger) {}, nil, chat.Usage{}, ""},
		{"one model", func(l *chat.Ledger) {
			l.AddOf("anthropic", "a", u(1, 2))
			l.AddOf("anthropic", "a", u(3, 4))
		}, []chat.ModelUsage{{Provider: "anthropic", Model: "a", Usage: u(4, 6)}}, chat.Usage{}, "a"},
		{"switched and back", func(l *chat.Ledger) {
			l.AddOf("anthropic", "a", u(1, 2))
			l.AddOf("openai", "b", u(10, 20))
			l.AddOf("anthropic", "a", u(100, 200))
		}, []chat.ModelUsage{
			{Provider: "anthropic", Model: "a", Usage: u(1, 2)},
			{Provider: "openai", Model: "b", Usage: u(10, 20)},
			{Provider: "anthropic", Model: "a", Usage: u(100, 200)},
		}, chat.Usage{}, "a"},
		{"same name, other provider", func(l *chat.Ledger) {
			l.AddOf("anthropic", "a", u(1, 2))
			l.AddOf("openai", "a", u(1, 2))
		}, []chat.ModelUsage{
			{Provider: "anthropic", Model: "a", Usage: u(1, 2)},
			{Provider: "openai", Model: "a", Usage: u(1, 2)},
		}, chat.Usage{}, "a"},
		{"a subagent's replies added", func(l *chat.Ledger) {
			l.AddOf("anthropic", "a", u(1, 2))
			var child chat.Ledger
			child.AddOf("anthropic", "a", u(3, 4))
			child.AddOf("openai", "b", u(5, 6))
			l.AddLedger(child)
		}, []chat.ModelUsage{
			{Provider: "anthropic", Model: "a", Usage: u(4, 6)},
			{Provider: "openai", Model: "b", Usage: u(5, 6)},
		}, chat.Usage{}, "b"},
		{"saved before models were recorded", func(l *chat.Ledger) {
			l.Add(u(5, 5))
			l.AddOf("openai", "b", u(1, 1))
		}, []chat.ModelUsage{{Provider: "openai", Model: "b", Usage: u(1, 1)}}, u(5, 5), "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var l chat.Ledger
			tt.add(&l)
			assert.Equal(t, tt.models, l.Models)
			assert.Equal(t, tt.rest, l.Unattributed())
			_, last, ok := l.LastModel()
			assert.Equal(t, tt.last != "", ok)
			assert.Equal(t, tt.last, last)
			data, err := json.Marshal(l)
			require.NoError(t, err)
			var back chat.Ledger
			require.NoError(t, json.Unmarshal(data, &back))
			assert.Equal(t, l, back)
		})
	}
}
