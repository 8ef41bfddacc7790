package agentexec

import (
	"context"
	"fmt"

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

// TooManyCallsPrefix starts the outcome of a tool call beyond
// Limits.ToolCalls, which is not run.
const TooManyCallsPrefix = "not run: too many tool calls in one reply"

// startTools runs the calls in parallel, at most Limits.ParallelTools at
// once, one task each, and sends one ToolCompleted for each, with
// ToolProgress reports while they run. The calls beyond Limits.ToolCalls
// are not run: each completes at once with an error telling the model the
// limit. It cancels the tools of an earlier round still running, whose
// events are then dropped.
func (a *Agent) startTools(calls []chat.ToolCall) {
	tctx, valid := a.tools.restart(a.ctx)
	clear(a.calls)
	for _, c := range calls {
		a.calls[c.ID] = c
		a.display.ToolCall(c)
	}
	l := a.loop
	a.later(func() {
		slots := make(chan struct{}, a.limits.ParallelTools)
		for i, c := range calls {
			if i >= a.limits.ToolCalls {
				out := chat.ToolOutcome{IsError: true, Content: fmt.Sprintf(
					"%s: the reply asked for %d tool calls and at most %d are run per reply; make at most %d calls in one reply and ask for the rest after seeing their results",
					TooManyCallsPrefix, len(calls), a.limits.ToolCalls, a.limits.ToolCalls)}
				l.Next(&agent.ToolCompleted{CallID: c.ID, Outcome: out})
				continue
			}
			l.Go(tctx, "tool "+c.Name, func(ctx context.Context) {
				select {
				case slots <- struct{}{}:
					defer func() { <-slots }()
				case <-ctx.Done():
					return
				}
				progress := func(p chat.ToolProgress) {
					p.Message = a.secrets.String(p.Message)
					_ = l.SendIf(ctx, &agent.ToolProgress{CallID: c.ID, Progress: p}, valid)
				}
				out := a.cfg.Tools.Run(ctx, c, progress)
				out.Content = a.secrets.String(out.Content)
				_ = l.SendIf(ctx, &agent.ToolCompleted{CallID: c.ID, Outcome: out}, valid)
			})
		}
	})
}
