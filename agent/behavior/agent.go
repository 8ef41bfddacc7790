// Package behavior holds the coding agent's guards and effects, written by
// hand: the decisions of the machine that spec/agent.yaml describes and
// gen/agent implements. It decides when an LLM error is retried and after
// how long, threads the conversation (user message, assistant message, tool
// results in the LLM's order), and freezes the request sent after the
// post-tools hook.
//
// Everything here is pure: no I/O, clocks or randomness, so the machine
// stays deterministic and an event log replays exactly. Nothing here
// modifies a value it is given: the machine's states and the actions it
// handed out share their memory and must never change.
//
//	b, err := behavior.New(behavior.DefaultConfig())
//	m, err := agent.New(agent.Config{Behavior: b, Handler: handler, Initial: agent.WaitingForUserInput{Conversation: chat.NewConversation("T-1")}})
//	err = m.HandleEvent(&agent.UserInput{Message: chat.UserMessage("hello")})
package behavior

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/backoff"
)

// Config is what the agent's decisions depend on. Every field means what
// it says, zero included: DefaultConfig gives the defaults.
type Config struct {
	// Model names the LLM model every request asks for; required.
	Model string
	// System is the system prompt of every request.
	System string
	// MaxTokens caps each reply; it must be positive.
	MaxTokens int
	// Thinking is the budget of tokens the model may think with before
	// each reply (Anthropic's extended thinking); 0 turns thinking off. It
	// must be less than MaxTokens.
	Thinking int
	// MaxContinuations is how many times in a row a reply cut at its
	// token limit is continued in one turn; 0 never continues one.
	MaxContinuations int
	// Temperature is the sampling temperature; nil leaves the provider's default.
	Temperature *float64
	// Tools are offered to the LLM in every request.
	Tools []chat.ToolSpec
	// MaxRetries counts retries after the first attempt: with 3, a request
	// is tried at most 4 times; with 0, once.
	MaxRetries int
	// BaseDelay is the delay before the first retry; each further retry
	// doubles it, up to MaxDelay.
	BaseDelay time.Duration
	// MaxDelay caps the backoff.
	MaxDelay time.Duration
	// MaxRetryAfter caps a delay a server asks for with retry-after.
	MaxRetryAfter time.Duration
	// MutatingTools name the tools that may change files; any completed
	// call of one (even a failed one) runs the post-tools hook. None, when
	// empty.
	MutatingTools []string
	// ContextWindow is the model's context window, in tokens; 0 when it
	// is not known, which turns compaction off.
	ContextWindow int
	// CompactAt is the share of ContextWindow a request's estimated size
	// (see Agent.EstimateTokens) may reach: a request that would pass it
	// is preceded by compaction, which replaces the older part of the
	// conversation by the model's summary of it. 0 turns compaction off;
	// at most 1.
	CompactAt float64
	// MaxQueries is how many queries (see agent/internal/query) one turn of a
	// model without tool calling may ask; the one after them ends the
	// turn with an error. 0 allows none.
	MaxQueries int
}

// The defaults of DefaultConfig.
const (
	DefaultModel         = "claude-sonnet-4-5"
	DefaultMaxTokens     = 4096
	DefaultContinuations = 3
	DefaultMaxRetries    = 3
	DefaultBaseDelay     = time.Second
	DefaultMaxDelay      = 30 * time.Second
	DefaultMaxRetryAfter = 5 * time.Minute
	DefaultMaxQueries    = 8
)

// DefaultMutatingTools are the tools DefaultConfig lists as mutating.
var DefaultMutatingTools = []string{"edit_file", "bash"}

// DefaultConfig returns the default configuration: DefaultModel, 4096
// tokens, no thinking, 3 continuations of a cut reply, 3 retries after
// 1s, 2s, 4s (at most 30s, or 5m when the server asks), edit_file and
// bash mutating, 8 queries a turn.
func DefaultConfig() Config {
	return Config{
		Model:            DefaultModel,
		MaxTokens:        DefaultMaxTokens,
		MaxContinuations: DefaultContinuations,
		MaxRetries:       DefaultMaxRetries,
		BaseDelay:        DefaultBaseDelay,
		MaxDelay:         DefaultMaxDelay,
		MaxRetryAfter:    DefaultMaxRetryAfter,
		MutatingTools:    slices.Clone(DefaultMutatingTools),
		CompactAt:        DefaultCompactAt,
		MaxQueries:       DefaultMaxQueries,
	}
}

// Agent is the agent's Behavior. It is immutable and safe to share.
type Agent struct {
	cfg Config
	// fixedBytes is what every request carries besides its messages: the
	// system prompt and the tools, as EstimateTokens counts them.
	fixedBytes int
	// threshold is Threshold, computed once.
	threshold int
}

var _ agent.Behavior = (*Agent)(nil)

// New returns the behaviour for cfg, or an error naming the first field
// that has no sensible value.
func New(cfg Config) (*Agent, error) {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(cfg.Model != "", "behavior: the model is empty: name one (Config.Model)")
	check(cfg.MaxTokens > 0, "behavior: max tokens is %d: it must be positive (Config.MaxTokens)", cfg.MaxTokens)
	check(cfg.Thinking >= 0 && (cfg.Thinking == 0 || cfg.Thinking < cfg.MaxTokens),
		"behavior: the thinking budget is %d: it must be 0 (off), or positive and less than max tokens, %d (Config.Thinking)", cfg.Thinking, cfg.MaxTokens)
	check(cfg.MaxContinuations >= 0, "behavior: max continuations is %d: it must be 0 or more (Config.MaxContinuations)", cfg.MaxContinuations)
	check(cfg.MaxRetries >= 0, "behavior: max retries is %d: it must be 0 or more (Config.MaxRetries)", cfg.MaxRetries)
	check(cfg.BaseDelay > 0, "behavior: the retry delay is %s: it must be positive (Config.BaseDelay)", cfg.BaseDelay)
	check(cfg.MaxDelay >= cfg.BaseDelay, "behavior: the longest retry delay %s is shorter than the first, %s (Config.MaxDelay)", cfg.MaxDelay, cfg.BaseDelay)
	check(cfg.MaxQueries >= 0, "behavior: max queries is %d: it must be 0 or more (Config.MaxQueries)", cfg.MaxQueries)
	check(cfg.MaxRetryAfter > 0, "behavior: the cap on retry-after is %s: it must be positive (Config.MaxRetryAfter)", cfg.MaxRetryAfter)
	check(cfg.ContextWindow >= 0, "behavior: the context window is %d tokens: it must be 0 (not known) or more (Config.ContextWindow)", cfg.ContextWindow)
	check(cfg.CompactAt >= 0 && cfg.CompactAt <= 1, "behavior: compaction at %g of the context window: give a share from 0 (off) to 1 (Config.CompactAt)", cfg.CompactAt)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	cfg.MutatingTools = slices.Clone(cfg.MutatingTools)
	cfg.Tools = slices.Clone(cfg.Tools)
	fixed := len(cfg.System)
	for _, t := range cfg.Tools {
		// The schema counted as json.Marshal writes it (compact, HTML
		// escaped), as an event log's header carries it: a replayed
		// config estimates as the run did.
		schema := len(t.InputSchema)
		var b, e bytes.Buffer
		if json.Compact(&b, t.InputSchema) == nil {
			json.HTMLEscape(&e, b.Bytes())
			schema = e.Len()
		}
		fixed += len(t.Name) + len(t.Description) + schema + 32
	}
	a := &Agent{cfg: cfg, fixedBytes: fixed}
	a.threshold = a.computeThreshold()
	return a, nil
}

// Config returns the configuration in effect.
func (a *Agent) Config() Config {
	cfg := a.cfg
	cfg.MutatingTools = slices.Clone(cfg.MutatingTools)
	cfg.Tools = slices.Clone(cfg.Tools)
	return cfg
}

// BuildRequest builds the request for the conversation. When the context
// window is known, the reply's limit is cut to what the window leaves
// after the request's estimated input and the margin (see Margin), and
// the thinking budget with it, so that no provider refuses the request
// for asking more than the window holds.
func (a *Agent) BuildRequest(c chat.Conversation) chat.Request {
	maxTokens := a.maxTokensFor(a.cfg.MaxTokens, a.EstimateTokens(c))
	return chat.Request{
		Model:       a.cfg.Model,
		System:      a.cfg.System,
		Messages:    c.Messages(),
		Tools:       a.cfg.Tools,
		MaxTokens:   maxTokens,
		Temperature: a.cfg.Temperature,
		Thinking:    a.thinkingFor(maxTokens),
	}
}

// cutReason reports whether a reply's stop reason says it was cut at its
// token limit: Anthropic's max_tokens, OpenAI's length.
func cutReason(stopReason string) bool {
	return stopReason == "max_tokens" || stopReason == "length"
}

// ReplyCut reports whether the reply stopped at its token limit in its
// text, and fewer than MaxContinuations continuations were asked for in
// the turn (since the user's last message). A reply cut inside a tool
// call is not continued: the call's arguments are cut, and it is answered
// with an error that says so (see chat.ToolCall.Malformed), which the
// model acts on.
func (a *Agent) ReplyCut(c chat.Conversation, response chat.Response) bool {
	if !cutReason(response.StopReason) || len(response.Message.ToolCalls) > 0 {
		return false
	}
	return Continuations(c) < a.cfg.MaxContinuations
}

// Continuations counts the continuations asked for in a row at the end of
// the conversation: the chat.ContinueNote messages since the user's last own
// message.
func Continuations(c chat.Conversation) int {
	msgs := c.Messages()
	n := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != chat.RoleUser {
			continue
		}
		if m.Content != chat.ContinueNote {
			break
		}
		n++
	}
	return n
}

// ContinueReply keeps the cut reply (RecordResponse appended it) and asks
// the model to continue it.
func (a *Agent) ContinueReply(c chat.Conversation) (chat.Conversation, chat.Request) {
	c = c.Append(chat.UserMessage(chat.ContinueNote))
	return c, a.BuildRequest(c)
}

// Backoff returns the delay before retry number attempt (1 for the first
// retry): BaseDelay doubled for each earlier retry, capped at MaxDelay. A
// server's retry-after, when given, is used instead, capped at MaxRetryAfter.
func (a *Agent) Backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, a.cfg.MaxRetryAfter)
	}
	return backoff.Exponential(a.cfg.BaseDelay, a.cfg.MaxDelay, attempt)
}

// CanRetry reports whether the error is retryable and the request has
// retries left.
func (a *Agent) CanRetry(err chat.LLMError, retries int) bool {
	return err.Retryable() && retries < a.cfg.MaxRetries
}

// HasToolCalls reports whether the reply asks for tools.
func (a *Agent) HasToolCalls(response chat.Response) bool {
	return len(response.Message.ToolCalls) > 0
}

// IsUnknownCall reports whether the completion names no pending call of
// this round (unknown or already completed).
func (a *Agent) IsUnknownCall(round chat.ToolRound, callID string) bool {
	return round.Pending(callID) < 0
}

// ToolsPending reports whether other calls of the round are still pending
// once this one completes. The spec tests it after isUnknownCall, so the
// completing call is itself pending: others are when more than one is.
func (a *Agent) ToolsPending(round chat.ToolRound) bool {
	return round.PendingCount() > 1
}

// MutatingToolRan reports whether, with this completion, a completed call
// of the round used a mutating tool. The spec tests it once the completing
// call is the last pending one (after isUnknownCall and toolsPending), so
// every call of the round has then run: any mutating one counts. A failed
// call counts too: a failed bash command may still have changed files.
func (a *Agent) MutatingToolRan(round chat.ToolRound) bool {
	for _, c := range round.Calls() {
		if slices.Contains(a.cfg.MutatingTools, c.Name) {
			return true
		}
	}
	return false
}

// IsKnownCall reports whether the progress report names a call of this
// round that has not completed.
func (a *Agent) IsKnownCall(round chat.ToolRound, callID string) bool {
	return round.Pending(callID) >= 0
}

// StartTurn appends the user's message and builds the request.
func (a *Agent) StartTurn(c chat.Conversation, msg chat.Message) (chat.Conversation, chat.Request) {
	c = c.AppendMessage(&msg, chat.RoleUser)
	return c, a.BuildRequest(c)
}

// RecordResponse appends the assistant's message.
func (a *Agent) RecordResponse(c chat.Conversation, response chat.Response) chat.Conversation {
	return c.AppendMessage(&response.Message, chat.RoleAssistant)
}

// StartTools starts the round of the reply's tool calls, all pending, in
// the LLM's order, in the conversation's storage.
func (a *Agent) StartTools(c chat.Conversation, response chat.Response) (chat.ToolRound, []chat.ToolCall) {
	round := c.StartRound(response.Message.ToolCalls)
	return round, round.Calls()
}

// ScheduleRetry counts the failed attempt and computes the backoff delay.
func (a *Agent) ScheduleRetry(retries int, err chat.LLMError) (int, chat.ErrorOrigin, int, time.Duration) {
	attempt := retries + 1
	return attempt, chat.OriginLLM, attempt, a.Backoff(attempt, err.RetryAfter)
}

// GiveUp describes the error the request failed with.
func (a *Agent) GiveUp(retries int, err chat.LLMError) string {
	attempts := retries + 1
	switch {
	case !err.Retryable():
		return fmt.Sprintf("LLM request failed: %s (not retried)", err.Error())
	case attempts == 1:
		return fmt.Sprintf("LLM request failed: %s (retries are off)", err.Error())
	}
	return fmt.Sprintf("LLM request failed after %d attempts: %s", attempts, err.Error())
}

// RecordProgress marks the call running with its progress.
func (a *Agent) RecordProgress(round chat.ToolRound, callID string, progress chat.ToolProgress) chat.ToolRound {
	if i := round.Pending(callID); i >= 0 {
		return round.Progress(i, progress)
	}
	return round
}

// RecordOutcome marks the call completed with its outcome.
func (a *Agent) RecordOutcome(round chat.ToolRound, callID string, outcome chat.ToolOutcome) chat.ToolRound {
	if i := round.Pending(callID); i >= 0 {
		return round.Complete(i, outcome)
	}
	return round
}

// finish completes the last pending call of the round and appends one
// tool message per call to the conversation, in the LLM's order.
func finish(c chat.Conversation, round chat.ToolRound, callID string, outcome chat.ToolOutcome) (chat.Conversation, chat.ToolRound) {
	if i := round.Pending(callID); i >= 0 {
		round = round.Complete(i, outcome)
	}
	return c.AppendToolResults(round), round
}

// FinishToolsWithHook appends the tool results in the LLM's order and
// freezes the next request for after the hook, which runs on the
// completed round.
func (a *Agent) FinishToolsWithHook(c chat.Conversation, round chat.ToolRound, callID string, outcome chat.ToolOutcome) (chat.Conversation, chat.Request, chat.ToolRound) {
	c, round = finish(c, round, callID, outcome)
	return c, a.BuildRequest(c), round
}

// FinishTools appends the tool results in the LLM's order and builds the
// next request.
func (a *Agent) FinishTools(c chat.Conversation, round chat.ToolRound, callID string, outcome chat.ToolOutcome) (chat.Conversation, chat.Request) {
	c, _ = finish(c, round, callID, outcome)
	return c, a.BuildRequest(c)
}

// UserStoppedPrefix starts the outcome of a tool call the user stopped.
const UserStoppedPrefix = "interrupted: the user stopped this tool before it finished"

// userStopped is the outcome of a tool call the user stopped.
var userStopped = chat.ToolOutcome{
	Content: UserStoppedPrefix + "; it may or may not have taken effect, so check before running it again",
	IsError: true,
}

// UserStopped returns the outcome InterruptTools gives a tool call the user
// stopped: an error result that starts with UserStoppedPrefix.
func UserStopped() chat.ToolOutcome { return userStopped }

// InterruptTurn tells the model, in the conversation, that the user
// stopped the turn before the reply ended.
func (a *Agent) InterruptTurn(c chat.Conversation) chat.Conversation {
	return c.Append(chat.UserMessage(chat.UserStoppedNote))
}

// InterruptTools completes the calls still running as stopped by the user
// and appends the round's results, in the LLM's order.
func (a *Agent) InterruptTools(c chat.Conversation, round chat.ToolRound) chat.Conversation {
	c, _ = a.InterruptToolsWithHook(c, round)
	return c
}

// InterruptToolsWithHook completes the calls still running as stopped by
// the user, appends the round's results and returns the round for the
// post-tools hook.
func (a *Agent) InterruptToolsWithHook(c chat.Conversation, round chat.ToolRound) (chat.Conversation, chat.ToolRound) {
	for i := range round.Len() {
		if round.Execution(i).Status != chat.ToolCompleted {
			round = round.Complete(i, userStopped)
		}
	}
	return c.AppendToolResults(round), round
}

// TurnStart returns the index of the message that started the last turn:
// the user's last message, notes the agent writes in the user's name
// (chat.IsAgentNote) left out; false when the conversation has none. It is
// the rule /undo goes by: the machine's undoTurn effect cuts there, and the
// runtime finds the turn's commit by it.
func TurnStart(msgs []chat.Message) (int, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if chat.IsTyped(msgs[i]) {
			return i, true
		}
	}
	return 0, false
}

// TurnKey returns what identifies the last turn (see TurnStart): the ID
// of the user's message that started it, or, for a message saved without
// one, its index; false when the conversation has no turn. The commit of
// a turn carries it (autocommit's Agent-Turn trailer), and /undo finds the
// commit by it: unlike an index, an ID stays the turn's own when
// compaction or /undo change the messages before it.
func TurnKey(msgs []chat.Message) (string, bool) {
	i, ok := TurnStart(msgs)
	switch {
	case !ok:
		return "", false
	case msgs[i].ID != "":
		return msgs[i].ID, true
	}
	return strconv.Itoa(i), true
}

// UndoTurn cuts the conversation back to before the user's last message
// (see TurnStart); a conversation without one is left as it is.
func (a *Agent) UndoTurn(c chat.Conversation) chat.Conversation {
	if i, ok := TurnStart(c.Messages()); ok {
		return c.Truncate(i)
	}
	return c
}
