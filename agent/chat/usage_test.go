package chat

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUsageAdd(t *testing.T) {
	full := Usage{InputTokens: 100, OutputTokens: 20, CacheCreationInputTokens: 30, CacheReadInputTokens: 40, ReasoningTokens: 5}
	tests := []struct {
		name string
		u, v Usage
		want Usage
	}{
		{"zero and zero", Usage{}, Usage{}, Usage{}},
		{"zero is the identity", full, Usage{}, full},
		{"every figure is added", full, Usage{InputTokens: 1, OutputTokens: 2, CacheCreationInputTokens: 3, CacheReadInputTokens: 4, ReasoningTokens: 5},
			Usage{InputTokens: 101, OutputTokens: 22, CacheCreationInputTokens: 33, CacheReadInputTokens: 44, ReasoningTokens: 10}},
		{"old figures only", Usage{InputTokens: 7, OutputTokens: 8}, Usage{InputTokens: 1, OutputTokens: 1}, Usage{InputTokens: 8, OutputTokens: 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.u.Add(tt.v))
			assert.Equal(t, tt.want, tt.v.Add(tt.u), "Add is commutative")
		})
	}
}

func TestUsageJSON(t *testing.T) {
	tests := []struct {
		name string
		json string
		want Usage
	}{
		{"saved before the cache figures", `{"input_tokens":12,"output_tokens":3}`, Usage{InputTokens: 12, OutputTokens: 3}},
		{"every figure", `{"input_tokens":12,"output_tokens":3,"cache_creation_input_tokens":4,"cache_read_input_tokens":5,"reasoning_tokens":1}`,
			Usage{InputTokens: 12, OutputTokens: 3, CacheCreationInputTokens: 4, CacheReadInputTokens: 5, ReasoningTokens: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Usage
			require.NoError(t, json.Unmarshal([]byte(tt.json), &got))
			assert.Equal(t, tt.want, got)
			out, err := json.Marshal(got)
			require.NoError(t, err)
			assert.JSONEq(t, tt.json, string(out), "the figures a call did not report are left out")
		})
	}
}
