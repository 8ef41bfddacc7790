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
