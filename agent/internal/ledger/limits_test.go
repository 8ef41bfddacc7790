package ledger_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/agent/internal/ledger"
)

func TestLimitsOf(t *testing.T) {
	tests := []struct {
		model  string
		want   ledger.Limits
		wantOK bool
	}{
		{"claude-sonnet-4-5", ledger.Limits{ContextWindow: 200_000, MaxOutput: 64_000}, true},
		{"claude-sonnet-4-5-20250929", ledger.Limits{ContextWindow: 200_000, MaxOutput: 64_000}, true},
		{"claude-opus-4-1-20250805", ledger.Limits{ContextWindow: 200_000, MaxOutput: 32_000}, true},
		{"claude-sonnet-4", ledger.Limits{ContextWindow: 200_000, MaxOutput: 64_000}, true},
		{"claude-3-5-haiku-latest", ledger.Limits{ContextWindow: 200_000, MaxOutput: 8_192}, true},
		{"gpt-4.1-2025-04-14", ledger.Limits{ContextWindow: 1_047_576, MaxOutput: 32_768}, true},
		{"gpt-5", ledger.Limits{ContextWindow: 400_000, MaxOutput: 128_000}, true},
		{"qwen2.5-coder:7b", ledger.Limits{}, false},
		{"", ledger.Limits{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			got, ok := ledger.LimitsOf(tt.model)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestLimitsCoverPrices keeps the two tables in step: a model with a price
// has limits, and the reverse.
func TestLimitsCoverPrices(t *testing.T) {
	var priced, limited []string
	for m := range ledger.KnownPrices {
		priced = append(priced, m)
	}
	for m, l := range ledger.KnownLimits {
		limited = append(limited, m)
		assert.Positive(t, l.MaxOutput, m)
		assert.Less(t, l.MaxOutput, l.ContextWindow, m)
	}
	slices.Sort(priced)
	slices.Sort(limited)
	assert.Equal(t, priced, limited)
}
