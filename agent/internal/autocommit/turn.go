package autocommit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// MixedReason is why the files of Result.Mixed are not committed.
const MixedReason = "you changed them too (before the agent's tools did): not committed, so that your work and the agent's are not mixed; review them and commit them yourself"

// SkippedRecorded is the reason the post-tools hook ([Committer.Hook])
// gives: it notes what the round changed, which the turn's commit
// ([Committer.CommitTurn]) commits.
const SkippedRecorded = "recorded for the turn's commit"

// Turn is what the commit of one turn of the agent says it did.
type Turn struct {
	// Prompt is the user's message that started the turn.
	Prompt string
	// Summary is the assistant's last reply of the turn; its first line
	// is the commit's subject.
	Summary string
	// Tools are the calls of the turn's rounds that ran the post-tools
	// hook, in order.
	Tools []chat.CompletedTool
	// Thread is the thread's ID and Key what identifies the turn in it
	// (the ID of the user's message that started it): the commit's
	// trailers (TrailerThread, TrailerTurn), by which [Committer.Undo]
	// finds it. No trailers when Thread is empty.
	Thread string
	Key    string
}

// fingerprint identifies what a changed path holds: its type, mode, size
// and content's SHA-256 (a symbolic link's target); "" for a path that
// does not exist.
type fingerprint string

// snapshot is what the workspace's changed paths (against the index, and
// the untracked ones) hold, by path relative to the workspace.
type snapshot map[string]fingerprint

// Snapshot notes what the workspace's changed and untracked files hold,
// before a round of tools: what the round's tools change is then told
// apart from the user's own changes by [Committer.Hook]. Call it before
// each round's tools start; Open takes the first one.
func (c *Committer) Snapshot(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.repo {
		return nil
	}
	s, err := c.snapshot(ctx)
	if err != nil {
		return err
	}
	c.before = s
	return nil
}

// snapshot returns what the changed paths of the workspace hold, as git
// status lists them (ignored files are not listed).
func (c *Committer) snapshot(ctx context.Context) (snapshot, error) {
	status, err := c.git().run(ctx, append([]string{"status", "--porcelain", "-z", "--untracked-files=all", "--ignore-submodules=dirty", "--no-renames"}, pathspec...)...)
	if err != nil {
		return nil, err
	}
	s := snapshot{}
	for _, f := range splitNUL(status) {
		if len(f) < 4 || f[2] != ' ' {
			return nil, fmt.Errorf("auto-commit in %s: git status gave an entry it cannot read (%q); check the repository with git status", c.dir, f)
		}
		rel, ok := strings.CutPrefix(f[3:], c.prefix)
		if !ok {
			continue
		}
		s[rel] = fingerprintOf(filepath.Join(c.dir, filepath.FromSlash(strings.TrimSuffix(rel, "/"))))
	}
	return s, nil
}

// fingerprintOf returns the fingerprint of the file p. A directory (an
// untracked repository, which is never committed) is known by its type.
func fingerprintOf(p string) fingerprint {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		return fingerprint("error " + err.Error())
	}
	head := fmt.Sprintf("%s %d ", fi.Mode(), fi.Size())
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(p)
		return fingerprint(head + target)
	case !fi.Mode().IsRegular():
		return fingerprint(head)
	}
	f, err := os.Open(p)
	if err != nil {
		return fingerprint(head + "error " + err.Error())
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fingerprint(head + "error " + err.Error())
	}
	return fingerprint(head + hex.EncodeToString(h.Sum(nil)))
}

// Hook is the agent's post-tools hook (agentexec's): it notes the paths
// of the workspace the round's tools changed — those whose content
// differs from the snapshot taken before the round — for the turn's
// commit. A path that held a change of the user's before the round
// (changed, not by the agent, against the index) is not the agent's
// alone: it is named in Result.Mixed and never committed. dir must be
// the committer's workspace. Nothing is committed here: see
// [Committer.CommitTurn].
func (c *Committer) Hook(ctx context.Context, dir string, _ []chat.CompletedTool) (Result, error) {
	if !sameDir(dir, c.dir) {
		return Result{}, fmt.Errorf("auto-commit was opened for %s, not for %s; open a committer for each workspace", c.dir, dir)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkLayout(); err != nil {
		return Result{}, err
	}
	if !c.repo {
		return Result{Skipped: SkippedNotRepo}, nil
	}
	if _, err := c.checkConfig(ctx, c.git()); err != nil {
		return Result{}, err
	}
	now, err := c.snapshot(ctx)
	if err != nil {
		return Result{}, err
	}
	var changed []string
	for p, fp := range now {
		if was, ok := c.before[p]; !ok || was != fp {
			changed = append(changed, p)
		}
	}
	for p := range c.before {
		if _, ok := now[p]; !ok {
			changed = append(changed, p) // back to what the index has
		}
	}
	var mixed []string
	for _, p := range changed {
		was, dirty := c.before[p]
		if own, ok := c.owned[p]; dirty && (!ok || own != was) {
			mixed = append(mixed, p)
			c.mixed[p] = true
			continue
		}
		c.turn[p] = true
		c.owned[p] = now[p]
	}
	c.before = now
	slices.Sort(mixed)
	for i, p := range mixed {
		mixed[i] = c.secrets.String(p)
	}
	return Result{Skipped: SkippedRecorded, Mixed: mixed}, nil
}

// ownEarlierWork notes, when the commits go to a branch of their own
// (Options.Branch), the changed paths whose content in the work tree is
// what that branch holds at its tip as the agent's: the work of an
// earlier session of the thread (or of the thread a fork came from),
// which the user's checkout never received, and which is therefore not
// the user's own change. Without it a resumed session would take the
// agent's earlier work for the user's and leave it out of the commits.
func (c *Committer) ownEarlierWork(ctx context.Context) error {
	if !c.repo || c.branch == "" || len(c.before) == 0 {
		return nil
	}
	g := c.git()
	_, tip, err := c.undoTarget(ctx, g)
	if err != nil || tip == "" {
		return err
	}
	gi, removeIndex, err := c.ownIndex(g, "auto-commit")
	if err != nil {
		return err
	}
	defer removeIndex()
	if _, err := gi.run(ctx, "read-tree", tip); err != nil {
		return err
	}
	files, err := gi.run(ctx, append([]string{"ls-files", "-z"}, pathspec...)...)
	if err != nil {
		return err
	}
	differ, err := gi.run(ctx, append([]string{"diff", "--name-only", "-z", "--no-renames", "--relative", tip}, pathspec...)...)
	if err != nil {
		return err
	}
	inTip, changed := map[string]bool{}, map[string]bool{}
	for _, f := range splitNUL(files) {
		inTip[f] = true
	}
	for _, f := range splitNUL(differ) {
		changed[f] = true
	}
	for p, fp := range c.before {
		exists := fp != ""
		if (exists && inTip[p] && !changed[p]) || (!exists && !inTip[p]) {
			c.owned[p] = fp
		}
	}
	return nil
}
