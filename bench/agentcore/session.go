package agentcore

import (
	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
)

// The steps a session takes now and then: the user stopping a turn or
// taking it back, compaction, and the queries of a model without tool
// calling. What they compute beyond a field or two (the summary request
// and the compacted conversation, /undo's cut, a query's result, the
// messages that explain an error) comes from package behavior.

// InterruptTurn tells the model that the user stopped the turn and waits
// for input (CallingLlm, Error, Compacting, RunningQuery --Interrupt-->
// WaitingForUserInput / CancelTurn).
func (c *Core) InterruptTurn() *Action {
	c.conv = c.conv.Append(chat.UserMessage(chat.UserStoppedNote))
	return c.cancel()
}

// cancel ends the turn: WaitingForUserInput, CancelTurn.
func (c *Core) cancel() *Action {
	c.retries = 0
	c.err = chat.LLMError{}
	c.origin = ""
	c.query = chat.Query{}
	c.State = WaitingForUserInput
	c.Act.Kind = CancelTurn
	return &c.Act
}

// IsCompactCommand reports whether the compaction waited on (Error,
// Compacting) was asked for by the user between turns.
func (c *Core) IsCompactCommand() bool { return c.origin == chat.OriginCompactCommand }

// StopCompactCommand drops the compaction the user asked for and waits
// for input, the conversation as it was (Error, Compacting --Interrupt
// [isCompactCommand]--> WaitingForUserInput / CancelTurn).
func (c *Core) StopCompactCommand() *Action { return c.cancel() }

// InterruptTools completes the calls still running as stopped by the
// user and appends the round's results; with a mutating call in the round
// it runs the hook (ExecutingTools --Interrupt [mutatingToolRan]-->
// StoppingTurn / RunPostToolsHook), else it waits for input
// (ExecutingTools --Interrupt [else]--> WaitingForUserInput / CancelTurn).
func (c *Core) InterruptTools(withHook bool) *Action {
	stopped := behavior.UserStopped()
	for i := range c.executions {
		if e := &c.executions[i]; e.Status != chat.ToolCompleted {
			e.Status = chat.ToolCompleted
			e.Outcome = stopped
		}
	}
	c.appendResults()
	if withHook {
		c.hook()
		c.State = StoppingTurn
		return &c.Act
	}
	clear(c.executions)
	c.executions = c.executions[:0]
	return c.cancel()
}

// StopHook lets the running hook finish and then waits for input: the
// frozen request is dropped (PostToolsHook --Interrupt--> StoppingTurn /
// WaitForInput).
func (c *Core) StopHook() *Action {
	c.frozen = chat.Request{}
	c.State = StoppingTurn
	c.Act.Kind = WaitForInput
	return &c.Act
}

// EndStop waits for input once the hook has finished
// (StoppingTurn --PostToolsHookCompleted--> WaitingForUserInput).
func (c *Core) EndStop() *Action {
	c.State = WaitingForUserInput
	c.Act.Kind = WaitForInput
	return &c.Act
}

// UndoTurn cuts the conversation back to before the user's last message
// (WaitingForUserInput --UndoTurn--> WaitingForUserInput / WaitForInput).
func (c *Core) UndoTurn() *Action {
	c.conv = c.b.UndoTurn(c.conv)
	c.Act.Kind = WaitForInput
	return &c.Act
}

// CanCompact reports whether the conversation has an older part to
// summarise.
func (c *Core) CanCompact() bool { return c.b.CanCompact(c.conv) }

// startCompaction sends the summary request of the conversation's older
// part, for origin.
func (c *Core) startCompaction(origin chat.ErrorOrigin) *Action {
	c.origin = origin
	c.retries = 0
	c.State = Compacting
	c.Act.Kind = SendLLMRequest
	c.Act.Request = c.b.SummaryRequest(c.conv)
	return &c.Act
}

// StartCompactCommand sends the summary request the user asked for
// (WaitingForUserInput --CompactRequested [canCompact]--> Compacting).
func (c *Core) StartCompactCommand() *Action {
	return c.startCompaction(chat.OriginCompactCommand)
}

// EmptySummary reports whether the summary reply holds no text.
func (c *Core) EmptySummary(ev *Event) bool { return c.b.EmptySummary(ev.Response) }

// RefuseSummary keeps the conversation whole and says why
// (Compacting --LlmCompleted [emptySummary]--> WaitingForUserInput).
func (c *Core) RefuseSummary(ev *Event) *Action {
	return c.fail(c.b.RefuseSummary(ev.Response))
}

// fail ends the turn with an error: WaitingForUserInput, DisplayError.
func (c *Core) fail(msg string) *Action {
	c.retries = 0
	c.origin = ""
	c.State = WaitingForUserInput
	c.Act.Kind = DisplayError
	c.Act.Message = msg
	return &c.Act
}

// Compact replaces the older part by the summary and waits for input
// (Compacting --LlmCompleted [isCompactCommand]--> WaitingForUserInput).
func (c *Core) Compact(ev *Event) *Action {
	c.conv = c.b.Compact(c.conv, ev.Response)
	c.retries = 0
	c.origin = ""
	c.State = WaitingForUserInput
	c.Act.Kind = WaitForInput
	return &c.Act
}

// CompactAndResume replaces the older part by the summary and sends the
// request that waited for it (Compacting --LlmCompleted [else]--> CallingLlm).
func (c *Core) CompactAndResume(ev *Event) *Action {
	c.conv = c.b.Compact(c.conv, ev.Response)
	c.retries = 0
	c.origin = ""
	c.State = CallingLLM
	c.Act.Kind = SendLLMRequest
	c.request(&c.Act.Request)
	return &c.Act
}

// ScheduleCompactionRetry counts the summary request's failed attempt and
// asks for a timer (Compacting --LlmError [canRetry]--> Error).
func (c *Core) ScheduleCompactionRetry(ev *Event) *Action { return c.scheduleRetry(ev) }

// GiveUpCompaction keeps the conversation whole and says why
// (Compacting --LlmError [else]--> WaitingForUserInput).
func (c *Core) GiveUpCompaction(ev *Event) *Action {
	return c.fail(c.b.GiveUpCompaction(c.retries, ev.Error))
}

// RetryCompaction sends the summary request again
// (Error --RetryTimeoutFired [isCompaction]--> Compacting).
func (c *Core) RetryCompaction() *Action {
	c.err = chat.LLMError{}
	c.State = Compacting
	c.Act.Kind = SendLLMRequest
	c.Act.Request = c.b.SummaryRequest(c.conv)
	return &c.Act
}

// QueryLimitReached reports whether the turn has had all its queries.
func (c *Core) QueryLimitReached() bool { return c.b.QueryLimitReached(c.conv) }

// RefuseQuery appends the reply up to the query and ends the turn with an
// error (CallingLlm --QueryDetected [queryLimitReached]--> WaitingForUserInput).
func (c *Core) RefuseQuery(ev *Event) *Action {
	conv, msg := c.b.RefuseQuery(c.conv, ev.Text)
	c.conv = conv
	return c.fail(msg)
}

// StartQuery appends the reply up to the query and runs it
// (CallingLlm --QueryDetected [else]--> RunningQuery / RunQuery).
func (c *Core) StartQuery(ev *Event) *Action {
	c.conv = c.conv.Append(chat.Message{Role: chat.RoleAssistant, Content: ev.Text})
	c.query = ev.Query
	c.retries = 0
	c.State = RunningQuery
	c.Act.Kind = RunQuery
	c.Act.Query = ev.Query
	return &c.Act
}

// InjectQueryResult appends the query's result and builds the next
// request (RunningQuery --QueryCompleted--> PreparingRequest).
func (c *Core) InjectQueryResult(ev *Event) {
	c.conv = c.conv.Append(chat.UserMessage(behavior.FormatQueryResult(c.query, ev.Outcome)))
	c.query = chat.Query{}
	c.retries = 0
	c.request(&c.Act.Request)
	c.State = PreparingRequest
}
