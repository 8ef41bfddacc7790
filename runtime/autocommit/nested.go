package autocommit

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// repositories is what the repositories inside the workspace were at Open,
// each by its path relative to the workspace (slash-separated) and the
// state of its .git entry.
type repositories struct {
	// gitlinks are the index's gitlinks (submodules): the repositories
	// whose new commits are committed, while their .git stays the same.
	gitlinks map[string]entry
	// untracked are the untracked repositories git status reported.
	untracked map[string]entry
}

// The modes of git's tree entries the auto-commit tells apart.
const (
	modeNone    = "000000" // no entry: a new path
	modeFile    = "100644"
	modeExec    = "100755"
	modeSymlink = "120000"
	modeGitlink = "160000"
)

// repositoryKind is the kind of noteNew's records of repositories.
const repositoryKind = "repository"

// scanRepositories records the repositories inside the workspace: the
// index's gitlinks and the untracked repositories. What it finds is
// recorded as already named (see noteNew): only a repository that
// appears or changes later is named in a Result.
func (c *Committer) scanRepositories(ctx context.Context, g git) (repositories, error) {
	r := repositories{gitlinks: map[string]entry{}, untracked: map[string]entry{}}
	out, err := g.run(ctx, append([]string{"ls-files", "--stage", "-z"}, pathspec...)...)
	if err != nil {
		return r, err
	}
	for _, rec := range splitNUL(out) {
		// "<mode> <object> <stage>\t<path>", the path relative to dir.
		meta, p, ok := strings.Cut(rec, "\t")
		if !ok {
			return r, fmt.Errorf("auto-commit in %s: git ls-files gave a line it cannot read (%q); check the repository with git status", c.dir, rec)
		}
		if strings.HasPrefix(meta, modeGitlink+" ") {
			r.gitlinks[p] = c.dotGit(p)
		}
	}
	status, err := g.run(ctx, append([]string{"status", "--porcelain", "-z", "--untracked-files=all", "--ignore-submodules=dirty"}, pathspec...)...)
	if err != nil {
		return r, err
	}
	untracked, err := c.untrackedRepositories(status)
	if err != nil {
		return r, err
	}
	for _, p := range untracked {
		r.untracked[p] = c.dotGit(p)
	}
	for _, m := range []map[string]entry{r.gitlinks, r.untracked} {
		for p, e := range m {
			c.told[repositoryKind+"\x00"+p] = e.key()
		}
	}
	return r, nil
}

// dotGit returns the state of the .git entry of the directory p, relative
// to the workspace. A .git that cannot be looked at is recorded as such:
// it is a change when it could be looked at before.
func (c *Committer) dotGit(p string) entry {
	e, err := stateOf(filepath.Join(c.dir, filepath.FromSlash(p), ".git"))
	if err != nil {
		return entry{path: e.path, kind: "other", content: err.Error()}
	}
	return e
}

// key is the entry's state as a string, for noteNew.
func (e entry) key() string {
	return fmt.Sprintf("%s %d %d %q", e.kind, e.dev, e.ino, e.content)
}

// untrackedRepositories returns the untracked repositories of git
// status's output (porcelain, -z, --untracked-files=all), relative to the
// workspace: with every untracked file listed, a directory is listed only
// when git does not look inside it because it is a repository (a .git
// directory, or a .git file naming one).
func (c *Committer) untrackedRepositories(status []byte) ([]string, error) {
	var repos []string
	fields := splitNUL(status)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 || f[2] != ' ' {
			return nil, fmt.Errorf("auto-commit in %s: git status gave an entry it cannot read (%q); check the repository with git status", c.dir, f)
		}
		xy, p := f[:2], f[3:]
		if strings.ContainsAny(xy, "RC") {
			i++ // a rename's or copy's source follows
			continue
		}
		if xy != "??" || !strings.HasSuffix(p, "/") {
			continue
		}
		// Porcelain paths are relative to the top of the work tree.
		rel, ok := strings.CutPrefix(p, c.prefix)
		if !ok {
			continue
		}
		repos = append(repos, strings.TrimSuffix(rel, "/"))
	}
	return repos, nil
}

// replacedSubmodules returns the index's gitlinks at Open whose .git is not
// what it was.
func (c *Committer) replacedSubmodules() []string {
	var changed []string
	for p, was := range c.repos.gitlinks {
		if c.dotGit(p) != was {
			changed = append(changed, p)
		}
	}
	return changed
}

// submoduleUnchanged reports whether p was a gitlink of the index at Open
// and its .git is what it was: a submodule of the user's.
func (c *Committer) submoduleUnchanged(p string) bool {
	was, ok := c.repos.gitlinks[p]
	return ok && c.dotGit(p) == was
}

// repoStates returns the state of the .git of each of the repositories,
// for noteNew.
func (c *Committer) repoStates(paths []string) map[string]string {
	states := make(map[string]string, len(paths))
	for _, p := range paths {
		states[p] = c.dotGit(p).key()
	}
	return states
}
