package app

import (
	"context"
	"fmt"
	"io"

	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/autocommit"
	"github.com/fsmgen/fsmgen/agent/internal/progpath"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// The values of -commit.
const (
	commitCurrent = "current"
	commitBranch  = "branch"
	commitOff     = "off"
)

// commitModes are the values -commit takes.
var commitModes = []string{commitCurrent, commitBranch, commitOff}

// openCommitter returns what commits the agent's work as -commit asks,
// guarded by the git guard, and the committer itself (for /diff), and
// says at start where the commits go; nil when they are off or cannot be
// made (it says why).
func openCommitter(ctx context.Context, o options, ws, threadID, key string, programs *progpath.Resolver, guard *tools.GitGuard, stderr io.Writer) (agentexec.Committer, *autocommit.Committer) {
	if o.mode == modePlan {
		fmt.Fprintln(stderr, "agent: plan mode: the workspace is read-only (edit_file is not offered, bash sees it read-only); nothing is changed or committed")
		return nil, nil
	}
	if o.commit == commitOff {
		fmt.Fprintln(stderr, "agent: commits: off (-commit off); the agent's changes stay in the work tree")
		return nil, nil
	}
	opt := autocommit.Options{Timeout: o.commitTimeout, Secrets: redact.New(key), MaxNewFileBytes: int64(o.commitMaxNewFile), Programs: programs}
	if o.commit == commitBranch {
		opt.Branch = "agent/" + threadID
	}
	c, err := autocommit.Open(ctx, ws, opt)
	if err != nil {
		fmt.Fprintf(stderr, "agent: changes will not be committed: %v\n", err)
		return nil, nil
	}
	where, err := c.Where(ctx)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "agent: changes will not be committed: %v\n", err)
		return nil, nil
	case where == "":
		fmt.Fprintln(stderr, "agent: commits: none (the workspace is not in a git repository)")
		return nil, nil
	case o.commit == commitBranch:
		fmt.Fprintf(stderr, "agent: commits: one per turn, to branch %s (your checkout and branch are untouched; -commit)\n", where)
	default:
		fmt.Fprintf(stderr, "agent: commits: one per turn, to %s, holding only the agent's changes (yours stay uncommitted; -commit branch or -commit off to change)\n", where)
	}
	return guarded{guard: guard, next: c}, c
}
