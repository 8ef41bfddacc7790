// This file is the hand-written half of package agent: the Behavior of the
// machine that spec/agent.yaml describes ("behavior: Agent" there, so the
// generated machine calls a *Agent's guards and effects directly). It
// decides when an LLM error is retried and after how long, threads the
// conversation (user message, assistant message, tool results in the LLM's
// order), and freezes the request sent after the post-tools hook.
//
// Everything here is pure: no I/O, clocks or randomness, so the machine
// stays deterministic and an event log replays exactly.
//
//	m := agent.New(agent.NewAgent(agent.Config{Model: "claude-sonnet-4-5"}),
//		agent.WaitingForUserInput{Conversation: chat.NewConversation("T-1")})
//	act, err := m.HandleEvent(&agent.UserInput{Message: chat.UserMessage("hello")})

package agent

import (
	"fmt"
	"slices"
	"time"

	"github.com/fsmgen/fsmgen/chat"
)

// Config is what the agent's decisions depend on.
type Config struct {
	// Model names the LLM model every request asks for.
	Model string
	// System is the system prompt of every request.
	System string
	// MaxTokens caps each reply; 0 means 4096.
	MaxTokens int
	// Temperature is the sampling temperature; nil leaves the provider's default.
	Temperature *float64
	// Tools are offered to the LLM in every request.
	Tools []chat.ToolSpec
	// MaxRetries counts retries after the first attempt: with 3, a request
	// is tried at most 4 times. Negative means 0; use NoRetries to disable.
	MaxRetries int
	// NoRetries disables retries (MaxRetries 0 would otherwise mean the default).
	NoRetries bool
	// BaseDelay is the delay before the first retry; 0 means 1s. Each
	// further retry doubles it, up to MaxDelay.
	BaseDelay time.Duration
	// MaxDelay caps the backoff; 0 means 30s.
	MaxDelay time.Duration
	// MaxRetryAfter caps a delay a server asks for with retry-after; 0 means 5m.
	MaxRetryAfter time.Duration
	// MutatingTools name the tools that may change files; any completed
	// call of one (even a failed one) runs the post-tools hook. Nil means
	// edit_file and bash.
	MutatingTools []string
}

// The defaults of Config.
const (
	DefaultMaxTokens     = 4096
	DefaultMaxRetries    = 3
	DefaultBaseDelay     = time.Second
	DefaultMaxDelay      = 30 * time.Second
	DefaultMaxRetryAfter = 5 * time.Minute
)

// DefaultMutatingTools are the tools that trigger the post-tools hook when
// Config.MutatingTools is nil.
var DefaultMutatingTools = []string{"edit_file", "bash"}

// Agent is the agent's Behavior. It is immutable and safe to share.
type Agent struct {
	cfg Config
}

var _ Behavior = (*Agent)(nil)

// New returns the behaviour for cfg, with defaults filled in.
func NewAgent(cfg Config) *Agent {
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	switch {
	case cfg.NoRetries || cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	}
	if cfg.BaseDelay <= 0 {
		cfg.BaseDelay = DefaultBaseDelay
	}
	if cfg.MaxDelay <= 0 {
		cfg.MaxDelay = DefaultMaxDelay
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if cfg.MutatingTools == nil {
		cfg.MutatingTools = DefaultMutatingTools
	}
	cfg.MutatingTools = slices.Clone(cfg.MutatingTools)
	cfg.Tools = slices.Clone(cfg.Tools)
	return &Agent{cfg: cfg}
}

// Config returns the configuration in effect, defaults filled in.
func (a *Agent) Config() Config { return a.cfg }

// Request builds the LLM request for a conversation.
func (a *Agent) Request(c chat.Conversation) chat.Request {
	var r chat.Request
	a.fillRequest(&r, c)
	return r
}

// fillRequest sets r to the request for c, field by field: the effects
// build requests in place, in the machine's action or state, rather than
// returning a 96-byte struct to copy (a copy that costs more than the
// rest of the transition).
func (a *Agent) fillRequest(r *chat.Request, c chat.Conversation) {
	r.Model = a.cfg.Model
	r.System = a.cfg.System
	r.Messages = c.Messages()
	r.Tools = a.cfg.Tools
	r.MaxTokens = a.cfg.MaxTokens
	r.Temperature = a.cfg.Temperature
}

// Backoff returns the delay before retry number attempt (1 for the first
// retry): BaseDelay doubled for each earlier retry, capped at MaxDelay. A
// server's retry-after, when given, is used instead, capped at MaxRetryAfter.
func (a *Agent) Backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, a.cfg.MaxRetryAfter)
	}
	d := a.cfg.BaseDelay
	for i := 1; i < attempt && d < a.cfg.MaxDelay; i++ {
		d *= 2
	}
	return min(d, a.cfg.MaxDelay)
}

// CanRetry reports whether the error is retryable and the request has
// retries left.
func (a *Agent) CanRetry(from *CallingLLM, ev *LLMError) bool {
	return ev.Error.Retryable() && from.Retries < a.cfg.MaxRetries
}

// HasToolCalls reports whether the reply asks for tools.
func (a *Agent) HasToolCalls(from *ProcessingLLMResponse) bool {
	return len(from.Response.Message.ToolCalls) > 0
}

// pending returns the index of the first execution for callID that has
// not completed, or -1.
func pending(execs []chat.ToolExecution, callID string) int {
	for i := range execs {
		if execs[i].Call.ID == callID && execs[i].Status != chat.ToolCompleted {
			return i
		}
	}
	return -1
}

// IsUnknownCall reports whether the completion names no pending call of
// this round (unknown or already completed).
func (a *Agent) IsUnknownCall(from *ExecutingTools, ev *ToolCompleted) bool {
	return pending(from.Executions, ev.CallID) < 0
}

// ToolsPending reports whether other calls of the round are still pending
// once this one completes. The spec tests it after isUnknownCall, so the
// completing call is itself pending: others are when more than one is.
// Counting needs no call IDs, which is what makes it cheap.
func (a *Agent) ToolsPending(from *ExecutingTools, ev *ToolCompleted) bool {
	n := 0
	for i := range from.Executions {
		if from.Executions[i].Status != chat.ToolCompleted {
			n++
		}
	}
	return n > 1
}

// MutatingToolRan reports whether, with this completion, a completed call
// of the round used a mutating tool. The spec tests it once the completing
// call is the last pending one (after isUnknownCall and toolsPending), so
// every call of the round has then run: any mutating one counts. A failed
// call counts too: a failed bash command may still have changed files.
func (a *Agent) MutatingToolRan(from *ExecutingTools, ev *ToolCompleted) bool {
	for i := range from.Executions {
		if a.isMutating(from.Executions[i].Call.Name) {
			return true
		}
	}
	return false
}

// isMutating reports whether the named tool may change files. The list is
// short (two tools by default): scanning it is quicker than hashing.
func (a *Agent) isMutating(name string) bool {
	for _, t := range a.cfg.MutatingTools {
		if t == name {
			return true
		}
	}
	return false
}

// IsKnownCall reports whether the progress report names a call of this
// round that has not completed.
func (a *Agent) IsKnownCall(from *ExecutingTools, ev *ToolProgress) bool {
	return pending(from.Executions, ev.CallID) >= 0
}

// StartTurn appends the user's message and builds the request.
func (a *Agent) StartTurn(from *WaitingForUserInput, ev *UserInput, to *CallingLLM, act *SendLLMRequest) {
	to.Conversation = appendDefaultRole(from.Conversation, &ev.Message, chat.RoleUser)
	to.Retries = 0
	a.fillRequest(&act.Request, to.Conversation)
}

// RecordResponse appends the assistant's message and keeps the reply for
// examination.
func (a *Agent) RecordResponse(from *CallingLLM, ev *LLMCompleted, to *ProcessingLLMResponse) {
	to.Conversation = appendDefaultRole(from.Conversation, &ev.Response.Message, chat.RoleAssistant)
}

// appendDefaultRole appends msg, with role if it has none. It copies msg
// only to set the role: a message is wide, and the effects avoid copying
// wide values (see docs/performance.md).
func appendDefaultRole(c chat.Conversation, msg *chat.Message, role chat.Role) chat.Conversation {
	if msg.Role == "" {
		return withRole(c, msg, role)
	}
	return c.Append(*msg)
}

// withRole appends a copy of msg with the role set, out of line so that
// appendDefaultRole stays small enough to inline.
func withRole(c chat.Conversation, msg *chat.Message, role chat.Role) chat.Conversation {
	m := *msg
	m.Role = role
	return c.Append(m)
}

// StartTools lists one pending execution per tool call, in the LLM's order.
// It appends to to.Executions, which holds the storage of the last round
// (the machine keeps it): after the first rounds, it allocates nothing.
func (a *Agent) StartTools(from *ProcessingLLMResponse, to *ExecutingTools, act *ExecuteTools) {
	calls := from.Response.Message.ToolCalls
	execs := slices.Grow(to.Executions, len(calls))[:len(calls)]
	for i := range calls {
		// Field by field: a composite literal would be built on the stack
		// and copied, which costs more than the rest of the transition.
		e := &execs[i]
		e.Call = calls[i]
		e.Status = chat.ToolPending
		e.Progress = chat.ToolProgress{}
		e.Outcome = chat.ToolOutcome{}
	}
	to.Executions = execs
	act.Calls = calls[:len(calls):len(calls)]
}

// ScheduleRetry counts the failed attempt and computes the backoff delay.
func (a *Agent) ScheduleRetry(from *CallingLLM, ev *LLMError, to *Error, act *ScheduleRetry) {
	to.Retries = from.Retries + 1
	to.Origin = chat.OriginLLM
	act.Attempt = to.Retries
	act.Delay = a.Backoff(to.Retries, ev.Error.RetryAfter)
}

// GiveUp reports the error the request failed with.
func (a *Agent) GiveUp(from *CallingLLM, ev *LLMError, to *WaitingForUserInput, act *DisplayError) {
	attempts := from.Retries + 1
	switch {
	case !ev.Error.Retryable():
		act.Message = fmt.Sprintf("LLM request failed: %s (not retried)", ev.Error.Error())
	case attempts == 1:
		act.Message = fmt.Sprintf("LLM request failed: %s (retries are off)", ev.Error.Error())
	default:
		act.Message = fmt.Sprintf("LLM request failed after %d attempts: %s", attempts, ev.Error.Error())
	}
}

// RetryRequest rebuilds the request from the conversation.
func (a *Agent) RetryRequest(from *Error, to *CallingLLM, act *SendLLMRequest) {
	a.fillRequest(&act.Request, to.Conversation)
}

// RecordProgress marks the call running with its progress.
func (a *Agent) RecordProgress(s *ExecutingTools, ev *ToolProgress) {
	if i := pending(s.Executions, ev.CallID); i >= 0 {
		s.Executions[i].Status = chat.ToolRunning
		s.Executions[i].Progress = ev.Progress
	}
}

// RecordOutcome marks the call completed with its outcome.
func (a *Agent) RecordOutcome(s *ExecutingTools, ev *ToolCompleted) {
	complete(s.Executions, ev)
}

// complete marks the first pending execution of the event's call
// completed.
func complete(execs []chat.ToolExecution, ev *ToolCompleted) {
	if i := pending(execs, ev.CallID); i >= 0 {
		setOutcome(&execs[i], ev)
	}
}

// setOutcome marks e completed with the event's outcome, field by field:
// a struct copy of a value just stored word by word stalls on store
// forwarding (see docs/performance.md).
func setOutcome(e *chat.ToolExecution, ev *ToolCompleted) {
	e.Status = chat.ToolCompleted
	e.Outcome.Content = ev.Outcome.Content
	e.Outcome.IsError = ev.Outcome.IsError
}

// withResults completes the last pending call, the one ev completes, and
// appends one tool message per execution to the conversation, in the LLM's
// order.
func withResults(from *ExecutingTools, ev *ToolCompleted) chat.Conversation {
	for i := range from.Executions {
		if e := &from.Executions[i]; e.Status != chat.ToolCompleted {
			setOutcome(e, ev)
			break
		}
	}
	c := from.Conversation
	for i := range from.Executions {
		e := &from.Executions[i]
		c = c.Append(chat.Message{
			Role:       chat.RoleTool,
			Content:    e.Outcome.Content,
			ToolCallID: e.Call.ID,
			ToolName:   e.Call.Name,
			IsError:    e.Outcome.IsError,
		})
	}
	return c
}

// FinishToolsWithHook appends the tool results in the LLM's order and
// freezes the next request for after the hook. Like StartTools, it appends
// to storage the machine keeps; the action shares it with the state.
func (a *Agent) FinishToolsWithHook(from *ExecutingTools, ev *ToolCompleted, to *PostToolsHook, act *RunPostToolsHook) {
	to.Conversation = withResults(from, ev)
	a.fillRequest(&to.PendingRequest, to.Conversation)
	n := len(from.Executions)
	to.CompletedTools = slices.Grow(to.CompletedTools, n)[:n]
	for i := range from.Executions {
		e, t := &from.Executions[i], &to.CompletedTools[i]
		t.CallID = e.Call.ID
		t.ToolName = e.Call.Name
		t.Succeeded = !e.Outcome.IsError
	}
	act.CompletedTools = to.CompletedTools[:len(to.CompletedTools):len(to.CompletedTools)]
}

// FinishTools appends the tool results in the LLM's order and builds the
// next request.
func (a *Agent) FinishTools(from *ExecutingTools, ev *ToolCompleted, to *CallingLLM, act *SendLLMRequest) {
	to.Conversation = withResults(from, ev)
	to.Retries = 0
	a.fillRequest(&act.Request, to.Conversation)
}

// ResumeAfterHook sends the request frozen before the hook.
func (a *Agent) ResumeAfterHook(from *PostToolsHook, ev *PostToolsHookCompleted, to *CallingLLM, act *SendLLMRequest) {
	to.Retries = 0
	act.Request = from.PendingRequest
}

// ConversationOf returns the conversation a state carries, and false for a
// state without one (ShuttingDown, or nil).
func ConversationOf(s State) (chat.Conversation, bool) {
	switch s := s.(type) {
	case WaitingForUserInput:
		return s.Conversation, true
	case CallingLLM:
		return s.Conversation, true
	case ProcessingLLMResponse:
		return s.Conversation, true
	case ExecutingTools:
		return s.Conversation, true
	case PostToolsHook:
		return s.Conversation, true
	case Error:
		return s.Conversation, true
	}
	return chat.Conversation{}, false
}
