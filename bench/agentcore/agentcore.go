// Package agentcore holds what the hand-written contenders of the
// benchmark share: the agent machine's states, events and actions as plain
// tagged structs over the chat types, and its data with its guards and
// effects, written for speed.
//
// The floor (package floor) dispatches to these methods with a nested
// switch; the looplab/fsm and qmuntal/stateless contenders call the same
// methods from their libraries' callbacks and guards, so that the
// difference between them and the floor is the library alone. The logic is
// that of package behavior (the generated machine's guards and effects):
// the turn's steps (a user message, streamed text, a reply, a round of
// tools, the hook, the next request and the checks before it) are written
// here, in place, for speed; the steps a session takes now and then
// (compaction's summary request and the compacted conversation, /undo's cut,
// a query's result) call behavior's own functions, so that the contenders
// cannot drift from the machine on them. The equivalence tests of package
// bench check that every contender takes the same steps as gen/agent.
package agentcore

import (
	"errors"
	"strconv"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// State identifies a state of the agent machine.
type State uint8

// The states, in the order of spec/agent.yaml. ProcessingLLMResponse and
// PreparingRequest are transient: a machine passes through them within a
// step and never rests in them.
const (
	WaitingForUserInput State = iota + 1
	CallingLLM
	ProcessingLLMResponse
	ExecutingTools
	PostToolsHook
	Error
	StoppingTurn
	PreparingRequest
	Compacting
	RunningQuery
	ShuttingDown
)

var stateNames = [...]string{"", "WaitingForUserInput", "CallingLlm", "ProcessingLlmResponse", "ExecutingTools", "PostToolsHook", "Error",
	"StoppingTurn", "PreparingRequest", "Compacting", "RunningQuery", "ShuttingDown"}

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
	Interrupt
	UndoTurn
	CompactRequested
	QueryDetected
	QueryCompleted
)

var eventNames = [...]string{"", "UserInput", "TextDelta", "ToolCallDelta", "LlmCompleted", "LlmError", "ToolProgress", "ToolCompleted",
	"PostToolsHookCompleted", "RetryTimeoutFired", "ShutdownRequested", "Interrupt", "UndoTurn", "CompactRequested", "QueryDetected", "QueryCompleted"}

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
	// Outcome is a tool's result (ToolCompleted) or a query's (QueryCompleted).
	Outcome chat.ToolOutcome
	// ActionTaken says whether the hook committed (PostToolsHookCompleted).
	ActionTaken bool
	// Query is the query the reply asked (QueryDetected), Text the reply up
	// to it and Usage what the reply used.
	Query chat.Query
	Text  string
	Usage chat.Usage
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
	CancelTurn
	RunQuery
)

var actionNames = [...]string{"", "SendLlmRequest", "ExecuteTools", "RunPostToolsHook", "WaitForInput", "DisplayMessage", "DisplayError",
	"ScheduleRetry", "Shutdown", "CancelTurn", "RunQuery"}

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
	// Query is the query to run (RunQuery).
	Query chat.Query
}

// ErrRejected is returned for an event the current state refuses.
var ErrRejected = errors.New("event rejected")
