package autocommit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
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
	// dirs are the directories below the workspace that hold tracked or
	// untracked (not ignored) files, as far as Open and the commits saw:
	// where a .git that git does not treat as a repository (in a
	// directory with tracked files; a .git file naming none) is looked
	// for. It grows with each commit.
	dirs map[string]bool
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
	r := repositories{gitlinks: map[string]entry{}, untracked: map[string]entry{}, dirs: map[string]bool{}}
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
		addDirs(r.dirs, p)
	}
	status, err := g.run(ctx, append([]string{"status", "--porcelain", "-z", "--untracked-files=all", "--ignore-submodules=dirty"}, pathspec...)...)
	if err != nil {
		return r, err
	}
	c.repos = r // for untrackedRepositories, which records dirs
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
	for _, p := range c.dotGitsInDirs() {
		c.told[repositoryKind+"\x00"+p] = c.dotGit(p).key()
	}
	return r, nil
}

// addDirs adds to dirs every directory above the path p (slash-separated,
// relative to the workspace), the workspace itself excepted.
func addDirs(dirs map[string]bool, p string) {
	for d := path.Dir(strings.TrimSuffix(p, "/")); d != "." && d != "/" && !dirs[d]; d = path.Dir(d) {
		dirs[d] = true // and, as it was added with them, its parents
	}
}

// dotGitsInDirs returns the directories of repos.dirs that hold a .git:
// repositories, or .git files, that git status does not show.
func (c *Committer) dotGitsInDirs() []string {
	var found []string
	for d := range c.repos.dirs {
		if c.dotGit(d).kind != "nothing" {
			found = append(found, d)
		}
	}
	return found
}

// dotGit returns the state of the .git entry of the directory p, relative
// to the workspace, with a digest of the configuration of the repository
// it is or names: a tool can change the configuration of a repository
// inside the workspace, which the sandbox does not protect as it protects
// the workspace's own. A .git that cannot be looked at is recorded as
// such: it is a change when it could be looked at before.
func (c *Committer) dotGit(p string) entry {
	dir := filepath.Join(c.dir, filepath.FromSlash(p))
	e, err := stateOf(filepath.Join(dir, ".git"))
	if err != nil {
		return entry{path: e.path, kind: "other", content: err.Error()}
	}
	gitDir := filepath.Join(dir, ".git")
	if e.kind == "file" {
		target, ok := strings.CutPrefix(strings.TrimSpace(e.content), "gitdir:")
		if !ok {
			return e
		}
		gitDir = strings.TrimSpace(target)
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(dir, gitDir)
		}
	}
	if e.kind == "directory" || e.kind == "file" {
		e.config = digest(filepath.Join(gitDir, "config"))
	}
	return e
}

// maxConfigBytes is how much of a nested repository's configuration file
// dotGit reads.
const maxConfigBytes = 1 << 20

// digest returns the SHA-256 of the start of the file at p, or why it
// cannot be read.
func digest(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxConfigBytes)); err != nil {
		return err.Error()
	}
	return hex.EncodeToString(h.Sum(nil))
}

// key is the entry's state as a string, for noteNew.
func (e entry) key() string {
	return fmt.Sprintf("%s %d %d %q %s", e.kind, e.dev, e.ino, e.content, e.config)
}

// untrackedRepositories returns the untracked repositories of git
// status's output (porcelain, -z, --untracked-files=all), relative to the
// workspace: with every untracked file listed, a directory is listed only
// when git does not look inside it because it is a repository (a .git
// directory, or a .git file naming one). It adds the directories of every
// path listed to c.repos.dirs.
func (c *Committer) untrackedRepositories(status []byte) ([]string, error) {
	var repos []string
	fields := splitNUL(status)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 || f[2] != ' ' {
			return nil, fmt.Errorf("auto-commit in %s: git status gave an entry it cannot read (%q); check the repository with git status", c.dir, f)
		}
		xy, p := f[:2], f[3:]
		// Porcelain paths are relative to the top of the work tree.
		rel, ok := strings.CutPrefix(p, c.prefix)
		if ok {
			addDirs(c.repos.dirs, rel)
		}
		if strings.ContainsAny(xy, "RC") {
			i++ // a rename's or copy's source follows
			continue
		}
		if ok && xy == "??" && strings.HasSuffix(rel, "/") {
			repos = append(repos, strings.TrimSuffix(rel, "/"))
		}
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
