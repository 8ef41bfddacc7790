package agentexec

import (
	"context"

	"github.com/fsmgen/fsmgen/chat"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/runtime/llm"
)

// startStream sends req to the LLM in a task and feeds its stream back as
// events, cancelling any stream still running. The events of a cancelled
// stream are dropped, even those already queued.
func (a *Agent) startStream(req chat.Request) {
	sctx, valid := a.stream.restart(a.ctx)
	l := a.loop
	l.Go(sctx, "llm stream", func(ctx context.Context) {
		ended := false
		send := func(ev agent.Event) { _ = l.SendIf(ctx, ev, valid) }
		err := a.cfg.Provider.Stream(ctx, req, func(e llm.Event) {
			switch e := e.(type) {
			case llm.TextDelta:
				send(&agent.TextDelta{Content: e.Text})
			case llm.ToolCallDelta:
				send(&agent.ToolCallDelta{CallID: e.CallID, ToolName: e.ToolName, ArgumentsFragment: e.Fragment})
			case llm.Completed:
				ended = true
				send(&agent.LLMCompleted{Response: e.Response})
			case llm.Failed:
				ended = true
				send(&agent.LLMError{Error: e.Err})
			}
		})
		if ctx.Err() != nil || ended {
			return
		}
		// The provider broke its contract; fail the call so the turn goes on.
		msg := "the LLM stream ended without a reply or an error"
		if err != nil {
			msg = err.Error()
		}
		a.log.Error("llm provider ended a stream without Completed or Failed", "provider", a.cfg.Provider.Name(), "error", err)
		send(&agent.LLMError{Error: chat.LLMError{Kind: chat.ErrNetwork, Message: msg}})
	})
}
