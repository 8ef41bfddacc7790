package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// GitGuard keeps the agent's tools from leaving behind, in the workspace,
// a git repository whose configuration the user's own git would obey.
//
// git runs the programs a repository's configuration names
// (core.fsmonitor on every status, hooks on every commit, …), and the
// user's git status at the top of a repository runs git in each of its
// submodules, under the configuration of the repository each submodule's
// .git names. The sandbox keeps the workspace's own .git read-only, but
// every other .git of the workspace — a submodule's "gitdir: …" pointer
// file, a nested repository's .git directory — and any directory a tool
// makes into a bare repository can be written by a command. So a
// GitGuard records, when the agent starts, every .git entry of the
// workspace (a pointer file's content; for a .git directory, what in it
// can make git run a program or look elsewhere: config, config.worktree,
// commondir, gitdir, hooks, and the same in its modules and worktrees)
// and every git directory outside a .git (HEAD beside objects and refs,
// or beside commondir). [GitGuard.Check], run after every bash command,
// before every commit and when the agent stops, puts back what changed:
//
//   - a .git that a command created is removed (a .git directory that was
//     only moved is left where it is, and named);
//   - a changed or removed pointer file, and a changed, added or removed
//     file of what is recorded of a .git directory, get their content
//     back;
//   - a git directory that a command created is removed; a directory that
//     a command made into one loses the entries that make it one (HEAD,
//     objects, refs, commondir) that it did not have; one that was a git
//     directory keeps them, with what is recorded of it put back.
//
// What cannot be put back (a .git directory replaced or deleted, a file
// too large to have been recorded) is named. [GitGuard.Changes] lists
// everything found over the session, for the user.
//
// Every change is made relative to directories opened without following
// symbolic links (see [Workspace]): a command that puts a link in a path
// makes the guard fail to restore there, never write elsewhere. The .git
// directory at the workspace's root (the repository the agent commits
// into, which the sandbox keeps read-only and the auto-commit checks) is
// left alone, and so are changes the user makes to it. Every directory of
// the workspace is looked at, ignored ones too, which costs a directory
// read each (see docs/performance.md); what a tool changes in the
// workspace's repositories is undone, and so is what the user changes in
// them while the agent runs.
//
// A GitGuard is safe for concurrent use; checks run one at a time.
type GitGuard struct {
	ws *Workspace

	mu      sync.Mutex
	start   gitSnapshot
	changes []GitChange
}

// GitChange is one change to a git repository in the workspace that a
// GitGuard found.
type GitChange struct {
	// Path is the .git entry, or the git directory, relative to the
	// workspace, slash-separated.
	Path string
	// What says what changed, e.g. "the gitdir pointer changed".
	What string
	// Undone is true when the guard put back what was there.
	Undone bool
	// Note says what the guard did, or why it could not.
	Note string
}

// String describes the change for the model and the user.
func (c GitChange) String() string { return fmt.Sprintf("%s: %s; %s", c.Path, c.What, c.Note) }

// The names that make a directory a git directory.
const (
	markHEAD = 1 << iota
	markObjects
	markRefs
	markCommondir
)

// gitDirMarks says whether a directory with the marks m is one git takes
// for a git directory.
func gitDirMarks(m uint8) bool {
	return m&markHEAD != 0 && (m&markCommondir != 0 || m&(markObjects|markRefs) == markObjects|markRefs)
}

// markOf returns the mark of a directory entry, or 0.
func markOf(name string, isDir bool) uint8 {
	switch {
	case name == "HEAD" && !isDir:
		return markHEAD
	case name == "commondir" && !isDir:
		return markCommondir
	case name == "objects" && isDir:
		return markObjects
	case name == "refs" && isDir:
		return markRefs
	}
	return 0
}

// markNames are the entries of each mark, in removal order.
var markNames = []struct {
	mark uint8
	name string
}{{markHEAD, "HEAD"}, {markCommondir, "commondir"}, {markObjects, "objects"}, {markRefs, "refs"}}

// maxRecorded is the largest file of a git directory whose content a
// GitGuard keeps to put back; a larger one is only told apart by digest.
const maxRecorded = 1 << 20

// gitFile is what one path was: its type and permissions, its identity
// and, where it was kept, its content (a link's target).
type gitFile struct {
	mode    fs.FileMode
	size    int64
	ino     uint64
	ctime   int64 // nanoseconds
	content []byte
	kept    bool // content holds the whole content
}

// same reports whether f and o are alike: no write, chmod or replacement
// happened in between.
func (f gitFile) same(o gitFile) bool {
	return f.mode == o.mode && f.size == o.size && f.ino == o.ino && f.ctime == o.ctime
}

// gitDirState is what a git directory was: its identity and the files
// in it that can make git run a program or look elsewhere.
type gitDirState struct {
	dev, ino uint64
	files    map[string]gitFile // by path relative to the git directory
}

// gitSnapshot is what the git repositories of the workspace were.
type gitSnapshot struct {
	// dotGits are the .git entries, by path: a file or link (file) or a
	// directory (dir), or the workspace's own (skipped).
	dotGits map[string]dotGitState
	// gitDirs are the git directories outside .git, by directory.
	gitDirs map[string]gitDirState
	// marks are, for each directory holding any of HEAD, objects, refs
	// and commondir, which.
	marks map[string]uint8
	// dirs are the directories of the workspace, outside git directories.
	dirs map[string]struct{}
}

// dotGitState is what one .git entry was.
type dotGitState struct {
	file    *gitFile     // a pointer file or a link
	dir     *gitDirState // a .git directory
	skipped bool         // the workspace's own .git directory, left alone
}

// NewGitGuard records the git repositories of the workspace ws. Make it
// when the agent starts, before any tool runs.
func NewGitGuard(ctx context.Context, ws *Workspace) (*GitGuard, error) {
	g := &GitGuard{ws: ws}
	snap, err := scanner{ws: ws, keep: true}.scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("record the git repositories of the workspace %s: %w", ws.Root(), err)
	}
	g.start = snap
	return g, nil
}

// Check looks at the git repositories of the workspace again, puts back
// what changed since the guard was made (see [GitGuard]) and returns what
// it found, sorted by path; nil when nothing changed. A change it could
// not undo is returned by the first check that finds it only.
func (g *GitGuard) Check(ctx context.Context) ([]GitChange, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now, err := scanner{ws: g.ws}.scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("check the git repositories of the workspace %s: %w", g.ws.Root(), err)
	}
	var found []GitChange
	add := func(c GitChange) { found = append(found, c) }
	for p, was := range g.start.dotGits {
		if was.skipped {
			continue
		}
		g.checkDotGit(p, was, now, add)
	}
	for p, cur := range now.dotGits {
		if _, ok := g.start.dotGits[p]; !ok && !cur.skipped {
			g.removeDotGit(p, cur, add)
		}
	}
	for p, was := range g.start.gitDirs {
		if cur, ok := now.gitDirs[p]; ok {
			g.checkGitDir(p, "git directory", was, cur, add)
		}
	}
	for p := range now.gitDirs {
		if _, ok := g.start.gitDirs[p]; !ok {
			g.unmakeGitDir(p, now.marks[p], add)
		}
	}
	slices.SortStableFunc(found, func(a, b GitChange) int { return strings.Compare(a.Path, b.Path) })
	// What could not be undone is found again by every check: it is
	// told once.
	found = slices.DeleteFunc(found, func(c GitChange) bool { return !c.Undone && slices.Contains(g.changes, c) })
	g.changes = append(g.changes, found...)
	return found, nil
}

// Changes returns every change the checks found so far, in the order
// they found them.
func (g *GitGuard) Changes() []GitChange {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.changes)
}

// Unusual returns, sorted, the git repositories of the workspace, as the
// guard found them when it was made, that the user is unlikely to have
// made: a gitdir pointer that names a directory outside every .git (git
// itself points a submodule into .git/modules and a worktree into
// .git/worktrees), and a git directory outside a .git (a bare
// repository). The guard takes the workspace as it finds them; a session
// killed between a command and its check leaves what the command planted
// for the next session to find, and these are what such a plant looks
// like.
func (g *GitGuard) Unusual() []string {
	var out []string
	for p, st := range g.start.dotGits {
		if st.file == nil || st.file.mode&fs.ModeSymlink != 0 {
			continue
		}
		target, ok := strings.CutPrefix(strings.TrimSpace(string(st.file.content)), "gitdir:")
		if !ok {
			continue
		}
		target = filepath.ToSlash(strings.TrimSpace(target))
		if !path.IsAbs(target) {
			target = path.Join(path.Dir(p), target)
		}
		if !slices.Contains(strings.Split(target, "/"), ".git") {
			out = append(out, fmt.Sprintf("%s points to %s, outside every .git directory", p, target))
		}
	}
	for p := range g.start.gitDirs {
		out = append(out, fmt.Sprintf("%s is a git repository outside a .git (a bare repository)", p))
	}
	slices.Sort(out)
	return out
}

// CheckNote runs Check and words what it found for the model: "" when
// nothing changed.
func (g *GitGuard) CheckNote(ctx context.Context) string {
	found, err := g.Check(ctx)
	if err != nil {
		return fmt.Sprintf("[the agent could not check the workspace's git repositories: %v]", err)
	}
	if len(found) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("[the agent undid changes to git repositories in the workspace: the tools may not create or change a .git, a submodule's configuration or a bare repository, " +
		"since git would run what they configure when the user next runs it. Do not retry; the agent commits your changes itself.")
	for _, c := range found {
		b.WriteString("\n- " + c.String())
	}
	b.WriteString("]")
	return b.String()
}

// checkDotGit compares the .git entry p with what it was and puts it
// back.
func (g *GitGuard) checkDotGit(p string, was dotGitState, now gitSnapshot, add func(GitChange)) {
	cur, ok := now.dotGits[p]
	switch {
	case was.file != nil:
		if ok && cur.file != nil && cur.file.same(*was.file) {
			return
		}
		what := "the gitdir pointer changed"
		switch {
		case !ok:
			what = "the gitdir pointer was removed"
		case cur.file == nil:
			what = "the gitdir pointer was replaced by a directory"
		}
		c := GitChange{Path: p, What: what}
		if now, err := g.restoreFile(p, *was.file, true); err != nil {
			c.Note = fmt.Sprintf("it could not be put back (%v): check it, and what it points to, before running git there", err)
		} else {
			*was.file = now
			c.Undone, c.Note = true, "put back as it was"
		}
		add(c)
	case was.dir != nil:
		if !ok || cur.dir == nil || cur.dir.dev != was.dir.dev || cur.dir.ino != was.dir.ino {
			add(GitChange{Path: p, What: "the .git directory was removed or replaced",
				Note: "it cannot be put back: check the repository before running git there"})
			return
		}
		g.checkGitDir(p, ".git directory", *was.dir, *cur.dir, add)
	}
}

// checkGitDir compares the recorded files of the git directory p with
// what they were and puts them back.
func (g *GitGuard) checkGitDir(p, what string, was, cur gitDirState, add func(GitChange)) {
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range was.files {
			if !yield(n) {
				return
			}
		}
		for n := range cur.files {
			if _, ok := was.files[n]; !ok && !yield(n) {
				return
			}
		}
	})
	for _, n := range names {
		w, inWas := was.files[n]
		c, inCur := cur.files[n]
		full := path.Join(p, n)
		change := GitChange{Path: full}
		var err error
		switch {
		case inWas && inCur && w.same(c):
			continue
		case !inWas:
			change.What = "added to a " + what
			err = g.remove(full)
		case !inCur:
			change.What = "removed from a " + what
			was.files[n], err = g.restoreFile(full, w, false)
		default:
			change.What = "changed in a " + what
			was.files[n], err = g.restoreFile(full, w, false)
		}
		if err != nil {
			change.Note = fmt.Sprintf("it could not be put back (%v): review the repository's configuration and hooks before running git there", err)
		} else {
			change.Undone, change.Note = true, "put back as it was"
			if !inWas {
				change.Note = "removed"
			}
		}
		add(change)
	}
}

// removeDotGit removes the .git entry p that a tool created; a .git
// directory that was only moved there is left, and named.
func (g *GitGuard) removeDotGit(p string, cur dotGitState, add func(GitChange)) {
	c := GitChange{Path: p, What: "a .git was created"}
	if cur.dir != nil {
		for q, was := range g.start.dotGits {
			if was.dir != nil && was.dir.dev == cur.dir.dev && was.dir.ino == cur.dir.ino {
				c.What = "the .git directory of " + q + " was moved here"
				c.Note = "it was left where it is: check the repository before running git there"
				add(c)
				return
			}
		}
	}
	if err := g.remove(p); err != nil {
		c.Note = fmt.Sprintf("it could not be removed (%v): remove it before running git there", err)
	} else {
		c.Undone, c.Note = true, "removed"
	}
	add(c)
}

// unmakeGitDir makes the directory p, which a tool made into a git
// directory, no longer one: it removes it when it is new, else the
// entries that make it one that it did not have when the guard was made.
func (g *GitGuard) unmakeGitDir(p string, marks uint8, add func(GitChange)) {
	if _, old := g.start.dirs[p]; !old && p != "." {
		c := GitChange{Path: p, What: "a git repository was created"}
		if err := g.remove(p); err != nil {
			c.Note = fmt.Sprintf("it could not be removed (%v): remove it before running git there", err)
		} else {
			c.Undone, c.Note = true, "removed"
		}
		add(c)
		return
	}
	c := GitChange{Path: p, What: "a directory was made into a git repository"}
	before := g.start.marks[p]
	var removed []string
	var errs []error
	for _, m := range markNames {
		if marks&m.mark == 0 || before&m.mark != 0 {
			continue
		}
		if err := g.remove(path.Join(p, m.name)); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, m.name)
	}
	if err := errors.Join(errs...); err != nil {
		c.Note = fmt.Sprintf("it could not be undone (%v): remove the repository before running git there", err)
	} else {
		c.Undone, c.Note = true, "removed its "+strings.Join(removed, ", ")+", so that git no longer takes it for a repository"
	}
	add(c)
}
