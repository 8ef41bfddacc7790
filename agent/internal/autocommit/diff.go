package autocommit

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrNoRepository is returned by [Committer.Head] and [Committer.Diff] when
// the workspace is in no git repository.
var ErrNoRepository = errors.New("the workspace is not in a git repository")

// Head returns the commit the repository's HEAD names, "" when it has no
// commit yet.
func (c *Committer) Head(ctx context.Context) (string, error) {
	if c.gitDir == "" {
		return "", ErrNoRepository
	}
	out, code, err := c.git().runCode(ctx, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if code == 1 {
		return "", nil // no commit yet
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Diff returns, as a unified diff, how the workspace's tracked files
// differ from the commit base (what Head returned when the session
// started): the agent's commits since and the changes not committed. An
// empty base compares with the empty tree. It runs git with the hardening
// of every command of this package, and without external diff programs or
// text conversion filters, which the repository's configuration could
// make run anything; what git prints is redacted.
func (c *Committer) Diff(ctx context.Context, base string) (string, error) {
	if c.gitDir == "" {
		return "", ErrNoRepository
	}
	if base == "" {
		var err error
		if base, err = emptyTreeIn(ctx, c.git()); err != nil {
			return "", fmt.Errorf("git diff: %w", err)
		}
	}
	out, err := c.git().run(ctx, append([]string{"diff", "--no-ext-diff", "--no-textconv", "--no-color", base}, pathspec...)...)
	if err != nil {
		return "", fmt.Errorf("git diff: %w", err)
	}
	return c.secrets.String(string(out)), nil
}

// Changes is what changed in the workspace since a session started, in
// two parts, each a unified diff (see Committer.Changes).
type Changes struct {
	// Committed is what the commits since the session started changed:
	// the agent's (on its branch, with -commit branch).
	Committed string
	// Uncommitted is how the work tree differs from the last of them:
	// the user's changes, and the agent's not committed yet (a turn
	// still running) or left out of its commits.
	Uncommitted string
}

// Changes returns, as Diff does, how the workspace's tracked files differ
// from base, split at the last commit the agent commits to (its branch,
// or the branch checked out): what was committed since base, and what is
// not committed.
func (c *Committer) Changes(ctx context.Context, base string) (Changes, error) {
	if c.gitDir == "" {
		return Changes{}, ErrNoRepository
	}
	g := c.git()
	var tip string
	var err error
	if c.branch == "" {
		tip, err = c.Head(ctx) // the branch checked out
	} else {
		_, tip, err = c.undoTarget(ctx, g) // the agent's, "" until its first commit
	}
	if err != nil {
		return Changes{}, fmt.Errorf("git diff: %w", err)
	}
	if base == "" {
		if base, err = emptyTreeIn(ctx, g); err != nil {
			return Changes{}, fmt.Errorf("git diff: %w", err)
		}
	}
	if tip == "" {
		tip = base
	}
	diff := func(args ...string) (string, error) {
		out, err := g.run(ctx, append(append([]string{"diff", "--no-ext-diff", "--no-textconv", "--no-color"}, args...), pathspec...)...)
		if err != nil {
			return "", fmt.Errorf("git diff: %w", err)
		}
		return c.secrets.String(string(out)), nil
	}
	var ch Changes
	if tip != base {
		if ch.Committed, err = diff(base, tip); err != nil {
			return Changes{}, err
		}
	}
	if ch.Uncommitted, err = diff(tip); err != nil {
		return Changes{}, err
	}
	return ch, nil
}
