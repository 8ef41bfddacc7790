package app

import (
	"context"
	"fmt"
	"io"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/autocommit"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// guarded is a Committer whose every step runs once the guard has put
// back what the tools changed of the workspace's git repositories: the
// auto-commit then sees them as they were.
type guarded struct {
	guard *tools.GitGuard
	next  agentexec.Committer
}

// check runs the guard.
func (g guarded) check(ctx context.Context) error {
	if _, err := g.guard.Check(ctx); err != nil {
		return fmt.Errorf("auto-commit not made: %w", err)
	}
	return nil
}

// Snapshot implements agentexec.Committer.
func (g guarded) Snapshot(ctx context.Context) error {
	if err := g.check(ctx); err != nil {
		return err
	}
	return g.next.Snapshot(ctx)
}

// Hook implements agentexec.Committer.
func (g guarded) Hook(ctx context.Context, dir string, done []chat.CompletedTool) (autocommit.Result, error) {
	if err := g.check(ctx); err != nil {
		return autocommit.Result{}, err
	}
	return g.next.Hook(ctx, dir, done)
}

// CommitTurn implements agentexec.Committer.
func (g guarded) CommitTurn(ctx context.Context, turn autocommit.Turn) (autocommit.Result, error) {
	if err := g.check(ctx); err != nil {
		return autocommit.Result{}, err
	}
	return g.next.CommitTurn(ctx, turn)
}

// reportGitChanges checks the workspace's git repositories a last time
// and tells the user every change the tools made to them during the
// session: a gitdir pointer, a repository's configuration or hooks, a
// repository created; what was put back, and what to review.
func reportGitChanges(ctx context.Context, guard *tools.GitGuard, w io.Writer) {
	if _, err := guard.Check(ctx); err != nil {
		fmt.Fprintf(w, "agent: %v; review the git repositories of the workspace before running git there\n", err)
	}
	changes := guard.Changes()
	if len(changes) == 0 {
		return
	}
	fmt.Fprintln(w, "agent: the tools changed git repositories in the workspace during this session (git would have run what they configure when you next run it there):")
	review := false
	for _, c := range changes {
		fmt.Fprintf(w, "agent:   %s\n", c)
		review = review || !c.Undone
	}
	if review {
		fmt.Fprintln(w, "agent: some of these could not be undone: review them before you run git in the workspace")
	}
}

// noteUnusualRepositories tells the user, when the agent starts, of the
// git repositories of the workspace that look planted (see
// tools.GitGuard.Unusual): the agent takes the workspace as it finds it.
func noteUnusualRepositories(guard *tools.GitGuard, w io.Writer) {
	for _, u := range guard.Unusual() {
		fmt.Fprintf(w, "agent: note: %s; git obeys its configuration: review it before running git in the workspace\n", u)
	}
}
