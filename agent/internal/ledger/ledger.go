// Package ledger prices the coding agent's account of the tokens the LLM
// used (chat.Ledger: input, output, the prompt cache's reads and writes,
// reasoning, per turn and per thread), knows the models' prices and
// limits, and writes usage for people.
//
// The figures are the providers' own (see chat.Usage): the agent adds up
// what each completed reply reports, and what a failed or cut-off reply
// reported before it failed (its output estimated from the bytes received
// when the provider had not counted it yet). A request that failed before
// any reply (an HTTP error) reports nothing, nor does a call the agent
// cancelled, although the provider may bill for them.
package ledger

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// Price is what a model's tokens cost, in US dollars per million tokens.
type Price struct {
	// Input is the price of input tokens neither written to nor read from
	// the prompt cache.
	Input float64 `json:"input"`
	// Output is the price of output tokens, reasoning included.
	Output float64 `json:"output"`
	// CacheWrite is the price of input tokens written to the cache.
	CacheWrite float64 `json:"cache_write"`
	// CacheRead is the price of input tokens read from the cache.
	CacheRead float64 `json:"cache_read"`
}

// Cost returns what u cost at p, in US dollars.
func (p Price) Cost(u chat.Usage) float64 {
	plain := max(u.InputTokens-u.CacheCreationInputTokens-u.CacheReadInputTokens, 0)
	return (float64(plain)*p.Input +
		float64(u.CacheCreationInputTokens)*p.CacheWrite +
		float64(u.CacheReadInputTokens)*p.CacheRead +
		float64(u.OutputTokens)*p.Output) / 1e6
}

// KnownPrices are the list prices of the providers' current models, as
// they published them (Anthropic's five-minute cache writes; OpenAI charges
// nothing extra for cache writes). A model's dated name
// (claude-sonnet-4-5-20250929, gpt-4.1-2025-04-14) takes its undated
// name's price. Prices change: pass the current ones with -price.
var KnownPrices = map[string]Price{
	"claude-opus-4-5":   {Input: 5, Output: 25, CacheWrite: 6.25, CacheRead: 0.50},
	"claude-opus-4-1":   {Input: 15, Output: 75, CacheWrite: 18.75, CacheRead: 1.50},
	"claude-opus-4-0":   {Input: 15, Output: 75, CacheWrite: 18.75, CacheRead: 1.50},
	"claude-sonnet-4-5": {Input: 3, Output: 15, CacheWrite: 3.75, CacheRead: 0.30},
	"claude-sonnet-4-0": {Input: 3, Output: 15, CacheWrite: 3.75, CacheRead: 0.30},
	"claude-3-7-sonnet": {Input: 3, Output: 15, CacheWrite: 3.75, CacheRead: 0.30},
	"claude-haiku-4-5":  {Input: 1, Output: 5, CacheWrite: 1.25, CacheRead: 0.10},
	"claude-3-5-haiku":  {Input: 0.80, Output: 4, CacheWrite: 1, CacheRead: 0.08},
	"gpt-5":             {Input: 1.25, Output: 10, CacheWrite: 1.25, CacheRead: 0.125},
	"gpt-5-mini":        {Input: 0.25, Output: 2, CacheWrite: 0.25, CacheRead: 0.025},
	"gpt-5-nano":        {Input: 0.05, Output: 0.40, CacheWrite: 0.05, CacheRead: 0.005},
	"gpt-4.1":           {Input: 2, Output: 8, CacheWrite: 2, CacheRead: 0.50},
	"gpt-4.1-mini":      {Input: 0.40, Output: 1.60, CacheWrite: 0.40, CacheRead: 0.10},
	"gpt-4.1-nano":      {Input: 0.10, Output: 0.40, CacheWrite: 0.10, CacheRead: 0.025},
	"gpt-4o":            {Input: 2.50, Output: 10, CacheWrite: 2.50, CacheRead: 1.25},
	"gpt-4o-mini":       {Input: 0.15, Output: 0.60, CacheWrite: 0.15, CacheRead: 0.075},
	"o3":                {Input: 2, Output: 8, CacheWrite: 2, CacheRead: 0.50},
	"o4-mini":           {Input: 1.10, Output: 4.40, CacheWrite: 1.10, CacheRead: 0.275},
	"o3-mini":           {Input: 1.10, Output: 4.40, CacheWrite: 1.10, CacheRead: 0.55},
}

// aliases are other names of the models of KnownPrices.
var aliases = map[string]string{
	"claude-opus-4":   "claude-opus-4-0",
	"claude-sonnet-4": "claude-sonnet-4-0",
}

// dated is the date a model's dated name ends with: -20250929 or
// -2025-04-14, or -latest.
var dated = regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$`)

// ParsePrice parses a price given as "INPUT,OUTPUT[,CACHE_WRITE,CACHE_READ]"
// in US dollars per million tokens, e.g. "3,15,3.75,0.3". Without the
// cache prices, cache writes cost the input price and reads a tenth of it.
func ParsePrice(s string) (Price, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 2 && len(parts) != 4 {
		return Price{}, fmt.Errorf("price %q: want INPUT,OUTPUT or INPUT,OUTPUT,CACHE_WRITE,CACHE_READ in dollars per million tokens, e.g. 3,15,3.75,0.3", s)
	}
	var v [4]float64
	for i, p := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return Price{}, fmt.Errorf("price %q: %q is not a price; give dollars per million tokens, e.g. 3 or 0.3", s, p)
		}
		v[i] = f
	}
	if len(parts) == 2 {
		v[2], v[3] = v[0], v[0]/10
	}
	return Price{Input: v[0], Output: v[1], CacheWrite: v[2], CacheRead: v[3]}, nil
}

// ErrNoPrice is returned by PriceOf for a model whose price is not known.
var ErrNoPrice = errors.New("no price known")

// PriceOf returns the known price of model.
func PriceOf(model string) (Price, error) {
	p, ok := KnownPrices[baseName(model)]
	if !ok {
		return Price{}, fmt.Errorf("model %q: %w; give it with -price to see costs", model, ErrNoPrice)
	}
	return p, nil
}

// Format describes u on one line, e.g. "12,345 tokens in (10,000 from the
// cache, 1,000 into it), 678 out (100 reasoning)", with its cost when a
// price is given.
func Format(u chat.Usage, price *Price) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s tokens in", thousands(u.InputTokens))
	var cache []string
	if u.CacheReadInputTokens > 0 {
		cache = append(cache, thousands(u.CacheReadInputTokens)+" from the cache")
	}
	if u.CacheCreationInputTokens > 0 {
		cache = append(cache, thousands(u.CacheCreationInputTokens)+" into it")
	}
	if len(cache) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(cache, ", "))
	}
	fmt.Fprintf(&b, ", %s out", thousands(u.OutputTokens))
	if u.ReasoningTokens > 0 {
		fmt.Fprintf(&b, " (%s reasoning)", thousands(u.ReasoningTokens))
	}
	if price != nil {
		fmt.Fprintf(&b, ", $%.4f", price.Cost(u))
	}
	return b.String()
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// ThreadCost returns what the replies l counts cost, in US dollars: each
// model's tokens (l.Models) at the price priceOf gives that model, and
// the tokens of no known model (l.Unattributed: a thread saved before the
// models were recorded) at fallback's. It returns the error of the first
// price that is not known.
func ThreadCost(l chat.Ledger, fallback string, priceOf func(model string) (Price, error)) (float64, error) {
	var cost float64
	if u := l.Unattributed(); u != (chat.Usage{}) {
		p, err := priceOf(fallback)
		if err != nil {
			return 0, err
		}
		cost += p.Cost(u)
	}
	for _, m := range l.Models {
		p, err := priceOf(m.Model)
		if err != nil {
			return 0, err
		}
		cost += p.Cost(m.Usage)
	}
	return cost, nil
}

// LastCost returns what u cost, in US dollars, u being what the last
// replies l counts used (its last turn, or its turn in progress): each
// part at the price of the model whose replies used it, a turn's replies
// being the last of l.Models's (a turn may use several models: a
// subagent's may be another), and the part no entry counts at
// fallback's. It returns the error of the first price that is not known.
func LastCost(l chat.Ledger, u chat.Usage, fallback string, priceOf func(model string) (Price, error)) (float64, error) {
	var cost float64
	left := u
	for i := len(l.Models) - 1; i >= 0 && left != (chat.Usage{}); i-- {
		m := l.Models[i].Usage
		part := chat.Usage{
			InputTokens:              min(left.InputTokens, m.InputTokens),
			OutputTokens:             min(left.OutputTokens, m.OutputTokens),
			CacheCreationInputTokens: min(left.CacheCreationInputTokens, m.CacheCreationInputTokens),
			CacheReadInputTokens:     min(left.CacheReadInputTokens, m.CacheReadInputTokens),
			ReasoningTokens:          min(left.ReasoningTokens, m.ReasoningTokens),
		}
		if part == (chat.Usage{}) {
			continue
		}
		p, err := priceOf(l.Models[i].Model)
		if err != nil {
			return 0, err
		}
		cost += p.Cost(part)
		left = chat.Usage{
			InputTokens:              left.InputTokens - part.InputTokens,
			OutputTokens:             left.OutputTokens - part.OutputTokens,
			CacheCreationInputTokens: left.CacheCreationInputTokens - part.CacheCreationInputTokens,
			CacheReadInputTokens:     left.CacheReadInputTokens - part.CacheReadInputTokens,
			ReasoningTokens:          left.ReasoningTokens - part.ReasoningTokens,
		}
	}
	if left != (chat.Usage{}) {
		p, err := priceOf(fallback)
		if err != nil {
			return 0, err
		}
		cost += p.Cost(left)
	}
	return cost, nil
}
