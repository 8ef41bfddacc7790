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
