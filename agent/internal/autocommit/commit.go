package autocommit

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// CommitTurn commits what the turn's tools changed (see [Committer.Hook]),
// and only that: the user's own changes stay as they were, unstaged and
// uncommitted, and the user's index is only brought up to date for the
// paths committed. The commit is made through an index of its own, as
// AgentName <AgentEmail>, with hooks off, on Options.Branch or the branch
// checked out, with a message that names the files and sums the turn up
// (see [TurnMessage]).
//
// Files holding a secret, new files over the size limit and repositories
// inside the workspace are left out and named in the Result (see the
// package documentation), and so are the paths the user had changed too
// (Result.Mixed). It is skipped, with the reason in Result.Skipped, when
// the workspace was not in a git work tree at Open or the turn changed
// nothing. It is refused with an error wrapping ErrRepositoryChanged or
// ErrConfigChanged when the repository or its configuration changed since
// Open. Any other error means git failed or was stopped; the turn's
// changes are then committed by the next turn's commit, which says so.
func (c *Committer) CommitTurn(ctx context.Context, turn Turn) (res Result, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer func() { c.failed = err != nil }()
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("auto-commit in %s not made: %w", c.dir, err)
	}
	if err := c.checkLayout(); err != nil {
		return Result{}, err
	}
	if !c.repo {
		return Result{Skipped: SkippedNotRepo}, nil
	}
	g := c.git()
	if _, err := c.checkConfig(ctx, g); err != nil {
		return Result{}, err
	}
	var out leftOut
	mixed := slices.Sorted(maps.Keys(c.mixed))
	paths := slices.DeleteFunc(slices.Sorted(maps.Keys(c.turn)), func(p string) bool { return c.mixed[p] })
	done := func(res Result) Result {
		res = c.result(res, out)
		for _, p := range mixed {
			res.Mixed = append(res.Mixed, c.secrets.String(p))
		}
		clear(c.turn)
		clear(c.mixed)
		return res
	}
	if len(paths) == 0 {
		return done(Result{Skipped: SkippedNoChanges}), nil
	}

	if c.branch == "" {
		// The user's index is brought up to date after the commit:
		// another git at work on it would fail that, after the commit.
		if _, err := os.Lstat(filepath.Join(c.gitDir, "index.lock")); err == nil {
			return Result{}, fmt.Errorf("auto-commit in %s: unable to create '%s': File exists; another git command is at work in the repository: let it finish (or remove the file if none is), and the next turn commits these changes",
				c.dir, filepath.Join(c.gitDir, "index.lock"))
		}
	}
	ref, parent, err := c.target(ctx, g)
	if err != nil {
		return Result{}, err
	}
	// An index of the commit's own: the user's index is never staged
	// into, and a commit on another branch starts from that branch.
	gi, removeIndex, err := c.ownIndex(g, "auto-commit")
	if err != nil {
		return Result{}, err
	}
	defer removeIndex()
	base := parent
	if parent == "" {
		if _, err := gi.run(ctx, "read-tree", "--empty"); err != nil {
			return Result{}, err
		}
		if base, err = emptyTreeIn(ctx, gi); err != nil {
			return Result{}, err
		}
	} else if _, err := gi.run(ctx, "read-tree", parent); err != nil {
		return Result{}, err
	}
	status, err := gi.run(ctx, append([]string{"status", "--porcelain", "-z", "--untracked-files=all", "--ignore-submodules=dirty"}, pathspec...)...)
	if err != nil {
		return Result{}, err
	}
	untrackedRepos, err := c.untrackedRepositories(status)
	if err != nil {
		return Result{}, err
	}
	out.repos = slices.Concat(c.replacedSubmodules(), untrackedRepos, c.dotGitsInDirs())
	add, err := c.addable(ctx, gi, paths)
	if err != nil {
		return Result{}, err
	}
	if len(add) > 0 {
		if _, err := gi.runPaths(ctx, slices.Concat(literal(add), pathspec[2:], exclude(untrackedRepos)), "add", "--all"); err != nil {
			return Result{}, err
		}
	}
	left, err := c.review(ctx, gi, base, &out)
	if err != nil {
		return Result{}, err
	}
	if err := unstage(ctx, gi, parent, left); err != nil {
		return Result{}, err
	}
	files, err := gi.run(ctx, append([]string{"diff", "--cached", "--name-status", "-z", "--no-renames", "--relative", base}, pathspec...)...)
	if err != nil {
		return Result{}, err
	}
	changes := parseNameStatus(files)
	if len(changes) == 0 {
		return done(Result{Skipped: SkippedNoChanges}), nil
	}
	tree, err := gi.run(ctx, "write-tree")
	if err != nil {
		return Result{}, err
	}
	msg := c.secrets.String(TurnMessage(turn, changes))
	if c.failed {
		msg += "\n\nThe auto-commit of an earlier turn failed: this commit holds that turn's changes too."
	}
	msgFile, err := writeMessage(msg)
	if err != nil {
		return Result{}, fmt.Errorf("auto-commit in %s: %w", c.dir, err)
	}
	defer os.Remove(msgFile)
	args := []string{"commit-tree", strings.TrimSpace(string(tree)), "-F", msgFile}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	sha, err := g.asAgent().run(ctx, args...)
	if err != nil {
		return Result{}, err
	}
	commit := strings.TrimSpace(string(sha))
	if _, err := g.run(ctx, "update-ref", "-m", "fsmgen-agent: commit of a turn", ref, commit, parent); err != nil {
		return Result{}, fmt.Errorf("%w (the commit %s was made but not recorded on %s: did it move meanwhile?)", err, commit, ref)
	}
	if c.branch == "" {
		// The user's index follows HEAD for the paths committed, so that
		// git status does not show them as staged the other way.
		committed := make([]string, len(changes))
		for i, ch := range changes {
			committed[i] = ch.Path
		}
		if _, err := g.runPaths(ctx, literal(committed), "reset", "--quiet"); err != nil {
			return Result{}, fmt.Errorf("%w (the commit %s was made; run git reset to bring the index up to date)", err, commit)
		}
	}
	for p := range c.turn {
		if !slices.Contains(left, p) {
			delete(c.owned, p)
		}
	}
	if c.before, err = c.snapshot(ctx); err != nil {
		return Result{}, err
	}
	return done(Result{Committed: true, Commit: commit, Message: msg, Branch: strings.TrimPrefix(ref, "refs/heads/")}), nil
}

// addable returns the paths git add can be given: those that exist in
// the work tree or in the index (a deletion); a file the turn created
// and removed again is in neither, and untracked repositories ("dir/")
// are never added.
func (c *Committer) addable(ctx context.Context, g git, paths []string) ([]string, error) {
	var add []string
	var indexed map[string]bool
	for _, p := range paths {
		if strings.HasSuffix(p, "/") {
			continue
		}
		if _, err := os.Lstat(filepath.Join(c.dir, filepath.FromSlash(p))); err == nil {
			add = append(add, p)
			continue
		}
		if indexed == nil {
			out, err := g.run(ctx, "ls-files", "-z", "--full-name")
			if err != nil {
				return nil, err
			}
			indexed = map[string]bool{}
			for _, f := range splitNUL(out) {
				if rel, ok := strings.CutPrefix(f, c.prefix); ok {
					indexed[rel] = true
				}
			}
		}
		if indexed[p] {
			add = append(add, p)
		}
	}
	return add, nil
}

// target returns the ref the commit goes to and its commit, the new
// commit's parent ("" when it has none yet): Options.Branch, started at
// HEAD's commit when it does not exist, or the branch checked out (HEAD
// itself when detached).
func (c *Committer) target(ctx context.Context, g git) (ref, parent string, err error) {
	resolve := func(name string) (string, error) {
		out, code, err := g.runCode(ctx, "rev-parse", "--verify", "--quiet", name+"^{commit}")
		if code == 1 {
			return "", nil
		}
		return strings.TrimSpace(string(out)), err
	}
	if c.branch != "" {
		ref = "refs/heads/" + c.branch
		if parent, err = resolve(ref); err != nil || parent != "" {
			return ref, parent, err
		}
		head, err := resolve("HEAD")
		if err != nil {
			return "", "", err
		}
		// A new branch: created by update-ref from nothing.
		if head != "" {
			if _, err := g.run(ctx, "update-ref", "-m", "fsmgen-agent: the agent's branch", ref, head, ""); err != nil {
				return "", "", err
			}
		}
		return ref, head, nil
	}
	out, code, err := g.runCode(ctx, "symbolic-ref", "--quiet", "HEAD")
	switch {
	case code == 1:
		ref = "HEAD" // detached
	case err != nil:
		return "", "", err
	default:
		ref = strings.TrimSpace(string(out))
	}
	parent, err = resolve("HEAD")
	return ref, parent, err
}

// checkBranchName refuses a name git would not take for a branch.
func checkBranchName(ctx context.Context, prog program, name string) error {
	g := git{prog: prog, timeout: DefaultTimeout}
	if _, err := g.run(ctx, "check-ref-format", "--branch", name); err != nil || strings.HasPrefix(name, "-") {
		return fmt.Errorf("auto-commit: %q is not a branch name git accepts; choose another", name)
	}
	return nil
}

// emptyTreeIn returns the name of the empty tree in the repository's hash (SHA-1 or SHA-256).
func emptyTreeIn(ctx context.Context, g git) (string, error) {
	out, _, err := g.runInput(ctx, []byte{}, "mktree")
	return strings.TrimSpace(string(out)), err
}

// FileChange is a path a commit changed, relative to the workspace, and
// how: 'A' added, 'M' modified, 'D' deleted, 'T' type changed.
type FileChange struct {
	Status byte
	Path   string
}

// parseNameStatus reads git diff --name-status -z --no-renames output.
func parseNameStatus(out []byte) []FileChange {
	fields := splitNUL(out)
	var changes []FileChange
	for i := 0; i+1 < len(fields); i += 2 {
		changes = append(changes, FileChange{Status: fields[i][0], Path: fields[i+1]})
	}
	return changes
}

// Where returns the branch the commits go to ("HEAD" for a detached
// HEAD), or "" when the workspace is not in a git work tree.
func (c *Committer) Where(ctx context.Context) (string, error) {
	if !c.repo {
		return "", nil
	}
	if c.branch != "" {
		return c.branch, nil
	}
	ref, _, err := c.target(ctx, c.git())
	return strings.TrimPrefix(ref, "refs/heads/"), err
}
