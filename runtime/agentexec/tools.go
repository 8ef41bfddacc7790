package agentexec

import (
	"context"

	"github.com/fsmgen/fsmgen/chat"
	"github.com/fsmgen/fsmgen/gen/agent"
)

// ToolRunner runs one tool call to completion; *tools.Set is one. Run must
// never panic, must return promptly once ctx is done, and may call
// progress from any goroutine until it returns.
type ToolRunner interface {
	Run(ctx context.Context, call chat.ToolCall, progress func(chat.ToolProgress)) chat.ToolOutcome
}

// InterruptedPrefix starts the outcome given on resume to a tool call that
// was still running when the agent stopped.
const InterruptedPrefix = "interrupted: the agent stopped before this tool finished"

// interruptedOutcome is the outcome of a call the agent stopped before it
// finished.
var interruptedOutcome = chat.ToolOutcome{
	Content: InterruptedPrefix + "; it may or may not have taken effect, so check before running it again",
	IsError: true,
}

// startTools runs the calls in parallel, one task each, and sends one
// ToolCompleted for each, with ToolProgress reports while they run. It
// cancels the tools of an earlier round still running, whose events are
// then dropped.
func (a *Agent) startTools(calls []chat.ToolCall) {
	tctx, valid := a.tools.restart(a.ctx)
	clear(a.calls)
	for _, c := range calls {
		a.calls[c.ID] = c
		a.display.ToolCall(c)
	}
	l := a.loop
	for _, c := range calls {
		l.Go(tctx, "tool "+c.Name, func(ctx context.Context) {
			progress := func(p chat.ToolProgress) {
				_ = l.SendIf(ctx, &agent.ToolProgress{CallID: c.ID, Progress: p}, valid)
			}
			out := a.cfg.Tools.Run(ctx, c, progress)
			_ = l.SendIf(ctx, &agent.ToolCompleted{CallID: c.ID, Outcome: out}, valid)
		})
	}
}
