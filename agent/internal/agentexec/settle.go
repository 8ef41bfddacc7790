package agentexec

import (
	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/gen/agent"
)

// later queues work to start once the step at hand is recorded and saved
// (see Execute).
func (a *Agent) later(start func()) { a.starts = append(a.starts, start) }

// launch starts the work queued by later, in order.
func (a *Agent) launch() {
	starts := a.starts
	a.starts = a.starts[:0]
	for _, start := range starts {
		start()
	}
	clear(starts)
}

// isBusy reports whether the machine is in the middle of a turn.
func (a *Agent) isBusy() bool {
	k := a.m.Kind()
	return k != agent.StateWaitingForUserInput && k != agent.StateShuttingDown
}

// count counts the usage of one reply in the thread's ledger, as the
// session's model's: the thread's provider and model are the session's.
func (a *Agent) count(u chat.Usage) {
	t := a.cfg.Thread
	t.Ledger.AddOf(t.Provider, t.Model, u)
}

// arrive shows what the accepted event at hand brought (the reply, a
// tool's progress or result) and notes the start of a turn. It runs once
// per event, before the event's first action is performed (or in Execute
// when there was none), so that the user sees the event before what it
// caused.
func (a *Agent) arrive() {
	a.arrived = true
	acted := len(a.actions) > 0
	switch ev := a.ev.(type) {
	case *agent.LLMCompleted:
		a.count(ev.Response.Usage)
		if a.summarizing {
			a.compacted(ev.Response)
			break
		}
		// After a reply the machine continues (the reply was cut at its
		// token limit), the next request is in flight, or the summary
		// the continuation needs first.
		cd, ok := a.display.(ContinueDisplay)
		if k := a.m.Kind(); ok && (k == agent.StateCallingLLM || k == agent.StateCompacting) {
			cd.Continued(ev.Response.Message, behavior.Continuations(a.conversation()), a.cfg.Behavior.Config().MaxContinuations)
			break
		}
		a.display.Reply(ev.Response.Message)
	case *agent.LLMError:
		if ev.Error.Usage != (chat.Usage{}) { // what a failed reply used before it failed
			a.count(ev.Error.Usage)
		}
	case *agent.ToolProgress:
		if acted { // an ignored report (of a call that has completed) is not shown
			a.display.ToolProgress(a.call(ev.CallID), ev.Progress)
		}
	case *agent.ToolCompleted:
		a.display.ToolResult(a.call(ev.CallID), ev.Outcome)
	case *agent.QueryDetected:
		a.count(ev.Usage)
		a.display.Reply(chat.Message{Role: chat.RoleAssistant, Content: ev.Text})
	case *agent.QueryCompleted:
		a.display.ToolResult(a.call(a.queryID), ev.Outcome)
	case *agent.Interrupt:
		a.turnErr = TurnStopped
		a.showReplyRest()
		if a.holding {
			a.display.Notice("resumed: the turn the session stopped in is stopped, and the model is told; nothing is sent to it until you type your next message")
		} else {
			a.display.Notice("turn stopped; the model is told. Type your next message (Ctrl-C again quits)")
		}
	}
	if a.isBusy() && !a.busy {
		a.turnErr = ""
	}
}

// conversation returns the machine's conversation (empty once it shuts
// down).
func (a *Agent) conversation() chat.Conversation {
	c, _ := agent.ConversationOf(a.m.State())
	return c
}

// moreRefusals reports whether ev is the refusal of a call that is not
// run (beyond Limits.ToolCalls, or malformed) with more such refusals to
// come: the thread is then saved once, after the last one. Refused calls
// never run, so a crash before that save loses nothing (on resume they
// are "interrupted").
func (a *Agent) moreRefusals(ev agent.Event) bool {
	tc, ok := ev.(*agent.ToolCompleted)
	if !ok || !a.refused[tc] {
		return false
	}
	delete(a.refused, tc)
	return len(a.refused) > 0
}

// changesThread reports whether an accepted event changes what the thread
// saves: the conversation, the round of tools, the retry count. Deltas and
// progress reports do not.
func changesThread(ev agent.Event) bool {
	switch ev.(type) {
	case *agent.TextDelta, *agent.ToolCallDelta, *agent.ToolProgress:
		return false
	}
	return true
}

// settle wakes the callers of WaitIdle, and asks to shut down once the
// input has ended, when the machine waits for input (and the turn_end
// hooks have ended).
func (a *Agent) settle() {
	if a.m.Kind() != agent.StateWaitingForUserInput || a.shutdownSent || a.endHooks != nil {
		return
	}
	for _, w := range a.idleWaiters {
		close(w)
	}
	a.idleWaiters = a.idleWaiters[:0]
	if a.inputClosed {
		a.shutdownSent = true
		a.loop.Next(&agent.ShutdownRequested{})
	}
}

// call returns the tool call with the given ID, as far as it is known.
func (a *Agent) call(id string) chat.ToolCall {
	if c, ok := a.calls[id]; ok {
		return c
	}
	return chat.ToolCall{ID: id, Name: "?"}
}

// cancelAll cancels the stream, the tools and the timer in flight.
func (a *Agent) cancelAll() {
	if a.endHooks != nil {
		a.endHooks()
	}
	a.stream.stop()
	a.tools.stop()
	a.timer.stop()
}
