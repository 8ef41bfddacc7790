package agentexec

import (
	"context"

	"github.com/fsmgen/fsmgen/chat"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/runtime/autocommit"
)

// Hook is the post-tools hook: it runs after a round of tools that may have
// changed files, in the workspace dir. The Hook method of an autocommit.Committer is one.
type Hook func(ctx context.Context, dir string, tools []chat.CompletedTool) (autocommit.Result, error)

// NoHookSkipped is the reason the Result of the post-tools hook gives
// when the agent has none.
const NoHookSkipped = "no post-tools hook"

// noHook is the hook of an agent configured without one.
func noHook(context.Context, string, []chat.CompletedTool) (autocommit.Result, error) {
	return autocommit.Result{Skipped: NoHookSkipped}, nil
}

// startHook runs the post-tools hook in a task, then shows what it did and
// sends PostToolsHookCompleted. A failed hook does not stop the turn.
//
// It runs once the tasks of the round of tools have ended: after a round
// the user stopped (see CancelTurn), what they changed is committed only
// once the cancelled commands are gone.
func (a *Agent) startHook(completed []chat.CompletedTool) {
	l := a.loop
	if a.m.Kind() == agent.StateStoppingTurn {
		a.stopTurn()
	}
	stopped := a.toolsStopped
	a.later(func() {
		l.Go(a.ctx, "post-tools hook", func(ctx context.Context) {
			if stopped != nil {
				select {
				case <-stopped:
				case <-ctx.Done():
					return
				}
			}
			a.runHook(ctx, completed)
		})
	})
}

// runHook runs the post-tools hook, shows what it did and sends
// PostToolsHookCompleted.
func (a *Agent) runHook(ctx context.Context, completed []chat.CompletedTool) {
	l := a.loop
	res, err := a.hook(ctx, a.cfg.Workspace, completed)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		a.log.Debug("post-tools hook failed", "error", err) // the display shows it
	}
	_ = l.Call(ctx, func() { a.display.Hook(res, err) })
	_ = l.Send(ctx, &agent.PostToolsHookCompleted{ActionTaken: err == nil && res.Committed})
}
