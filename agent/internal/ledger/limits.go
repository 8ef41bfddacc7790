package ledger

// Limits are the token limits of a model.
type Limits struct {
	// ContextWindow is the most tokens one request may hold: its prompt
	// (system prompt, tools and conversation) and its reply together.
	ContextWindow int `json:"context_window"`
	// MaxOutput is the most tokens one reply may have, thinking included:
	// the largest max_tokens the API accepts.
	MaxOutput int `json:"max_output"`
	// TextOnly is set for a model that takes no images: the agent attaches
	// none to its messages, and refuses to send it a thread that holds
	// some.
	TextOnly bool `json:"text_only,omitempty"`
}

// KnownLimits are the token limits of the providers' current models, as
// they published them: the standard context window (not a beta's larger
// one) and the largest output. A model's dated name takes its undated
// name's limits, as for [KnownPrices].
var KnownLimits = map[string]Limits{
	"claude-opus-4-5":   {ContextWindow: 200_000, MaxOutput: 64_000},
	"claude-opus-4-1":   {ContextWindow: 200_000, MaxOutput: 32_000},
	"claude-opus-4-0":   {ContextWindow: 200_000, MaxOutput: 32_000},
	"claude-sonnet-4-5": {ContextWindow: 200_000, MaxOutput: 64_000},
	"claude-sonnet-4-0": {ContextWindow: 200_000, MaxOutput: 64_000},
	"claude-3-7-sonnet": {ContextWindow: 200_000, MaxOutput: 64_000},
	"claude-haiku-4-5":  {ContextWindow: 200_000, MaxOutput: 64_000},
	"claude-3-5-haiku":  {ContextWindow: 200_000, MaxOutput: 8_192},
	"gpt-5":             {ContextWindow: 400_000, MaxOutput: 128_000},
	"gpt-5-mini":        {ContextWindow: 400_000, MaxOutput: 128_000},
	"gpt-5-nano":        {ContextWindow: 400_000, MaxOutput: 128_000},
	"gpt-4.1":           {ContextWindow: 1_047_576, MaxOutput: 32_768},
	"gpt-4.1-mini":      {ContextWindow: 1_047_576, MaxOutput: 32_768},
	"gpt-4.1-nano":      {ContextWindow: 1_047_576, MaxOutput: 32_768},
	"gpt-4o":            {ContextWindow: 128_000, MaxOutput: 16_384},
	"gpt-4o-mini":       {ContextWindow: 128_000, MaxOutput: 16_384},
	"o3":                {ContextWindow: 200_000, MaxOutput: 100_000},
	"o4-mini":           {ContextWindow: 200_000, MaxOutput: 100_000},
	"o3-mini":           {ContextWindow: 200_000, MaxOutput: 100_000, TextOnly: true},
}

// TextOnly reports whether model is known to take no images; a model
// whose limits are not known is taken to take them (its API says so
// when it does not).
func TextOnly(model string) bool {
	l, ok := LimitsOf(model)
	return ok && l.TextOnly
}

// DefaultMaxOutput is the reply's token limit the agent asks for when the
// model's limits are not known (a local model, a new one): large enough
// for a long edit, small enough for the servers that refuse a request
// whose prompt and reply could pass a small context window.
const DefaultMaxOutput = 8192

// LimitsOf returns the known token limits of model, dated names and
// aliases included; ok is false for a model whose limits are not known.
func LimitsOf(model string) (l Limits, ok bool) {
	l, ok = KnownLimits[baseName(model)]
	return l, ok
}

// baseName returns the name model is known by in KnownPrices and
// KnownLimits: without its date, aliases resolved.
func baseName(model string) string {
	name := dated.ReplaceAllString(model, "")
	if a, ok := aliases[name]; ok {
		name = a
	}
	return name
}
