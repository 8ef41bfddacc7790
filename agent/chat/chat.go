// Package chat holds the data the coding agent talks about: messages, tool
// calls, LLM requests and responses, tool outcomes and LLM errors, the
// append-only [Conversation] they are threaded through, the notes the agent
// writes in the user's name (which of the messages the user typed: IsTyped),
// and the account of the tokens a thread used ([Ledger]).
//
// The package is pure data: it performs no I/O. The generated agent machine
// (gen/agent) carries these values in its states, events and actions, the
// hand-written guards and effects (behavior) compute them, and the runtime
// turns them into provider API calls and tool runs.
package chat

import (
	"encoding/json"
	"fmt"
	"time"
)

// Role says who wrote a [Message].
type Role string

// The roles a message can have.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a conversation.
type Message struct {
	// Role says who wrote the message.
	Role Role `json:"role"`
	// Content is the message text; for a tool message, the tool's output.
	Content string `json:"content"`
	// ToolCalls are the tools an assistant message asks to run, in the
	// order the LLM listed them.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID links a tool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// ToolName names the tool whose result a tool message carries.
	ToolName string `json:"tool_name,omitempty"`
	// IsError marks a tool message whose tool failed.
	IsError bool `json:"is_error,omitempty"`
	// ID identifies a message the user typed, one ID a message (see
	// behavior.TurnKey): the turn it starts is known by it, as the commit
	// of the turn says (its Agent-Turn trailer), whatever compaction or a
	// fork does to the messages before it. Empty for the others; it is
	// never sent to the model.
	ID string `json:"id,omitempty"`
	// Summary marks the user-role message that holds the model's summary
	// of the earlier conversation, put in its place when the agent
	// compacted it: it is sent as a user message, but no one typed it, so
	// it is no turn's start.
	Summary bool `json:"summary,omitempty"`
	// Thinking holds the model's thinking blocks of an assistant message,
	// in the order it wrote them, before its text and tool calls
	// (Anthropic's extended thinking). They are sent back with the
	// message: the API needs them, signatures intact, beside the tool
	// results of the same turn.
	Thinking []Thinking `json:"thinking,omitempty"`
	// Images are the pictures attached to a user message, sent as image
	// blocks before its text; the text holds each one's Marker, so that
	// what shows the text shows them.
	Images []Image `json:"images,omitempty"`
}

// Thinking is one thinking block of an assistant message: the model's
// reasoning in Text with its Signature, or, when the provider encrypted
// it (Anthropic's redacted_thinking), Redacted alone. Both are opaque to
// the agent and are sent back byte for byte.
type Thinking struct {
	// Text is the reasoning the model wrote; empty for a redacted block.
	Text string `json:"text,omitempty"`
	// Signature is the provider's signature of Text.
	Signature string `json:"signature,omitempty"`
	// Redacted is the encrypted data of a redacted block.
	Redacted string `json:"redacted,omitempty"`
}

// UserMessage returns a message from the user.
func UserMessage(text string) Message { return Message{Role: RoleUser, Content: text} }

// ToolCall is one tool invocation requested by the LLM.
type ToolCall struct {
	// ID is the provider's identifier of the call.
	ID string `json:"id"`
	// Name is the tool to run.
	Name string `json:"name"`
	// Arguments is the JSON object of arguments, as the LLM wrote it; for
	// a Malformed call, what the LLM wrote as a JSON string.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Malformed, when not empty, says why the arguments the LLM wrote
	// cannot be used, e.g. "are not a JSON object". Such a call is not
	// run: it is answered with an error saying so, and the rest of the
	// reply goes on.
	Malformed string `json:"malformed,omitempty"`
}

// ToolSpec describes a tool to the LLM.
type ToolSpec struct {
	// Name is the tool's name.
	Name string `json:"name"`
	// Description tells the LLM what the tool does.
	Description string `json:"description"`
	// InputSchema is the JSON Schema of the tool's arguments.
	InputSchema json.RawMessage `json:"input_schema"`
}

// Request is one call to an LLM.
type Request struct {
	// Model names the provider's model.
	Model string `json:"model"`
	// System is the system prompt; empty for none.
	System string `json:"system,omitempty"`
	// Messages is the whole conversation so far. It shares memory with the
	// conversation it was taken from: read it, never modify it.
	Messages []Message `json:"messages"`
	// Tools are the tools the LLM may call.
	Tools []ToolSpec `json:"tools,omitempty"`
	// MaxTokens caps the length of the reply.
	MaxTokens int `json:"max_tokens"`
	// Temperature is the sampling temperature; nil leaves the provider's default.
	Temperature *float64 `json:"temperature,omitempty"`
	// Thinking is the budget of tokens the model may think with before it
	// answers (Anthropic's extended thinking); 0 turns thinking off. It
	// must be less than MaxTokens.
	Thinking int `json:"thinking,omitempty"`
	// NoCache asks the provider to write nothing of the request to its
	// prompt cache (Anthropic's cache_control breakpoints are left out),
	// for a request no later one starts as, such as a compaction's
	// summary request: writing it would cost the cache-write premium for
	// nothing. A provider that caches on its own (OpenAI) ignores it.
	NoCache bool `json:"no_cache,omitempty"`
}

// Usage counts the tokens of one LLM call, or of several added with
// [Usage.Add]. The cache and reasoning figures are parts of the totals, not
// additions to them; a provider that does not report one leaves it 0.
type Usage struct {
	// InputTokens counts every token of the prompt, those written to or
	// read from the provider's prompt cache included.
	InputTokens int `json:"input_tokens"`
	// OutputTokens counts every token of the reply, reasoning included.
	OutputTokens int `json:"output_tokens"`
	// CacheCreationInputTokens is the part of InputTokens written to the
	// prompt cache (Anthropic's cache_creation_input_tokens, OpenAI's
	// prompt_tokens_details.cache_write_tokens).
	CacheCreationInputTokens int `json:"cache_creation_input_tokens,omitempty"`
	// CacheReadInputTokens is the part of InputTokens read from the prompt
	// cache (Anthropic's cache_read_input_tokens, OpenAI's
	// prompt_tokens_details.cached_tokens).
	CacheReadInputTokens int `json:"cache_read_input_tokens,omitempty"`
	// ReasoningTokens is the part of OutputTokens the model spent thinking
	// (OpenAI's completion_tokens_details.reasoning_tokens, Anthropic's
	// output_tokens_details.thinking_tokens).
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
}

// Add returns the sum of u and v, figure by figure: the usage of two calls
// together, e.g. for a ledger of a whole thread.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:              u.InputTokens + v.InputTokens,
		OutputTokens:             u.OutputTokens + v.OutputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens + v.CacheCreationInputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens + v.CacheReadInputTokens,
		ReasoningTokens:          u.ReasoningTokens + v.ReasoningTokens,
	}
}

// Response is a completed LLM reply.
type Response struct {
	// Message is the assistant message; its ToolCalls are the tools to run.
	Message Message `json:"message"`
	// Usage counts the tokens used, when the provider reports it.
	Usage Usage `json:"usage"`
	// StopReason is the provider's reason for stopping, e.g. "end_turn".
	StopReason string `json:"stop_reason,omitempty"`
}

// ErrorKind classifies an [LLMError].
type ErrorKind string

// The kinds of LLM errors. The first six are worth retrying.
const (
	ErrRateLimited    ErrorKind = "rate_limited"    // 429
	ErrOverloaded     ErrorKind = "overloaded"      // 529, or an overloaded_error event
	ErrServer         ErrorKind = "server"          // other 5xx
	ErrTimeout        ErrorKind = "timeout"         // 408 or a deadline
	ErrNetwork        ErrorKind = "network"         // the connection failed or was cut
	ErrMalformed      ErrorKind = "malformed"       // the stream could not be parsed
	ErrAuth           ErrorKind = "auth"            // 401, 403: fix the API key
	ErrInvalidRequest ErrorKind = "invalid_request" // 400, 404, 413, 422: fix the request
	ErrOther          ErrorKind = "other"           // anything else; not retried
)

// LLMError is a failed LLM call, classified so the machine can decide
// whether to retry.
type LLMError struct {
	// Kind classifies the failure.
	Kind ErrorKind `json:"kind"`
	// Message describes the failure for a person. It never holds a secret.
	Message string `json:"message"`
	// StatusCode is the HTTP status, or 0 when there was none.
	StatusCode int `json:"status_code,omitempty"`
	// RetryAfter is the delay the server asked for, or 0.
	RetryAfter time.Duration `json:"retry_after,omitempty"`
	// Usage is what the failed call is known to have used, for a ledger: a
	// reply cut short is still charged for its prompt and for what the
	// model wrote before the cut. It holds the figures the provider reported before
	// the failure and, where the reply was cut before the provider counted
	// its output, an estimate of it; zero when no reply started.
	Usage Usage `json:"usage,omitzero"`
}

// Retryable reports whether trying the same request again may succeed.
func (e LLMError) Retryable() bool {
	switch e.Kind {
	case ErrRateLimited, ErrOverloaded, ErrServer, ErrTimeout, ErrNetwork, ErrMalformed:
		return true
	}
	return false
}

// Error returns a one-line description, e.g. "rate_limited (HTTP 429): slow down".
func (e LLMError) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("%s (HTTP %d): %s", e.Kind, e.StatusCode, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.Message)
}

// ErrorOrigin says what failed when the agent entered its Error state.
type ErrorOrigin string

// The origins of an error.
const (
	OriginLLM  ErrorOrigin = "llm"
	OriginTool ErrorOrigin = "tool"
	OriginIO   ErrorOrigin = "io"
	// OriginCompaction is a summary request the agent sent because the
	// next request would pass the compaction threshold; that request is
	// sent once the conversation is compacted.
	OriginCompaction ErrorOrigin = "compaction"
	// OriginCompactCommand is a summary request the user asked for
	// between turns (/compact); no request waits for it.
	OriginCompactCommand ErrorOrigin = "compact_command"
)

// ToolStatus is where a tool execution stands.
type ToolStatus string

// The statuses of a tool execution: Pending → Running → Completed.
const (
	ToolPending   ToolStatus = "pending"
	ToolRunning   ToolStatus = "running"
	ToolCompleted ToolStatus = "completed"
)

// ToolProgress reports how far a long-running tool has come.
type ToolProgress struct {
	// Fraction is the share done, from 0 to 1, when known.
	Fraction float64 `json:"fraction,omitempty"`
	// Message describes the current step.
	Message string `json:"message,omitempty"`
	// UnitsProcessed counts units of work done, when known.
	UnitsProcessed int64 `json:"units_processed,omitempty"`
	// Output is the end of what the tool has printed so far (a running
	// command's last lines, a line still being written last), for the
	// user to watch; empty when the tool streams none.
	Output string `json:"output,omitempty"`
}

// ToolOutcome is the result of one tool call.
type ToolOutcome struct {
	// Content is the tool's output, or the error text when IsError is set.
	Content string `json:"content"`
	// IsError marks a failed call.
	IsError bool `json:"is_error,omitempty"`
	// Approval is what the user answered when asked to approve the call
	// (agent/internal/approval: "granted", "always", "refused"); empty when the
	// call was not asked about.
	Approval string `json:"approval,omitempty"`
}

// ToolExecution tracks one tool call of the current round.
type ToolExecution struct {
	// Call is the call being executed.
	Call ToolCall `json:"call"`
	// Status is where the execution stands.
	Status ToolStatus `json:"status"`
	// Progress is the last progress report of a running tool.
	Progress ToolProgress `json:"progress,omitzero"`
	// Outcome is the result of a completed tool.
	Outcome ToolOutcome `json:"outcome,omitzero"`
}

// CompletedTool summarises a finished tool call for the post-tools hook.
type CompletedTool struct {
	// CallID identifies the call.
	CallID string `json:"call_id"`
	// ToolName names the tool.
	ToolName string `json:"tool_name"`
	// Succeeded is false when the tool reported an error.
	Succeeded bool `json:"succeeded"`
}
