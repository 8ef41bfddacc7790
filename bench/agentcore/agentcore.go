// Package agentcore holds what the hand-written contenders of the
// benchmark share: the agent machine's states, events and actions as plain
// tagged structs over the chat types, and its data with its guards and
// effects, written for speed.
//
// The floor (package floor) dispatches to these methods with a nested
// switch; the looplab/fsm and qmuntal/stateless contenders call the same
// methods from their libraries' callbacks and guards, so that the
// difference between them and the floor is the library alone. The logic is
// that of gen/agent/behavior.go (the generated machine's guards and effects);
// the equivalence test of package bench checks that every contender takes
// the same steps as gen/agent over a scenario.
package agentcore

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/internal/backoff"
)

// State identifies a state of the agent machine.
type State uint8

// The states, in the order of spec/agent.yaml.
const (
	WaitingForUserInput State = iota + 1
	CallingLLM
	ProcessingLLMResponse
	ExecutingTools
	PostToolsHook
	Error
	ShuttingDown
)

var stateNames = [...]string{"", "WaitingForUserInput", "CallingLlm", "ProcessingLlmResponse", "ExecutingTools", "PostToolsHook", "Error", "ShuttingDown"}

// String returns the state's name as the spec writes it.
func (s State) String() string {
	if int(s) < len(stateNames) && s != 0 {
		return stateNames[s]
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// EventKind identifies an event.
type EventKind uint8

// The events, in the order of spec/agent.yaml.
const (
	UserInput EventKind = iota + 1
	TextDelta
	ToolCallDelta
	LLMCompleted
	LLMError
	ToolProgress
	ToolCompleted
	PostToolsHookCompleted
	RetryTimeoutFired
	ShutdownRequested
)

var eventNames = [...]string{"", "UserInput", "TextDelta", "ToolCallDelta", "LlmCompleted", "LlmError", "ToolProgress", "ToolCompleted", "PostToolsHookCompleted", "RetryTimeoutFired", "ShutdownRequested"}

// String returns the event's name as the spec writes it.
func (k EventKind) String() string {
	if int(k) < len(eventNames) && k != 0 {
		return eventNames[k]
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one event: Kind says which, and which fields are set.
type Event struct {
	Kind EventKind
	// Message is the user's message (UserInput).
	Message chat.Message
	// Content is the streamed text (TextDelta).
	Content string
	// CallID names the tool call (ToolCallDelta, ToolProgress, ToolCompleted).
	CallID string
	// ToolName and ArgumentsFragment are the pieces of a streamed tool call (ToolCallDelta).
	ToolName, ArgumentsFragment string
	// Response is the completed reply (LLMCompleted).
	Response chat.Response
	// Error is the failure (LLMError).
	Error chat.LLMError
	// Progress is a running tool's report (ToolProgress).
	Progress chat.ToolProgress
	// Outcome is a tool's result (ToolCompleted).
	Outcome chat.ToolOutcome
	// ActionTaken says whether the hook committed (PostToolsHookCompleted).
	ActionTaken bool
}

// ActionKind identifies an action; zero is no action.
type ActionKind uint8

// The actions, in the order of spec/agent.yaml.
const (
	SendLLMRequest ActionKind = iota + 1
	ExecuteTools
	RunPostToolsHook
	WaitForInput
	DisplayMessage
	DisplayError
	ScheduleRetry
	Shutdown
)

var actionNames = [...]string{"", "SendLlmRequest", "ExecuteTools", "RunPostToolsHook", "WaitForInput", "DisplayMessage", "DisplayError", "ScheduleRetry", "Shutdown"}

// String returns the action's name as the spec writes it.
func (k ActionKind) String() string {
	if int(k) < len(actionNames) && k != 0 {
		return actionNames[k]
	}
	return "ActionKind(" + strconv.Itoa(int(k)) + ")"
}

// Action is what the machine asks the caller to do. Kind says which
// fields are meaningful; the others hold leftovers of earlier actions.
type Action struct {
	Kind ActionKind
	// Request is the LLM request to send (SendLLMRequest).
	Request chat.Request
	// Calls are the tool calls to run (ExecuteTools).
	Calls []chat.ToolCall
	// CompletedTools are the calls of the round, for the hook (RunPostToolsHook).
	CompletedTools []chat.CompletedTool
	// Content is the text to show (DisplayMessage).
	Content string
	// Message is the error to show (DisplayError).
	Message string
	// Delay, Attempt and Error describe the retry (ScheduleRetry).
	Delay   time.Duration
	Attempt int
	Error   chat.LLMError
}

// ErrRejected is returned for an event the current state refuses.
var ErrRejected = errors.New("event rejected")

// Core is the agent's data: the current state and the fields of every
// state, one set, since only one state is current. Its methods are the
// agent's guards and effects.
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

	model, system string
	maxTokens     int
	temperature   *float64
	tools         []chat.ToolSpec
	maxRetries    int
	baseDelay     time.Duration
	maxDelay      time.Duration
	maxRetryAfter time.Duration
	mutating      []string
}

// Init puts c in WaitingForUserInput with conv, configured by cfg as
// behavior.New(cfg) is.
func (c *Core) Init(cfg behavior.Config, conv chat.Conversation) {
	full := cfg
	*c = Core{
		State:         WaitingForUserInput,
		conv:          conv,
		model:         full.Model,
		system:        full.System,
		maxTokens:     full.MaxTokens,
		temperature:   full.Temperature,
		tools:         full.Tools,
		maxRetries:    full.MaxRetries,
		baseDelay:     full.BaseDelay,
		maxDelay:      full.MaxDelay,
		maxRetryAfter: full.MaxRetryAfter,
		mutating:      full.MutatingTools,
	}
}

// Conversation returns the conversation of the current state.
func (c *Core) Conversation() chat.Conversation { return c.conv }

// Retries returns the failed attempts of the current request.
func (c *Core) Retries() int { return c.retries }

// request fills r with the request for the conversation.
func (c *Core) request(r *chat.Request) {
	r.Model = c.model
	r.System = c.system
	r.Messages = c.conv.Messages()
	r.Tools = c.tools
	r.MaxTokens = c.maxTokens
	r.Temperature = c.temperature
}

// StartTurn appends the user's message and asks for a reply
// (WaitingForUserInput --UserInput--> CallingLlm).
func (c *Core) StartTurn(ev *Event) *Action {
	if ev.Message.Role != "" {
		c.conv = c.conv.Append(ev.Message)
	} else {
		msg := ev.Message
		msg.Role = chat.RoleUser
		c.conv = c.conv.Append(msg)
	}
	c.retries = 0
	c.State = CallingLLM
	c.Act.Kind = SendLLMRequest
	c.request(&c.Act.Request)
	return &c.Act
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
// HasToolCalls and StartTools or EndTurn.
func (c *Core) RecordResponse(ev *Event) {
	if ev.Response.Message.Role != "" {
		c.conv = c.conv.Append(ev.Response.Message)
	} else {
		msg := ev.Response.Message
		msg.Role = chat.RoleAssistant
		c.conv = c.conv.Append(msg)
	}
	c.State = ProcessingLLMResponse
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

// CanRetry reports whether the error is retryable and the request has retries left.
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

// ScheduleRetry counts the failed attempt and asks for a timer
// (CallingLlm --LlmError [canRetry]--> Error).
func (c *Core) ScheduleRetry(ev *Event) *Action {
	c.retries++
	c.err = ev.Error
	c.origin = chat.OriginLLM
	c.State = Error
	c.Act.Kind = ScheduleRetry
	c.Act.Attempt = c.retries
	c.Act.Delay = c.backoff(c.retries, ev.Error.RetryAfter)
	c.Act.Error = ev.Error
	return &c.Act
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

// RetryRequest sends the request again (Error --RetryTimeoutFired--> CallingLlm).
func (c *Core) RetryRequest() *Action {
	c.err = chat.LLMError{}
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
	for i := range c.executions {
		e := &c.executions[i]
		if (i == this || e.Status == chat.ToolCompleted) && c.isMutating(e.Call.Name) {
			return LastMutating, this
		}
	}
	return Last, this
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

// appendResults completes execution i and appends one tool message per
// execution, in the LLM's order.
func (c *Core) appendResults(ev *Event, i int) {
	c.executions[i].Status = chat.ToolCompleted
	c.executions[i].Outcome = ev.Outcome
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

// FinishToolsWithHook appends the results, freezes the next request and
// runs the hook (ExecutingTools --ToolCompleted [mutatingToolRan]--> PostToolsHook).
func (c *Core) FinishToolsWithHook(ev *Event, i int) *Action {
	c.appendResults(ev, i)
	c.request(&c.frozen)
	c.completed = slices.Grow(c.completed[:0], len(c.executions))[:len(c.executions)]
	for j := range c.executions {
		e, t := &c.executions[j], &c.completed[j]
		t.CallID = e.Call.ID
		t.ToolName = e.Call.Name
		t.Succeeded = !e.Outcome.IsError
	}
	clear(c.executions)
	c.State = PostToolsHook
	c.Act.Kind = RunPostToolsHook
	c.Act.CompletedTools = c.completed[:len(c.completed):len(c.completed)]
	return &c.Act
}

// FinishTools appends the results and sends the next request
// (ExecutingTools --ToolCompleted [else]--> CallingLlm).
func (c *Core) FinishTools(ev *Event, i int) *Action {
	c.appendResults(ev, i)
	clear(c.executions)
	c.executions = c.executions[:0]
	c.retries = 0
	c.State = CallingLLM
	c.Act.Kind = SendLLMRequest
	c.request(&c.Act.Request)
	return &c.Act
}

// ResumeAfterHook sends the request frozen before the hook
// (PostToolsHook --PostToolsHookCompleted--> CallingLlm).
func (c *Core) ResumeAfterHook() *Action {
	c.retries = 0
	c.State = CallingLLM
	c.Act.Kind = SendLLMRequest
	c.Act.Request = c.frozen
	c.frozen = chat.Request{}
	return &c.Act
}

// Shut moves to ShuttingDown from any state (* --ShutdownRequested--> ShuttingDown).
func (c *Core) Shut() *Action {
	c.State = ShuttingDown
	c.conv = chat.Conversation{}
	c.retries = 0
	c.Act.Kind = Shutdown
	return &c.Act
}
