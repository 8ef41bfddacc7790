package agentexec

import (
	"context"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/autocommit"
	"github.com/fsmgen/fsmgen/gen/agent"
)

// Committer commits the agent's work to git, one commit per turn, holding
// only what the agent's tools changed; *autocommit.Committer is one.
type Committer interface {
	// Snapshot notes the workspace before a round of tools that may
	// change it.
	Snapshot(ctx context.Context) error
	// Hook is the post-tools hook: it runs after a round of tools that
	// may have changed files, in the workspace dir, and notes what they
	// changed.
	Hook(ctx context.Context, dir string, tools []chat.CompletedTool) (autocommit.Result, error)
	// CommitTurn commits what the turn's tools changed, when the turn
	// ends.
	CommitTurn(ctx context.Context, turn autocommit.Turn) (autocommit.Result, error)
}

// NoHookSkipped is the reason the Result of the post-tools hook gives
// when the agent has no Committer.
const NoHookSkipped = "no post-tools hook"

// noCommits is the Committer of an agent configured without one.
type noCommits struct{}

// Snapshot implements Committer.
func (noCommits) Snapshot(context.Context) error { return nil }

// Hook implements Committer.
func (noCommits) Hook(context.Context, string, []chat.CompletedTool) (autocommit.Result, error) {
	return autocommit.Result{Skipped: NoHookSkipped}, nil
}

// CommitTurn implements Committer.
func (noCommits) CommitTurn(context.Context, autocommit.Turn) (autocommit.Result, error) {
	return autocommit.Result{Skipped: NoHookSkipped}, nil
}

// startHook runs the post-tools hook in a task, then shows what it did and
// sends PostToolsHookCompleted. A failed hook does not stop the turn.
//
// It runs once the tasks of the round of tools have ended: after a round
// the user stopped (see CancelTurn), what they changed is noted for the
// turn's commit only once the cancelled commands are gone.
func (a *Agent) startHook(completed []chat.CompletedTool) {
	l := a.loop
	a.turnTools = append(a.turnTools, completed...)
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
	res, err := a.commits.Hook(ctx, a.cfg.Workspace, completed)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		a.log.Debug("post-tools hook failed", "error", err) // the display shows it
	}
	_ = l.Call(ctx, func() { a.display.Hook(res, err) })
	_ = l.Send(ctx, &agent.PostToolsHookCompleted{ActionTaken: err == nil && res.Committed})
}

// commitTurn commits what the turn that just ended, with conv, changed,
// and shows it.
// It runs on the loop goroutine, before the next turn can start, so that
// the next turn's snapshot follows the commit. Loop goroutine only.
func (a *Agent) commitTurn(ctx context.Context, conv chat.Conversation) {
	turn := autocommit.Turn{Tools: a.turnTools, Thread: a.cfg.Thread.ID}
	msgs := conv.Messages()
	if start, ok := behavior.TurnStart(msgs); ok {
		turn.Key, _ = behavior.TurnKey(msgs)
		turn.Prompt = msgs[start].Content
		// The summary is the last reply, its pieces joined when it was
		// continued after its token limit.
		continued := false
		for _, m := range msgs[start+1:] {
			switch {
			case m.Role == chat.RoleUser:
				continued = m.Content == chat.ContinueNote
			case m.Role == chat.RoleAssistant && m.Content != "":
				if continued {
					turn.Summary += m.Content
				} else {
					turn.Summary = m.Content
				}
				continued = false
			}
		}
	}
	a.turnTools = nil
	res, err := a.commits.CommitTurn(ctx, turn)
	if err != nil {
		a.log.Debug("the turn's commit failed", "error", err) // the display shows it
	}
	if err != nil || res.Committed || len(res.Mixed)+len(res.Withheld)+len(res.Repositories)+len(res.TooLarge) > 0 {
		a.display.Hook(res, err)
	}
}
