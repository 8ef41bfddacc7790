package agentexec

import (
	"context"
	"fmt"
	"sync/atomic"
	"unicode/utf8"

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
	clear(a.refused)
	a.later(func() {
		slots := make(chan struct{}, a.limits.ParallelTools)
		budget := newOutputBudget(a.limits.RoundOutput)
		for i, c := range calls {
			if i >= a.limits.ToolCalls {
				out := chat.ToolOutcome{IsError: true, Content: fmt.Sprintf(
					"%s: the reply asked for %d and at most %d are run per reply; ask for the rest after seeing these results",
					TooManyCallsPrefix, len(calls), a.limits.ToolCalls)}
				a.refused[c.ID] = true
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
				out.Content = budget.take(a.secrets.String(out.Content))
				_ = l.SendIf(ctx, &agent.ToolCompleted{CallID: c.ID, Outcome: out}, valid)
			})
		}
	})
}

// outputBudget is what is left of the bytes a round's tool results may
// take (Limits.RoundOutput). It is safe for concurrent use: the round's
// calls complete in parallel.
type outputBudget struct {
	limit int
	left  atomic.Int64
}

// newOutputBudget returns a budget of limit bytes.
func newOutputBudget(limit int) *outputBudget {
	b := &outputBudget{limit: limit}
	b.left.Store(int64(limit))
	return b
}

// minCut is how much of a result is kept when the budget is spent, so
// that the model still sees how the call went.
const minCut = 2 << 10

// take returns content whole when the budget holds it, and takes it from
// the budget; otherwise it returns the beginning that fits (at least
// minCut bytes, ending on a whole character) with a note saying what was
// cut and why.
func (b *outputBudget) take(content string) string {
	n := int64(len(content))
	for {
		left := b.left.Load()
		if n <= left {
			if b.left.CompareAndSwap(left, left-n) {
				return content
			}
			continue
		}
		keep := max(left, minCut)
		if keep >= n {
			keep = n
		}
		if b.left.CompareAndSwap(left, max(left-keep, 0)) {
			if keep == n {
				return content
			}
			for keep > 0 && !utf8.RuneStart(content[keep]) {
				keep-- // end on a whole character
			}
			return fmt.Sprintf("%s\n[... cut: this result is %d bytes, and the results of this round passed the limit of %d bytes in all; ask for less at once (a part of a file, the end of a log) ...]",
				content[:keep], n, b.limit)
		}
	}
}
