package agentexec

import (
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/approval"
	"github.com/fsmgen/fsmgen/agent/internal/autocommit"
)

// Display shows the agent's work to the user. The agent calls its methods
// on the loop goroutine, one at a time, so an implementation needs no lock
// of its own; they must not block for long.
type Display interface {
	// Text shows a piece of the assistant's reply as it streams in.
	Text(delta string)
	// Reply shows a completed assistant message (its text again, in full,
	// and the tools it asks for).
	Reply(msg chat.Message)
	// ToolCall shows a tool call about to run.
	ToolCall(call chat.ToolCall)
	// ToolProgress shows how far a running tool has come.
	ToolProgress(call chat.ToolCall, p chat.ToolProgress)
	// ToolResult shows a tool call's outcome.
	ToolResult(call chat.ToolCall, out chat.ToolOutcome)
	// Hook shows what the post-tools hook did, or the error it failed with.
	Hook(res autocommit.Result, err error)
	// Retry shows that a failed LLM request will be tried again after delay.
	Retry(attempt int, delay time.Duration, err chat.LLMError)
	// Error shows an error the turn ended with.
	Error(msg string)
	// Notice shows a message about the agent itself (queued input,
	// resuming, stopping).
	Notice(msg string)
	// TurnEnd is called when a turn ends and the agent waits for input.
	TurnEnd()
	// Usage shows the thread's account of tokens, when the user asks for
	// it (an input line "/usage").
	Usage(l chat.Ledger)
	// Ask shows a tool call the user is asked to approve (see
	// Config.Approval): what it will do, exactly, and how to answer. The
	// next message the user types is the answer.
	Ask(q approval.Question)
}

// ContinueDisplay is a Display that shows a reply cut at its token limit,
// which the agent asks the model to continue, apart from a completed one:
// the agent calls Continued for it instead of Reply. A Display without
// the method is given the cut reply with Reply.
type ContinueDisplay interface {
	Display
	// Continued shows a reply cut at its token limit; the model's next
	// reply continues it. n counts the continuations of the turn so far,
	// this one included; limit is how many the turn may have.
	Continued(partial chat.Message, n, limit int)
}

// NopDisplay shows nothing. Embed it to implement only some of Display.
type NopDisplay struct{}

var _ Display = NopDisplay{}

// Text implements Display.
func (NopDisplay) Text(string) {}

// Reply implements Display.
func (NopDisplay) Reply(chat.Message) {}

// ToolCall implements Display.
func (NopDisplay) ToolCall(chat.ToolCall) {}

// ToolProgress implements Display.
func (NopDisplay) ToolProgress(chat.ToolCall, chat.ToolProgress) {}

// ToolResult implements Display.
func (NopDisplay) ToolResult(chat.ToolCall, chat.ToolOutcome) {}

// Hook implements Display.
func (NopDisplay) Hook(autocommit.Result, error) {}

// Retry implements Display.
func (NopDisplay) Retry(int, time.Duration, chat.LLMError) {}

// Error implements Display.
func (NopDisplay) Error(string) {}

// Notice implements Display.
func (NopDisplay) Notice(string) {}

// TurnEnd implements Display.
func (NopDisplay) TurnEnd() {}

// Usage implements Display.
func (NopDisplay) Usage(chat.Ledger) {}

// Ask implements Display.
func (NopDisplay) Ask(approval.Question) {}
