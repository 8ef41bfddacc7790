package autocommit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The trailers of a turn's commit: the thread and the turn (the index of
// the message that started it) it holds the work of, by which
// [Committer.Undo] finds it; and, on the commit of an undo, the commit it
// reverts.
const (
	TrailerThread = "Agent-Thread"
	TrailerTurn   = "Agent-Turn"
	TrailerUndoes = "Agent-Undoes"
)

// undoSearch is how many commits back from the tip of the branch Undo
// looks for the thread's last commit.
const undoSearch = 200

// ErrCannotUndo is wrapped by the errors of Undo that leave everything as
// it was because undoing would lose or mix work: commits made after the
// turn's, or its files changed since.
var ErrCannotUndo = errors.New("the turn's commit cannot be undone safely")

// UndoResult says what [Committer.Undo] did.
type UndoResult struct {
	// Reverted is the turn's commit, reverted; "" when the turn made no
	// commit (nothing was changed).
	Reverted string
	// Commit is the commit that reverts it, on Branch.
	Commit string
	// Branch is the branch both are on ("HEAD" for a detached HEAD).
	Branch string
	// Files are the workspace's paths put back, with how the revert
	// changed them ('A' a file the turn deleted, back; 'D' a file it
	// added, removed; 'M' modified back).
	Files []FileChange
}

// Undo reverts the commit of the turn of thread known by turn (see
// Turn.Key), when it is the last commit of the thread on the branch the
// commits go to. thread names the thread and the threads it was forked
// from (/fork), whose commits are its past too; the first names it in the
// commit of the undo: a new commit, by the agent, puts back what the files of
// the turn's commit were before it, on that branch, and in the work tree.
// Nothing is rewritten: the turn's commit stays in the history.
//
// It refuses, wrapping ErrCannotUndo and changing nothing, when a commit
// was made on the branch after the turn's, or when a file of the turn's
// commit changed since (in the work tree, or staged in the index when the
// commits go to the branch checked out): undoing would lose that work.
// A turn that made no commit (the thread's last commit is another turn's,
// or an undo) gives a zero UndoResult.
func (c *Committer) Undo(ctx context.Context, thread []string, turn string) (UndoResult, error) {
	if len(thread) == 0 {
		return UndoResult{}, errors.New("undo: no thread named")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return UndoResult{}, fmt.Errorf("undo in %s: %w", c.dir, err)
	}
	if err := c.checkLayout(); err != nil {
		return UndoResult{}, err
	}
	if !c.repo {
		return UndoResult{}, nil
	}
	g := c.git()
	if _, err := c.checkConfig(ctx, g); err != nil {
		return UndoResult{}, err
	}
	ref, tip, err := c.undoTarget(ctx, g)
	if err != nil || tip == "" {
		return UndoResult{}, err
	}
	branch := strings.TrimPrefix(ref, "refs/heads/")
	commit, after, err := c.turnCommit(ctx, g, tip, thread, turn)
	if err != nil || commit == "" {
		return UndoResult{}, err
	}
	short := commit[:min(len(commit), 12)]
	if after > 0 {
		return UndoResult{}, fmt.Errorf("%w: %d commits were made on %s after the turn's commit %s; revert it by hand (git revert %s) if you still want to", ErrCannotUndo, after, branch, short, short)
	}
	parent, code, err := g.runCode(ctx, "rev-parse", "--verify", "--quiet", commit+"^1^{commit}")
	if err != nil && code != 1 {
		return UndoResult{}, err
	}
	base := strings.TrimSpace(string(parent))
	from := base
	if base == "" {
		if from, err = emptyTreeIn(ctx, g); err != nil {
			return UndoResult{}, err
		}
	}
	out, err := g.run(ctx, append([]string{"diff", "--name-status", "-z", "--no-renames", "--relative", from, commit}, pathspec...)...)
	if err != nil {
		return UndoResult{}, err
	}
	changes := parseNameStatus(out)
	paths := make([]string, len(changes))
	for i, ch := range changes {
		paths[i] = ch.Path
	}

	gi, removeIndex, err := c.ownIndex(g, "undo")
	if err != nil {
		return UndoResult{}, err
	}
	defer removeIndex()
	if _, err := gi.run(ctx, "read-tree", commit); err != nil {
		return UndoResult{}, err
	}
	if changed, err := c.changedSince(ctx, g, gi, commit, changes); err != nil {
		return UndoResult{}, err
	} else if len(changed) > 0 {
		return UndoResult{}, fmt.Errorf("%w: %s changed since the turn's commit %s; the commit was not reverted: keep what you need, then revert it by hand (git revert %s)",
			ErrCannotUndo, c.secrets.String(strings.Join(changed, ", ")), short, short)
	}

	// The revert: the turn's commit with its paths as they were before it.
	if err := unstage(ctx, gi, base, paths); err != nil {
		return UndoResult{}, err
	}
	tree, err := gi.run(ctx, "write-tree")
	if err != nil {
		return UndoResult{}, err
	}
	subject, err := g.run(ctx, "log", "-1", "--format=%s", commit)
	if err != nil {
		return UndoResult{}, err
	}
	msg := fmt.Sprintf("agent: undo %s\n\nThe user took the turn back (/undo); this puts back what its commit %s changed.\n\n%s: %s\n%s: %s",
		strings.TrimPrefix(strings.TrimSpace(string(subject)), "agent: "), commit, TrailerThread, thread[0], TrailerUndoes, commit)
	msgFile, err := writeMessage(c.secrets.String(msg))
	if err != nil {
		return UndoResult{}, fmt.Errorf("undo in %s: %w", c.dir, err)
	}
	defer os.Remove(msgFile)
	sha, err := g.asAgent().run(ctx, "commit-tree", strings.TrimSpace(string(tree)), "-F", msgFile, "-p", commit)
	if err != nil {
		return UndoResult{}, err
	}
	revert := strings.TrimSpace(string(sha))
	if _, err := g.run(ctx, "update-ref", "-m", "fsmgen-agent: undo of a turn", ref, revert, commit); err != nil {
		return UndoResult{}, fmt.Errorf("%w (the commit %s was made but not recorded on %s: did it move meanwhile?)", err, revert, ref)
	}

	// The work tree, from the revert's index; the user's index follows
	// HEAD for these paths when the commits go to the branch checked out.
	res := UndoResult{Reverted: commit, Commit: revert, Branch: branch}
	var back []string
	for _, ch := range changes {
		undone := FileChange{Status: 'M', Path: ch.Path}
		switch ch.Status {
		case 'A':
			undone.Status = 'D'
			if err := removeFile(c.dir, ch.Path); err != nil {
				return res, fmt.Errorf("undo in %s: the commit %s reverts %s, but removing it failed: %w", c.dir, revert, c.secrets.String(ch.Path), err)
			}
		case 'D':
			undone.Status = 'A'
			back = append(back, ch.Path)
		default:
			back = append(back, ch.Path)
		}
		res.Files = append(res.Files, undone)
	}
	if len(back) > 0 {
		if _, err := gi.runPaths(ctx, literal(back), "checkout"); err != nil {
			return res, fmt.Errorf("%w (the commit %s reverts the turn; its files were not all put back: git checkout them)", err, revert)
		}
	}
	if c.branch == "" {
		if _, err := g.runPaths(ctx, literal(paths), "reset", "--quiet"); err != nil {
			return res, fmt.Errorf("%w (the commit %s was made; run git reset to bring the index up to date)", err, revert)
		}
	}
	for _, p := range paths {
		delete(c.owned, p)
	}
	if c.before, err = c.snapshot(ctx); err != nil {
		return res, err
	}
	return res, nil
}

// undoTarget returns the ref the commits go to and its commit ("" when
// there is none: nothing to undo). Unlike target, it creates no branch.
func (c *Committer) undoTarget(ctx context.Context, g git) (ref, tip string, err error) {
	if c.branch == "" {
		return c.target(ctx, g)
	}
	ref = "refs/heads/" + c.branch
	out, code, err := g.runCode(ctx, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if code == 1 {
		return ref, "", nil
	}
	return ref, strings.TrimSpace(string(out)), err
}

// turnCommit looks back from tip for the last commit of the threads: when it
// is the commit of the turn known by turn, it returns it
// and how many commits follow it on the branch; "" when the thread's last
// commit is another turn's or an undo, or there is none.
func (c *Committer) turnCommit(ctx context.Context, g git, tip string, thread []string, turn string) (commit string, after int, err error) {
	out, err := g.run(ctx, "log", "-n", strconv.Itoa(undoSearch), "--format=%H%n%B%x1e", tip)
	if err != nil {
		return "", 0, err
	}
	for i, entry := range strings.Split(string(out), "\x1e") {
		hash, body, ok := strings.Cut(strings.TrimLeft(entry, "\n"), "\n")
		if !ok || !slices.Contains(thread, trailer(body, TrailerThread)) {
			continue
		}
		if trailer(body, TrailerTurn) != turn {
			return "", 0, nil
		}
		return hash, i, nil
	}
	return "", 0, nil
}

// trailer returns the value of the trailer key in a commit message's
// body, "" when it has none.
func trailer(body, key string) string {
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, key+": "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// changedSince returns the paths of the turn's commit (changes) that are
// no longer as the commit left them: in the work tree (compared through
// gi, an index holding the commit), or staged otherwise in the user's
// index when the commits go to the branch checked out. A path the commit
// deleted must still be absent.
func (c *Committer) changedSince(ctx context.Context, g, gi git, commit string, changes []FileChange) ([]string, error) {
	inCommit := map[string]bool{}
	var changed []string
	for _, ch := range changes {
		if ch.Status == 'D' {
			if _, err := os.Lstat(filepath.Join(c.dir, filepath.FromSlash(ch.Path))); err == nil {
				changed = append(changed, ch.Path)
			}
			continue
		}
		inCommit[ch.Path] = true
	}
	diffs := [][]string{{"diff", "--name-only", "-z", "--no-renames", "--relative", commit}}
	if c.branch == "" {
		diffs = append(diffs, []string{"diff", "--cached", "--name-only", "-z", "--no-renames", "--relative", commit})
	}
	for i, args := range diffs {
		run := gi
		if i == 1 {
			run = g // the user's index
		}
		out, err := run.run(ctx, append(args, pathspec...)...)
		if err != nil {
			return nil, err
		}
		for _, p := range splitNUL(out) {
			if inCommit[p] && !slices.Contains(changed, p) {
				changed = append(changed, p)
			}
		}
	}
	slices.Sort(changed)
	return changed, nil
}

// removeFile removes the file rel of the workspace dir, and the
// directories that held it and are left empty, up to dir.
func removeFile(dir, rel string) error {
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for d := filepath.Dir(p); d != dir && strings.HasPrefix(d, dir+string(filepath.Separator)); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break // not empty, or not ours to remove
		}
	}
	return nil
}

// ForkBranch starts the branch name at the tip of the branch the commits
// go to, when they go to a branch of their own (Options.Branch) that
// exists, so that the commits of a fork (/fork) follow those of the
// thread it was forked from; name must not exist yet. It does nothing
// when the commits go to the branch checked out, or their branch has no
// commit yet.
func (c *Committer) ForkBranch(ctx context.Context, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.repo || c.branch == "" {
		return nil
	}
	if err := checkBranchName(ctx, c.prog, name); err != nil {
		return err
	}
	g := c.git()
	_, tip, err := c.undoTarget(ctx, g)
	if err != nil || tip == "" {
		return err
	}
	if _, err := g.run(ctx, "update-ref", "-m", "fsmgen-agent: a fork's branch", "refs/heads/"+name, tip, ""); err != nil {
		return fmt.Errorf("start the fork's branch %s at %s: %w", name, c.branch, err)
	}
	return nil
}
