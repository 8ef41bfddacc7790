// Package llm streams LLM calls for the coding agent through the official
// provider SDKs: Anthropic's Messages API and OpenAI's chat completions API,
// the latter also for OpenAI-compatible local servers (llama.cpp, vLLM,
// Ollama) reached through a base URL.
//
// A [Provider] turns a [chat.Request] into one HTTP request, reports the
// reply as it streams in ([TextDelta], [ToolCallDelta]) and ends with exactly
// one [Completed] or [Failed]. Failures are classified into [chat.LLMError]
// so that the state machine, which owns the retry policy, can decide what to
// do: the SDKs' own retries are turned off.
package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// Event is one thing a streaming LLM call reports. It is exactly one of
// [TextDelta], [ToolCallDelta], [Usage], [Completed] and [Failed].
type Event interface{ isEvent() }

// TextDelta is a piece of assistant text, in the order the LLM wrote it.
type TextDelta struct{ Text string }

// ToolCallDelta is a piece of a tool call's JSON arguments. The first delta
// of each call announces it and may have an empty Fragment; the Fragments of
// one call, concatenated, are its arguments.
type ToolCallDelta struct{ CallID, ToolName, Fragment string }

// Completed is the whole reply. Response.Message.ToolCalls are in the LLM's
// order and each one's Arguments is the full JSON object text ("{}" when the
// LLM gave none).
type Completed struct{ Response chat.Response }

// Failed reports that the call failed, classified. Err.Usage is what the
// call is known to have used: the figures the server reported before the
// failure (Anthropic reports the prompt's tokens as the reply starts,
// OpenAI only at its end), and, when the reply was cut before the server
// counted its output, an estimate of the output from the bytes of text,
// thinking and tool calls received, at [bytesPerToken] bytes a token. It is
// zero when no reply started (an HTTP error, a refused connection).
type Failed struct{ Err chat.LLMError }

// Usage is the usage the server has reported so far, sent each time it
// reports more, before the reply ends: Anthropic reports the prompt's
// tokens (input and cache) as the reply starts (message_start) and the
// output's as it ends (message_delta); OpenAI reports the whole usage
// only in the reply's last chunk (stream_options include_usage), so a
// reply cut before its end has no Usage at all. A caller that cancels
// the call mid-reply (the agent does at a query, see agent/internal/query)
// counts the last Usage it got, its output estimated with [TokensOf];
// a reply that runs to its end counts Completed's.
type Usage struct{ Usage chat.Usage }

func (TextDelta) isEvent()     {}
func (ToolCallDelta) isEvent() {}
func (Usage) isEvent()         {}
func (Completed) isEvent()     {}
func (Failed) isEvent()        {}

// TokensOf estimates the tokens of n bytes of a reply (text, thinking,
// tool calls), at [bytesPerToken] bytes a token, rounded up: how the
// output of a reply cut before the server counted it is estimated.
func TokensOf(n int) int { return (n + bytesPerToken - 1) / bytesPerToken }

// Provider streams one LLM request.
//
// Stream calls emit for every event in order, on the calling goroutine, and
// ends with exactly one Completed or one Failed, then returns nil. If ctx is
// cancelled it stops promptly and returns ctx.Err() without emitting Failed
// (a context that passed its deadline is not a cancellation: it ends with
// Failed of kind [chat.ErrTimeout]). It never panics on bad server input.
//
// The limits of [Config] end a call with Failed too: a server silent for
// longer than HeaderTimeout, or that sends nothing of the reply (only
// keep-alives, or nothing at all) for longer than IdleTimeout, with
// [chat.ErrTimeout] (retried); a reply longer than MaxReplyBytes or
// ReplyTimeout with [chat.ErrOther] (not retried); a tool call whose name
// is longer than [MaxToolNameBytes] or whose ID is longer than
// [MaxCallIDBytes] with [chat.ErrOther] (not retried); and a server that
// does not speak the API (a web page, text, a 404, 405 or 501 without an
// error of the API's shape) with [chat.ErrInvalidRequest] (not retried).
// Every message names the flags and environment variables that change
// what went wrong.
type Provider interface {
	Stream(ctx context.Context, req chat.Request, emit func(Event)) error
	Name() string
}

// Provider names accepted by [New].
const (
	// NameAnthropic names Anthropic's Messages API.
	NameAnthropic = "anthropic"
	// NameOpenAI names OpenAI's chat completions API and compatible servers.
	NameOpenAI = "openai"
)

// Errors the constructors wrap; test for them with errors.Is.
var (
	// ErrUnknownProvider is returned by New for a name it does not know.
	ErrUnknownProvider = errors.New("unknown LLM provider")
	// ErrNoAPIKey is returned when a provider that needs an API key has none.
	ErrNoAPIKey = errors.New("no API key")
	// ErrBadBaseURL is returned when Config.BaseURL is not an http(s) URL.
	ErrBadBaseURL = errors.New("bad base URL")
)

// Config configures a provider.
type Config struct {
	// APIKey authenticates the calls. [New] fills it from ANTHROPIC_API_KEY
	// or OPENAI_API_KEY when empty (see [FromEnv]). The OpenAI provider may
	// run without a key when BaseURL points at a local server.
	APIKey string
	// BaseURL is the API's root, e.g. "http://localhost:8080/v1" for a
	// llama.cpp server. [New] fills it from ANTHROPIC_BASE_URL or
	// OPENAI_BASE_URL when empty; empty means the provider's public API.
	BaseURL string
	// HTTPClient makes the HTTP requests; nil means a client of its own
	// (http.DefaultTransport's settings). The time limits below apply to
	// any client.
	HTTPClient *http.Client
	// Logger receives the provider's logs; nil discards them. A failure the
	// provider reports as [Failed] is logged at debug level only: the
	// caller shows it.
	Logger *slog.Logger

	// HeaderTimeout is the longest a call waits, once its request is sent,
	// for the response's status and headers. 0 means
	// [DefaultHeaderTimeout]; a negative value means no limit. Passing it
	// fails the call with a retryable [chat.ErrTimeout].
	HeaderTimeout time.Duration
	// IdleTimeout is the longest the reply may make no progress once the
	// response's headers arrived: before its start, and between any two
	// events that carry part of it (its start, text, thinking, a tool
	// call's name, ID or arguments, a stop reason, new usage figures).
	// Keep-alives do not count as progress: Anthropic's ping events, SSE
	// comments, deltas with nothing in them. Only the time spent waiting
	// for the server counts, not the time the caller takes with the
	// events. 0 means [DefaultIdleTimeout]; a negative value means no
	// limit. Passing it fails the call with a retryable [chat.ErrTimeout].
	IdleTimeout time.Duration
	// ReplyTimeout is the longest one reply may stream, from its response
	// headers to its end, however steadily it progresses. 0 means
	// [DefaultReplyTimeout]; a negative value means no limit. Passing it
	// cuts the stream and fails the call with [chat.ErrOther], which is not
	// retried: the same request would most likely take as long again.
	ReplyTimeout time.Duration
	// MaxReplyBytes caps the size of one reply: its text, thinking, tool
	// names, tool call IDs and tool call arguments together, in bytes. 0
	// means [DefaultMaxReplyBytes]; a negative value means no limit.
	// Passing it cuts the stream and fails the call with [chat.ErrOther],
	// which is not retried.
	MaxReplyBytes int
	// TextOnly reports whether a model is known to take no images: a
	// request that holds one (see chat.Message.Images) for such a model is
	// refused with [chat.ErrInvalidRequest] before it is sent. nil means
	// every model is taken to take them; a model that does not is then
	// the API's to refuse.
	TextOnly func(model string) bool
}

// The defaults of the time and size limits of [Config].
const (
	// DefaultHeaderTimeout is long because a local server (llama.cpp)
	// answers only once it has read the whole prompt, which on a CPU takes
	// minutes for a long conversation; a provider's API answers within
	// seconds, so the limit only matters when something is broken.
	DefaultHeaderTimeout = 5 * time.Minute
	// DefaultIdleTimeout is far beyond the silence of a healthy stream: a
	// model writes several tokens a second, its thinking included, and a
	// provider starts the reply well within a minute of its response
	// headers; yet a dead connection, or a server that only sends
	// keep-alives, costs at most two minutes per attempt, and the attempt
	// is retried.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultReplyTimeout bounds a reply that keeps progressing too slowly
	// to end (a server trickling one token per idle period holds a call
	// for years before it reaches MaxReplyBytes), far above the longest
	// healthy reply: at the agent's 8192 tokens for a model whose limits
	// are not known (a local one) a reply must come slower than 4.6
	// tokens a second to reach it (a CPU-bound local model writes 5 to
	// 15), and a provider's 64k-token reply at 50 tokens a second takes
	// 22 minutes.
	DefaultReplyTimeout = 30 * time.Minute
	// DefaultMaxReplyBytes is several times the longest reply a model can
	// write (output limits are at most a few hundred thousand tokens, a few
	// bytes each), so only a runaway server reaches it, while the memory a
	// reply holds stays bounded.
	DefaultMaxReplyBytes = 4 << 20
)

// The command-line flags the messages of this package tell the user to
// set, so that the program that defines them uses the same names.
const (
	FlagProvider      = "provider"
	FlagBaseURL       = "base-url"
	FlagModel         = "model"
	FlagHeaderTimeout = "llm-header-timeout"
	FlagIdleTimeout   = "llm-idle-timeout"
	FlagReplyTimeout  = "llm-reply-timeout"
	FlagMaxReply      = "llm-max-reply"
	FlagMaxTokens     = "max-tokens"
	FlagThinking      = "thinking"
)

// The longest tool name and tool call ID a reply may hold. Both APIs allow
// tool names of at most 64 characters ([a-zA-Z0-9_-]), and the IDs they and
// the OpenAI-compatible servers give are short (Anthropic's toolu_… about
// 30 bytes, OpenAI's call_… about 30, vLLM's chatcmpl-tool-… 46, UUIDs 36).
// Four times those leaves a model that misspells a tool name to the
// caller, which answers it as an unknown tool; a longer one comes from a
// broken server, and fails the call, not retried.
const (
	MaxToolNameBytes = 256
	MaxCallIDBytes   = 256
)

// bytesPerToken is the size of a token, in bytes of text, by which the
// output of a reply cut before the server counted it is estimated: about
// four for English and code with the providers' tokenizers.
const bytesPerToken = 4

// limits are a provider's time and size limits, defaults applied: 0 means
// none.
type limits struct {
	header, idle, reply time.Duration
	maxReply            int
	textOnly            func(model string) bool // see Config.TextOnly
}

// limitsOf returns cfg's limits with their defaults.
func limitsOf(cfg Config) limits {
	pick := func(v, def time.Duration) time.Duration {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	l := limits{header: pick(cfg.HeaderTimeout, DefaultHeaderTimeout), idle: pick(cfg.IdleTimeout, DefaultIdleTimeout),
		reply: pick(cfg.ReplyTimeout, DefaultReplyTimeout), textOnly: cfg.TextOnly}
	switch {
	case cfg.MaxReplyBytes == 0:
		l.maxReply = DefaultMaxReplyBytes
	case cfg.MaxReplyBytes > 0:
		l.maxReply = cfg.MaxReplyBytes
	}
	return l
}

// envPrefix returns the prefix of a provider's environment variables.
func envPrefix(name string) (string, bool) {
	switch name {
	case NameAnthropic:
		return "ANTHROPIC", true
	case NameOpenAI:
		return "OPENAI", true
	}
	return "", false
}

// KeyVar returns the environment variable that holds the API key of the
// named provider (ANTHROPIC_API_KEY, OPENAI_API_KEY), "" for an unknown
// name.
func KeyVar(name string) string {
	prefix, ok := envPrefix(strings.ToLower(strings.TrimSpace(name)))
	if !ok {
		return ""
	}
	return prefix + "_API_KEY"
}

// BaseURLVar returns the environment variable that holds the base URL of
// the named provider's API (ANTHROPIC_BASE_URL, OPENAI_BASE_URL), "" for
// an unknown name.
func BaseURLVar(name string) string {
	prefix, ok := envPrefix(strings.ToLower(strings.TrimSpace(name)))
	if !ok {
		return ""
	}
	return prefix + "_BASE_URL"
}

// FromEnv returns cfg with its empty APIKey and BaseURL filled from the
// environment variables of the named provider: ANTHROPIC_API_KEY and
// ANTHROPIC_BASE_URL for "anthropic", OPENAI_API_KEY and OPENAI_BASE_URL for
// "openai". Fields already set are kept; an unknown name changes nothing.
func FromEnv(name string, cfg Config) Config {
	if _, ok := envPrefix(strings.ToLower(name)); !ok {
		return cfg
	}
	if cfg.APIKey == "" {
		cfg.APIKey = os.Getenv(KeyVar(name))
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = os.Getenv(BaseURLVar(name))
	}
	return cfg
}

// New builds a provider by name ("anthropic" or "openai"), filling empty
// Config fields from the environment with [FromEnv].
func New(name string, cfg Config) (Provider, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	cfg = FromEnv(name, cfg)
	switch name {
	case NameAnthropic:
		return NewAnthropic(cfg)
	case NameOpenAI:
		return NewOpenAI(cfg)
	}
	return nil, fmt.Errorf("%w %q: use %q or %q", ErrUnknownProvider, name, NameAnthropic, NameOpenAI)
}

// checkBaseURL reports whether base is empty or an absolute http(s) URL.
func checkBaseURL(envName, base string) error {
	if base == "" {
		return nil
	}
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Errorf("%w: %w: fix -%s or %s", ErrBadBaseURL, err, FlagBaseURL, envName)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w %q: want an http(s) URL such as http://localhost:8080/v1; fix -%s or %s",
			ErrBadBaseURL, u.Redacted(), FlagBaseURL, envName)
	}
	return nil
}

// shownURL returns base for a message, without a password it may hold.
func shownURL(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	return u.Redacted()
}

// defaultHTTPClient returns a client of its own with the settings of
// http.DefaultTransport. It has no time limits: the provider's watchdog
// applies them to any client.
func defaultHTTPClient() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		return &http.Client{Transport: t.Clone()}
	}
	return &http.Client{Transport: http.DefaultTransport}
}

// loggerOr returns l, or a logger that discards everything when l is nil.
func loggerOr(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// redacted is what a scrubbed secret is replaced with.
const redacted = "[REDACTED]"

// scrubber removes a secret from text before it is shown or logged.
type scrubber struct{ secret string }

// scrub returns s with every occurrence of the secret replaced.
func (sc scrubber) scrub(s string) string {
	if sc.secret == "" {
		return s
	}
	return strings.ReplaceAll(s, sc.secret, redacted)
}

// fail returns the Failed event for e with its message scrubbed.
func (sc scrubber) fail(e chat.LLMError) Failed {
	e.Message = sc.scrub(e.Message)
	return Failed{Err: e}
}
