package ledger_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/ledger"
)

func TestCost(t *testing.T) {
	p := ledger.Price{Input: 3, Output: 15, CacheWrite: 3.75, CacheRead: 0.3}
	tests := []struct {
		name string
		u    chat.Usage
		want float64
	}{
		{"nothing", chat.Usage{}, 0},
		{"a million in", chat.Usage{InputTokens: 1_000_000}, 3},
		{"a million out", chat.Usage{OutputTokens: 1_000_000}, 15},
		{"cache parts of the input", chat.Usage{InputTokens: 1_000_000, CacheReadInputTokens: 500_000, CacheCreationInputTokens: 250_000}, 0.75 + 0.15 + 0.9375},
		{"inconsistent figures cost no negative input", chat.Usage{InputTokens: 10, CacheReadInputTokens: 1_000_000}, 0.3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.InDelta(t, tt.want, p.Cost(tt.u), 1e-9)
		})
	}
}

func TestParsePrice(t *testing.T) {
	tests := []struct {
		in      string
		want    ledger.Price
		wantErr string
	}{
		{in: "3,15,3.75,0.3", want: ledger.Price{Input: 3, Output: 15, CacheWrite: 3.75, CacheRead: 0.3}},
		{in: "2, 8", want: ledger.Price{Input: 2, Output: 8, CacheWrite: 2, CacheRead: 0.2}},
		{in: "3", wantErr: "want INPUT,OUTPUT"},
		{in: "3,x", wantErr: `"x" is not a price`},
		{in: "3,-1", wantErr: `"-1" is not a price`},
		{in: "NaN,1", wantErr: `"NaN" is not a price`},
		{in: "1,Inf", wantErr: `"Inf" is not a price`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ledger.ParsePrice(tt.in)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := ledger.PriceOf("no-such-model")
	assert.ErrorIs(t, err, ledger.ErrNoPrice)
	p, err := ledger.PriceOf("claude-sonnet-4-5")
	require.NoError(t, err)
	assert.Equal(t, 15.0, p.Output)
}

func TestFormat(t *testing.T) {
	p := ledger.Price{Input: 3, Output: 15}
	assert.Equal(t, "1,234,567 tokens in (1,000 from the cache, 20 into it), 678 out (100 reasoning), $3.7108",
		ledger.Format(chat.Usage{InputTokens: 1_234_567, CacheReadInputTokens: 1000, CacheCreationInputTokens: 20, OutputTokens: 678, ReasoningTokens: 100}, &p))
	assert.Equal(t, "0 tokens in, 0 out", ledger.Format(chat.Usage{}, nil))
}

// TestPriceOf checks the model names the price table knows: undated,
// dated, aliases; and that an unknown model says to give -price.
func TestPriceOf(t *testing.T) {
	tests := []struct {
		model string
		want  float64 // the input price; 0 for unknown
	}{
		{"claude-sonnet-4-5", 3},
		{"claude-sonnet-4-5-20250929", 3},
		{"claude-haiku-4-5-latest", 1},
		{"claude-opus-4", 15},
		{"gpt-4.1-2025-04-14", 2},
		{"gpt-4o-mini", 0.15},
		{"qwen2.5-coder", 0},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			p, err := ledger.PriceOf(tt.model)
			if tt.want == 0 {
				require.ErrorIs(t, err, ledger.ErrNoPrice)
				assert.ErrorContains(t, err, "-price")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.Input)
		})
	}
}

// TestThreadCost prices each model's tokens at its own price, and the
// tokens of no known model at the fallback's; a price not known is an
// error.
func TestThreadCost(t *testing.T) {
	t.Parallel()
	mtok := chat.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}
	prices := map[string]ledger.Price{"cheap": {Input: 1, Output: 2}, "dear": {Input: 10, Output: 20}}
	priceOf := func(m string) (ledger.Price, error) {
		if p, ok := prices[m]; ok {
			return p, nil
		}
		return ledger.Price{}, ledger.ErrNoPrice
	}
	switched := chat.Ledger{}
	switched.AddOf("anthropic", "dear", mtok)
	switched.AddOf("openai", "cheap", mtok)
	old := chat.Ledger{}
	old.Add(mtok)
	old.AddOf("openai", "dear", mtok)
	unknown := chat.Ledger{}
	unknown.AddOf("openai", "local", mtok)
	tests := []struct {
		name     string
		l        chat.Ledger
		fallback string
		want     float64
		err      bool
	}{
		{"empty", chat.Ledger{}, "nothing", 0, false},
		{"each turn at its model's price", switched, "cheap", 30 + 3, false},
		{"not the current model's price for all", switched, "dear", 30 + 3, false},
		{"unattributed at the fallback's", old, "cheap", 3 + 30, false},
		{"a price not known", unknown, "cheap", 0, true},
		{"the fallback's price not known", old, "local", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ledger.ThreadCost(tt.l, tt.fallback, priceOf)
			if tt.err {
				require.ErrorIs(t, err, ledger.ErrNoPrice)
				return
			}
			require.NoError(t, err)
			assert.InDelta(t, tt.want, got, 1e-9)
		})
	}
}

// TestLastCost prices the last replies' tokens at the price of each
// model that used them: a turn whose subagent ran on another model, a
// turn on one model after another's, and tokens of no known model.
func TestLastCost(t *testing.T) {
	t.Parallel()
	mtok := chat.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}
	prices := map[string]ledger.Price{"cheap": {Input: 1, Output: 2}, "dear": {Input: 10, Output: 20}}
	priceOf := func(m string) (ledger.Price, error) {
		if p, ok := prices[m]; ok {
			return p, nil
		}
		return ledger.Price{}, ledger.ErrNoPrice
	}
	var withSubagent chat.Ledger // a turn: dear, its subagent on cheap, dear
	withSubagent.AddOf("a", "dear", mtok)
	withSubagent.EndTurn()
	withSubagent.AddOf("a", "dear", mtok)
	withSubagent.AddLedger(chat.Ledger{Total: mtok, Replies: 1, Models: []chat.ModelUsage{{Provider: "a", Model: "cheap", Usage: mtok}}})
	withSubagent.AddOf("a", "dear", mtok)
	withSubagent.EndTurn()
	last, _ := withSubagent.LastTurn()
	var local chat.Ledger // a turn whose subagent ran on a model of no known price
	local.AddOf("a", "dear", mtok)
	local.AddLedger(chat.Ledger{Total: mtok, Replies: 1, Models: []chat.ModelUsage{{Provider: "a", Model: "local", Usage: mtok}}})
	local.AddOf("a", "dear", mtok)
	local.EndTurn()
	localLast, _ := local.LastTurn()
	var sameModel chat.Ledger // two turns on dear: one entry
	sameModel.AddOf("a", "dear", mtok)
	sameModel.EndTurn()
	sameModel.AddOf("a", "dear", mtok)
	var old chat.Ledger // a reply of no known model, then a turn on cheap
	old.Add(mtok)
	old.EndTurn()
	old.AddOf("a", "cheap", mtok)
	tests := []struct {
		name     string
		l        chat.Ledger
		u        chat.Usage
		fallback string
		want     float64
		err      bool
	}{
		{"nothing", chat.Ledger{}, chat.Usage{}, "none", 0, false},
		{"a subagent on another model", withSubagent, last, "dear", 30 + 3 + 30, false},
		{"the turn in progress, its model's entry shared with the turn before", sameModel, sameModel.Turn, "cheap", 30, false},
		{"the turn's, not the thread's", old, old.Turn, "dear", 3, false},
		{"more than the entries count: the rest at the fallback's", old, mtok.Add(mtok), "dear", 3 + 30, false},
		{"a subagent's price not known", local, localLast, "dear", 0, true},
		{"the fallback's not known", old, mtok.Add(mtok), "local", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ledger.LastCost(tt.l, tt.u, tt.fallback, priceOf)
			if tt.err {
				require.ErrorIs(t, err, ledger.ErrNoPrice)
				return
			}
			require.NoError(t, err)
			assert.InDelta(t, tt.want, got, 1e-9)
		})
	}
}
