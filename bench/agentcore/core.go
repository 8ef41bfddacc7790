package agentcore

import (
	"fmt"
	"slices"
	"time"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/internal/backoff"
)

// Core is the agent's data: the current state and the fields of every
// state, one set, since only one state is current. Its methods are the
// agent's guards and effects; an effect that ends a step sets the state it
// moves to and the action, and returns the action.
type Core struct {
	// State is the current state.
	State State
	// Act is the last action; handlers return a pointer to it.
	Act Action

	conv       chat.Conversation
	retries    int
	executions []chat.ToolExecution // reused from round to round
	frozen     chat.Request
	completed  []chat.CompletedTool // reused from round to round
	err        chat.LLMError
	origin     chat.ErrorOrigin
	query      chat.Query
	deferred   []Event // the events held (see Defer)

	// b takes the steps a session takes now and then (see the package doc).
	b                *behavior.Agent
	model, system    string
	maxTokens        int
	thinking         int
	maxContinuations int
	temperature      *float64
	tools            []chat.ToolSpec
	maxRetries       int
	baseDelay        time.Duration
	maxDelay         time.Duration
	maxRetryAfter    time.Duration
	mutating         []string
	// window is the context window (0: not known), margin what a request
	// leaves free of it, threshold the estimated tokens past which the
	// conversation is compacted first (0: never), as b computes them.
	window, margin, threshold int
}

// Init puts c in WaitingForUserInput with conv, configured as b is.
func (c *Core) Init(b *behavior.Agent, conv chat.Conversation) {
	cfg := b.Config()
	*c = Core{
		State:            WaitingForUserInput,
		conv:             conv,
		b:                b,
		model:            cfg.Model,
		system:           cfg.System,
		maxTokens:        cfg.MaxTokens,
		thinking:         cfg.Thinking,
		maxContinuations: cfg.MaxContinuations,
		temperature:      cfg.Temperature,
		tools:            cfg.Tools,
		maxRetries:       cfg.MaxRetries,
		baseDelay:        cfg.BaseDelay,
		maxDelay:         cfg.MaxDelay,
		maxRetryAfter:    cfg.MaxRetryAfter,
		mutating:         cfg.MutatingTools,
		window:           cfg.ContextWindow,
		margin:           b.Margin(),
		threshold:        b.Threshold(),
	}
}

// Conversation returns the conversation of the current state.
func (c *Core) Conversation() chat.Conversation { return c.conv }

// Retries returns the failed attempts of the current request.
func (c *Core) Retries() int { return c.retries }

// Origin returns what the last error was of (Error), or who asked for the
// compaction (Compacting).
func (c *Core) Origin() chat.ErrorOrigin { return c.origin }

// request fills r with the request for the conversation, as
// behavior.Agent.BuildRequest builds it: the reply's limit cut to what the
// context window leaves, and the thinking budget with it.
func (c *Core) request(r *chat.Request) {
	maxTokens := c.maxTokens
	if c.window > 0 {
		maxTokens = max(1, min(maxTokens, c.window-c.b.EstimateTokens(c.conv)-c.margin))
	}
	thinking := c.thinking
	if thinking >= maxTokens {
		thinking = 0
		if maxTokens/2 >= 1024 {
			thinking = maxTokens / 2
		}
	}
	r.Model = c.model
	r.System = c.system
	r.Messages = c.conv.Messages()
	r.Tools = c.tools
	r.MaxTokens = maxTokens
	r.Temperature = c.temperature
	r.Thinking = thinking
	r.NoCache = false
}

// NeedsCompaction reports whether the request for the conversation would
// pass the compaction threshold and compaction would shorten it.
func (c *Core) NeedsCompaction() bool {
	return c.threshold > 0 && c.b.EstimateTokens(c.conv) > c.threshold && c.b.CanCompact(c.conv)
}

// Prepare leaves the transient PreparingRequest, the request to send in
// c.Act.Request: for Compacting when NeedsCompaction, else for CallingLlm.
// The effects that enter PreparingRequest end there; the floor calls
// Prepare after them, the libraries fire the branch they choose.
func (c *Core) Prepare() *Action {
	if c.NeedsCompaction() {
		return c.StartCompaction()
	}
	return c.Send()
}

// StartCompaction sends the summary request before the request that would
// pass the threshold (PreparingRequest --[needsCompaction]--> Compacting).
func (c *Core) StartCompaction() *Action { return c.startCompaction(chat.OriginCompaction) }

// Send sends the request prepared (PreparingRequest --[else]--> CallingLlm).
func (c *Core) Send() *Action {
	c.State = CallingLLM
	c.Act.Kind = SendLLMRequest
	return &c.Act
}

// StartTurn appends the user's message and builds the request
// (WaitingForUserInput --UserInput--> PreparingRequest).
func (c *Core) StartTurn(ev *Event) {
	if ev.Message.Role != "" {
		c.conv = c.conv.Append(ev.Message)
	} else {
		msg := ev.Message
		msg.Role = chat.RoleUser
		c.conv = c.conv.Append(msg)
	}
	c.retries = 0
	c.request(&c.Act.Request)
	c.State = PreparingRequest
}

// ShowDelta shows streamed text (CallingLlm --TextDelta--> CallingLlm).
func (c *Core) ShowDelta(ev *Event) *Action {
	c.Act.Kind = DisplayMessage
	c.Act.Content = ev.Content
	return &c.Act
}

// Wait returns WaitForInput, staying in the state.
func (c *Core) Wait() *Action {
	c.Act.Kind = WaitForInput
	return &c.Act
}

// RecordResponse appends the assistant's message (CallingLlm --LlmCompleted-->
// ProcessingLlmResponse); the caller then leaves the transient state with
// ReplyCut and ContinueReply, HasToolCalls and StartTools, or EndTurn.
func (c *Core) RecordResponse(ev *Event) {
	if ev.Response.Message.Role != "" {
		c.conv = c.conv.Append(ev.Response.Message)
	} else {
		msg := ev.Response.Message
		msg.Role = chat.RoleAssistant
		c.conv = c.conv.Append(msg)
	}
	c.retries = 0
	c.State = ProcessingLLMResponse
}

// ReplyCut reports whether the reply stopped at its token limit in its
// text and the turn has continuations left.
func (c *Core) ReplyCut(ev *Event) bool {
	r := &ev.Response
	if r.StopReason != "max_tokens" && r.StopReason != "length" || len(r.Message.ToolCalls) > 0 {
		return false
	}
	return behavior.Continuations(c.conv) < c.maxContinuations
}

// ContinueReply asks the model, in the conversation, to go on with the
// cut reply (ProcessingLlmResponse --[replyCut]--> PreparingRequest).
func (c *Core) ContinueReply() {
	c.conv = c.conv.Append(chat.UserMessage(chat.ContinueNote))
	c.retries = 0
	c.request(&c.Act.Request)
	c.State = PreparingRequest
}

// HasToolCalls reports whether the reply asks for tools.
func (c *Core) HasToolCalls(ev *Event) bool { return len(ev.Response.Message.ToolCalls) > 0 }

// StartTools lists one pending execution per call, in the LLM's order
// (ProcessingLlmResponse --[hasToolCalls]--> ExecutingTools).
func (c *Core) StartTools(ev *Event) *Action {
	calls := ev.Response.Message.ToolCalls
	c.executions = slices.Grow(c.executions[:0], len(calls))[:len(calls)]
	for i := range calls {
		// Field by field: a composite literal is built on the stack and
		// copied, with a store-forwarding stall that costs more than the
		// rest of the transition.
		e := &c.executions[i]
		e.Call = calls[i]
		e.Status = chat.ToolPending
		e.Progress = chat.ToolProgress{}
		e.Outcome = chat.ToolOutcome{}
	}
	c.State = ExecutingTools
	c.Act.Kind = ExecuteTools
	c.Act.Calls = calls[:len(calls):len(calls)]
	return &c.Act
}

// EndTurn waits for the user (ProcessingLlmResponse --[else]--> WaitingForUserInput).
func (c *Core) EndTurn() *Action {
	c.State = WaitingForUserInput
	c.Act.Kind = WaitForInput
	return &c.Act
}

// CanRetry reports whether the error is retryable and the request (or
// the summary request) has retries left.
func (c *Core) CanRetry(ev *Event) bool {
	return ev.Error.Retryable() && c.retries < c.maxRetries
}

// backoff returns the delay before retry number attempt, as behavior.Agent.Backoff.
func (c *Core) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, c.maxRetryAfter)
	}
	return backoff.Exponential(c.baseDelay, c.maxDelay, attempt)
}

// scheduleRetry counts the failed attempt and asks for a timer.
func (c *Core) scheduleRetry(ev *Event) *Action {
	c.retries++
	c.err = ev.Error
	c.State = Error
	c.Act.Kind = ScheduleRetry
	c.Act.Attempt = c.retries
	c.Act.Delay = c.backoff(c.retries, ev.Error.RetryAfter)
	c.Act.Error = ev.Error
	return &c.Act
}

// ScheduleRetry counts the failed attempt and asks for a timer
// (CallingLlm --LlmError [canRetry]--> Error).
func (c *Core) ScheduleRetry(ev *Event) *Action {
	c.origin = chat.OriginLLM
	return c.scheduleRetry(ev)
}

// GiveUp reports the error the request failed with
// (CallingLlm --LlmError [else]--> WaitingForUserInput).
func (c *Core) GiveUp(ev *Event) *Action {
	attempts := c.retries + 1
	var msg string
	switch {
	case !ev.Error.Retryable():
		msg = fmt.Sprintf("LLM request failed: %s (not retried)", ev.Error.Error())
	case attempts == 1:
		msg = fmt.Sprintf("LLM request failed: %s (retries are off)", ev.Error.Error())
	default:
		msg = fmt.Sprintf("LLM request failed after %d attempts: %s", attempts, ev.Error.Error())
	}
	c.retries = 0
	c.State = WaitingForUserInput
	c.Act.Kind = DisplayError
	c.Act.Message = msg
	return &c.Act
}

// IsCompaction reports whether the error waited on is a summary
// request's.
func (c *Core) IsCompaction() bool {
	return c.origin == chat.OriginCompaction || c.origin == chat.OriginCompactCommand
}

// RetryRequest sends the request again (Error --RetryTimeoutFired [else]--> CallingLlm).
func (c *Core) RetryRequest() *Action {
	c.err = chat.LLMError{}
	c.origin = ""
	c.State = CallingLLM
	c.Act.Kind = SendLLMRequest
	c.request(&c.Act.Request)
	return &c.Act
}

// pending returns the index of the first execution for callID that has
// not completed, or -1.
func (c *Core) pending(callID string) int {
	for i := range c.executions {
		if c.executions[i].Call.ID == callID && c.executions[i].Status != chat.ToolCompleted {
			return i
		}
	}
	return -1
}

// IsKnownCall reports whether the progress report names a call of this
// round that has not completed.
func (c *Core) IsKnownCall(ev *Event) bool { return c.pending(ev.CallID) >= 0 }

// RecordProgress marks the call running with its progress
// (ExecutingTools --ToolProgress [isKnownCall]--> ExecutingTools).
func (c *Core) RecordProgress(ev *Event) *Action {
	if i := c.pending(ev.CallID); i >= 0 {
		c.executions[i].Status = chat.ToolRunning
		c.executions[i].Progress = ev.Progress
	}
	c.Act.Kind = WaitForInput
	return &c.Act
}

// ToolDone is what a completion means for the round.
type ToolDone uint8

// The outcomes of a completion, the branches of ExecutingTools × ToolCompleted.
const (
	UnknownCall   ToolDone = iota // isUnknownCall: reject
	OthersPending                 // toolsPending: record and wait
	LastMutating                  // mutatingToolRan: results, then the hook
	Last                          // else: results, then the next request
)

// Classify evaluates the guards of a completion in the spec's order and
// returns the index of the execution it completes (-1 for UnknownCall).
func (c *Core) Classify(ev *Event) (ToolDone, int) {
	this := c.pending(ev.CallID)
	if this < 0 {
		return UnknownCall, -1
	}
	for i := range c.executions {
		if i != this && c.executions[i].Status != chat.ToolCompleted {
			return OthersPending, this
		}
	}
	if c.AnyMutating() {
		return LastMutating, this
	}
	return Last, this
}

// AnyMutating reports whether a call of the round uses a mutating tool
// (mutatingToolRan: once the last call completes, every call has run).
func (c *Core) AnyMutating() bool {
	for i := range c.executions {
		if c.isMutating(c.executions[i].Call.Name) {
			return true
		}
	}
	return false
}

func (c *Core) isMutating(name string) bool {
	for _, m := range c.mutating {
		if m == name {
			return true
		}
	}
	return false
}

// RecordOutcome marks execution i completed with the event's outcome
// (ExecutingTools --ToolCompleted [toolsPending]--> ExecutingTools).
func (c *Core) RecordOutcome(ev *Event, i int) *Action {
	c.executions[i].Status = chat.ToolCompleted
	c.executions[i].Outcome = ev.Outcome
	c.Act.Kind = WaitForInput
	return &c.Act
}

// appendResults appends one tool message per execution, in the LLM's
// order.
func (c *Core) appendResults() {
	for j := range c.executions {
		e := &c.executions[j]
		c.conv = c.conv.Append(chat.Message{
			Role:       chat.RoleTool,
			Content:    e.Outcome.Content,
			ToolCallID: e.Call.ID,
			ToolName:   e.Call.Name,
			IsError:    e.Outcome.IsError,
		})
	}
}

// hook lists the round's calls for the post-tools hook and forgets the
// round.
func (c *Core) hook() {
	c.completed = slices.Grow(c.completed[:0], len(c.executions))[:len(c.executions)]
	for j := range c.executions {
		e, t := &c.executions[j], &c.completed[j]
		t.CallID = e.Call.ID
		t.ToolName = e.Call.Name
		t.Succeeded = !e.Outcome.IsError
	}
	clear(c.executions)
	c.executions = c.executions[:0]
	c.Act.Kind = RunPostToolsHook
	c.Act.CompletedTools = c.completed[:len(c.completed):len(c.completed)]
}

// FinishToolsWithHook completes execution i, appends the results, freezes
// the next request and runs the hook (ExecutingTools --ToolCompleted
// [mutatingToolRan]--> PostToolsHook).
func (c *Core) FinishToolsWithHook(ev *Event, i int) *Action {
	c.executions[i].Status = chat.ToolCompleted
	c.executions[i].Outcome = ev.Outcome
	c.appendResults()
	c.request(&c.frozen)
	c.hook()
	c.State = PostToolsHook
	return &c.Act
}

// FinishTools completes execution i, appends the results and builds the
// next request (ExecutingTools --ToolCompleted [else]--> PreparingRequest).
func (c *Core) FinishTools(ev *Event, i int) {
	c.executions[i].Status = chat.ToolCompleted
	c.executions[i].Outcome = ev.Outcome
	c.appendResults()
	clear(c.executions)
	c.executions = c.executions[:0]
	c.retries = 0
	c.request(&c.Act.Request)
	c.State = PreparingRequest
}

// ResumeAfterHook takes the request frozen before the hook
// (PostToolsHook --PostToolsHookCompleted--> PreparingRequest).
func (c *Core) ResumeAfterHook() {
	c.retries = 0
	c.Act.Request = c.frozen
	c.frozen = chat.Request{}
	c.State = PreparingRequest
}

// Shut moves to ShuttingDown from any state (Running --ShutdownRequested--> ShuttingDown).
func (c *Core) Shut() *Action {
	c.State = ShuttingDown
	c.conv = chat.Conversation{}
	c.retries = 0
	c.err = chat.LLMError{}
	c.origin = ""
	c.query = chat.Query{}
	c.frozen = chat.Request{}
	clear(c.executions)
	c.executions = c.executions[:0]
	c.Act.Kind = Shutdown
	return &c.Act
}
