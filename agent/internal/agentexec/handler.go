package agentexec

import (
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/gen/agent"
)

// The Agent performs every action of the machine: a new action in
// spec/agent.yaml is a compile error here until it has a method.
var _ agent.Handler = (*Agent)(nil)

// The Handler methods run on the loop goroutine, during HandleEvent, once
// the machine is in its new state. They must not block: what takes time
// runs in a task of the loop and reports back with an event.

// perform notes act for the event log and, before the event's first
// action, shows what the event brought.
func (a *Agent) perform(act agent.Action) {
	a.actions = append(a.actions, act)
	if !a.arrived {
		a.arrive()
	}
}

// SendLLMRequest implements agent.Handler: it streams the LLM's reply to
// request back as events, cancelling any stream still running. While a
// resumed turn is being stopped (see Config.ContinueTurn) the request is
// not sent: the turn is stopped with an Interrupt instead; once it is
// stopped, a message typed meanwhile, which the machine held, is sent.
func (a *Agent) SendLLMRequest(request chat.Request) {
	a.perform(&agent.SendLLMRequest{Request: request})
	a.noteCompaction()
	if a.holding && !a.idle {
		a.loop.Next(&agent.Interrupt{})
		return
	}
	a.startStream(request)
}

// ExecuteTools implements agent.Handler: it runs the calls in parallel.
func (a *Agent) ExecuteTools(calls []chat.ToolCall) {
	a.perform(&agent.ExecuteTools{Calls: calls})
	a.startTools(calls)
}

// RunPostToolsHook implements agent.Handler: it runs the post-tools hook
// on the round's completed calls.
func (a *Agent) RunPostToolsHook(completedTools chat.ToolRound) {
	a.perform(&agent.RunPostToolsHook{CompletedTools: completedTools})
	a.startHook(completedTools.Completed())
}

// WaitForInput implements agent.Handler: there is nothing to do.
func (a *Agent) WaitForInput() {
	a.perform(&agent.WaitForInput{})
}

// DisplayMessage implements agent.Handler: it shows a piece of the reply.
func (a *Agent) DisplayMessage(content string) {
	a.perform(&agent.DisplayMessage{Content: content})
	if a.reply != nil {
		a.reply.show(len(content))
	}
	a.display.Text(content)
}

// DisplayError implements agent.Handler: it shows the error the turn ends
// with, and keeps it for the Result.
func (a *Agent) DisplayError(message string) {
	a.perform(&agent.DisplayError{Message: message})
	a.turnErr = message
	a.display.Error(message)
}

// ScheduleRetry implements agent.Handler: it shows the retry and starts
// its timer.
func (a *Agent) ScheduleRetry(delay time.Duration, attempt int, err chat.LLMError) {
	a.perform(&agent.ScheduleRetry{Delay: delay, Attempt: attempt, Error: err})
	a.display.Retry(attempt, delay, err)
	a.startTimer(delay)
}

// CancelTurn implements agent.Handler: it cancels the LLM stream, the
// tools and the retry timer in flight and drops their events; a command
// running is killed, as on a crash. The turn ends stopped by the user.
func (a *Agent) CancelTurn() {
	a.perform(&agent.CancelTurn{})
	a.stopTurn()
}

// showReplyRest shows what the machine has not shown of the reply in
// flight, as the user stops it: what the model sent is on the screen,
// even when its stream is stopped.
func (a *Agent) showReplyRest() {
	if a.reply != nil && !a.summarizing {
		if rest := a.reply.takeRest(); rest != "" {
			a.display.Text(rest)
		}
	}
}

// stopTurn cancels what the turn has in flight.
func (a *Agent) stopTurn() {
	a.held = nil
	a.stream.drop()
	a.tools.drop()
	a.timer.drop()
}

// Shutdown implements agent.Handler: it cancels what is in flight, saves
// the thread and stops the loop once the step is executed. A failure to
// save is returned by Execute, which stops the loop with it.
func (a *Agent) Shutdown() {
	a.perform(&agent.Shutdown{})
	a.cancelAll()
	if err := a.save(); err != nil {
		a.failed = err
	}
	a.loop.Stop()
}
