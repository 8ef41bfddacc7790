// Package autocommit commits the coding agent's work to git: one commit per
// turn, holding only what the agent's tools changed. [Committer.Snapshot],
// before each round of tools, notes what the workspace's changed and
// untracked files hold; [Committer.Hook], the post-tools hook, notes the
// paths whose content the round changed (a path the user had changed
// before is named in Result.Mixed and never committed); and
// [Committer.CommitTurn], when the turn ends, commits those paths through
// an index of its own (the user's index is never staged into, and only
// brought up to date for the paths committed), as AgentName <AgentEmail>,
// to the branch checked out or to Options.Branch, with a message derived
// from the turn ([TurnMessage]).
//
// It runs the git command line through os/exec. It never changes the user's
// git configuration and never commits files outside the workspace directory.
//
// # What a tool cannot make it do
//
// The agent's tools can write any file of the workspace, and the bash tool
// any file at all, .git/config included; and git runs programs that its
// configuration names (core.fsmonitor on every status, filter drivers on
// every add, hooks on every commit, …). So the repository is treated as
// something a tool may have tampered with. [Open], when the agent starts,
// records which repository the workspace belongs to, if any — its git
// directory, its work tree, what every ".git" entry from the workspace up
// to the top of the work tree is — and the effective git configuration,
// every file git reads included. Each [Committer.CommitTurn] then:
//
//   - refuses, with [ErrRepositoryChanged], when a ".git" appeared in or
//     above a workspace that was not in a repository at start, or when a
//     ".git" entry or the git directory itself changed: a ".git" file that
//     a tool planted never makes the agent run git in the repository it
//     names;
//   - refuses, with [ErrConfigChanged], when the configuration changed
//     since the start, naming the keys that changed (core.fsmonitor,
//     filter.*, diff.*.textconv, core.sshCommand, include.path … all make
//     git run commands), and asks the user to review .git/config;
//   - runs git with GIT_DIR and GIT_WORK_TREE set to what was recorded, so
//     git never goes looking for a repository, with GIT_CONFIG_NOSYSTEM=1
//     and GIT_TERMINAL_PROMPT=0, and with command-line settings, which
//     override every configuration file, that turn off hooks
//     (core.hooksPath=/dev/null), the file system monitor, commit signing,
//     automatic gc and maintenance, the pager, the editor, askpass, ssh,
//     credential helpers and the status of dirty submodules (which would
//     run git inside each submodule, under its own configuration);
//   - never commits edit_file's temporary files ([EditTempPattern]) nor
//     those of the thread store's atomic writes ([AtomicTempPattern]),
//     which a kill can leave behind;
//   - never commits a git repository that a tool created inside the
//     workspace (see "Repositories inside the workspace" below);
//   - leaves out of the commit, unstaged, the changed files that hold a
//     secret ([Options].Secrets) in their content, in their path or, for a
//     symbolic link, in its target — in any form the redactor finds, pieces
//     of the secret and encodings broken over lines included: the staged
//     contents are streamed from git cat-file through the redactor, in
//     bounded memory —, and the new files over [Options].MaxNewFileBytes,
//     and names them in the [Result];
//   - passes the paths it adds and unstages to git on standard input
//     (--pathspec-from-file), and the commit message in a temporary file
//     of its own (a turn of thousands of calls or files makes it larger
//     than one argument may be): a command line, which other users of the
//     machine can read, names only paths that hold no secret, and no
//     secret's form is written anywhere; git's error messages are
//     redacted;
//   - runs each git command with a deadline ([Options].Timeout), in its
//     own process group, which is killed when the deadline passes or the
//     context is cancelled; the call returns within a couple of seconds
//     even if a process that left the group holds git's output.
//
// Filter drivers cannot be turned off from the command line without
// knowing their names, and the user's own (git-lfs) must keep working.
// They need both a .gitattributes line, which a tool can write, and a
// configured command, which it cannot without changing the configuration;
// so a filter runs only if its command was configured when the agent
// started. The user's hooks do not run for the agent's commits.
//
// # Repositories inside the workspace
//
// A tool can create a repository inside the workspace (git init in a
// subdirectory, or a clone) whose configuration runs commands:
// core.fsmonitor, a filter. Committed, it becomes a gitlink (a submodule
// without .gitmodules), and from then on the user's own git status in the
// workspace runs git inside it, under its configuration. So the
// auto-commit never stages one: a directory that git reports as an
// untracked repository is left out of git add, and a gitlink that is staged
// nonetheless is unstaged. The repositories that appeared, or whose .git
// or configuration changed, since [Open] are named in
// [Result].Repositories, once for each state, with [RepositoryReason]; so
// is a .git that git itself does not take for a repository (one in a
// directory with tracked files, whose files git keeps treating as the
// workspace's; a .git file naming no repository), which runs its commands
// when the user runs git in that directory. Those are looked for in the
// directories that held tracked or untracked files when the agent started
// or at a commit since: a .git alone in an otherwise empty new directory
// is not seen, nor is one in an ignored directory.
//
// The agent's git guard (agent/internal/tools.GitGuard), run before every
// commit, removes the repositories a tool created and puts back what a
// tool changed of the others; what is said here is the auto-commit's own
// net, for a repository the guard could not undo or when there is none.
//
// The user's own submodules keep working: a gitlink that was in the index
// at Open is committed when the commit it records changes (a tool checked
// out another commit in the submodule), as long as the submodule's .git and
// configuration are what they were at Open; when a tool replaced or changed
// them (rm sub/.git, git init; git config in the submodule) the
// change is left out and the submodule is named in Result.Repositories:
// the user's git status now runs the new repository's configuration, which
// the auto-commit cannot prevent, only report. Untracked
// repositories that were there at Open are not committed either, and are
// named only when their .git or configuration changes. Repositories in
// ignored directories are not looked for: git status in the workspace
// never looks inside them, and git add never adds them.
//
// The checks are made just before git runs. A process that a tool left
// running in the background could still change the configuration in
// between; such a process already runs whatever it likes, as the bash tool
// does. What is guaranteed is that the agent itself never runs a command
// that a tool planted in the repository.
package autocommit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/fsmgen/fsmgen/agent/internal/progpath"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/internal/atomicfile"
)

// The reasons a [Result] gives for committing nothing.
const (
	SkippedNotRepo   = "not a git repository"
	SkippedNoChanges = "no changes"
)

// The identity of the agent's commits, as their author and committer
// (not the user's: the commits hold the agent's work). It is passed in
// the environment of the one git command that makes a commit, never
// written to any configuration.
const (
	AgentName  = "fsmgen-agent"
	AgentEmail = "agent@fsmgen.invalid"
)

// The temporary files that are never committed, as globs of a file's
// base name.
const (
	// EditTempPattern is the agent's edit_file's temporary files
	// (tools.EditTempPattern).
	EditTempPattern = ".fsmgen-edit-*.tmp"
	// AtomicTempPattern is the temporary files of the atomic writes of
	// the agent's thread store (and of fsmgen's generator):
	// atomicfile.TempPattern of any file.
	AtomicTempPattern = ".*" + atomicfile.TempMark + "*"
)

// Why files are left out of a commit, for the user; see [Result].
const (
	// SecretReason is why the files of Result.Withheld are not committed.
	SecretReason = "they hold a secret (the API key) in their content, their name or, for a symbolic link, its target"
	// RepositoryReason is why the directories of Result.Repositories are
	// not committed.
	RepositoryReason = "a git repository created (or its configuration changed) inside the workspace: review its .git/config before running git there"
	// TooLargeReason is why the files of Result.TooLarge are not
	// committed; the limit is Options.MaxNewFileBytes.
	TooLargeReason = "new files over the size limit of the auto-commit (build outputs?): add them to .gitignore, or commit them yourself"
)

// DefaultMaxNewFileBytes is the size of the largest new file the
// auto-commit commits unless [Options].MaxNewFileBytes says otherwise.
const DefaultMaxNewFileBytes = 5 << 20

// DefaultTimeout is how long one git command may run unless
// [Options].Timeout says otherwise.
const DefaultTimeout = time.Minute

// maxToolNameLen caps a tool name quoted in a commit message: names come
// from the LLM's calls and may be anything.
const maxToolNameLen = 64

// Errors a commit is refused with; the error's text says what changed and
// what to do.
var (
	// ErrRepositoryChanged: the repository the workspace belongs to is
	// not the one it belonged to when the agent started.
	ErrRepositoryChanged = errors.New("the workspace's git repository changed since the agent started")
	// ErrConfigChanged: the git configuration changed since the agent
	// started.
	ErrConfigChanged = errors.New("the git configuration changed since the agent started")
)

// Result says what Commit did.
type Result struct {
	// Committed is true when a commit was made.
	Committed bool `json:"committed"`
	// Commit is the new commit's full hash, when Committed.
	Commit string `json:"commit,omitempty"`
	// Message is the commit message, when Committed.
	Message string `json:"message,omitempty"`
	// Skipped says why nothing was committed, e.g. SkippedNotRepo or
	// SkippedNoChanges; empty when Committed.
	Skipped string `json:"skipped,omitempty"`
	// Withheld lists the changed files, relative to the workspace, that
	// were not committed because they hold a secret (see Options.Secrets
	// and SecretReason); they stay changed in the work tree. A secret in
	// a path is replaced by redact.Mark. Listed on every commit.
	Withheld []string `json:"withheld,omitempty"`
	// Repositories lists the git repositories inside the workspace
	// (directories, relative to the workspace, redacted as Withheld)
	// that appeared, or whose .git or configuration changed, since Open;
	// none is committed (see RepositoryReason and the package
	// documentation). Each is listed once, when it is first seen or
	// changes again.
	Repositories []string `json:"repositories,omitempty"`
	// TooLarge lists the new files (not in the last commit) over
	// Options.MaxNewFileBytes, not committed (see TooLargeReason); they
	// stay in the work tree, untracked. Each is listed once for each
	// content it has.
	TooLarge []string `json:"too_large,omitempty"`
	// Mixed lists the paths, relative to the workspace, that the user
	// had changed before the agent's tools changed them too: they are
	// never committed (see MixedReason), and stay as they are.
	Mixed []string `json:"mixed,omitempty"`
	// Branch is the branch the commit went to, when Committed ("HEAD"
	// for a detached HEAD).
	Branch string `json:"branch,omitempty"`
}

// Options configures a [Committer]. The zero value gives the defaults.
type Options struct {
	// Timeout limits each git command; 0 means DefaultTimeout.
	Timeout time.Duration
	// Secrets keeps changed files that hold a secret, raw or encoded (an
	// API key a tool wrote into a file, a file or directory named with
	// it, a symbolic link to it), out of the commits; nil keeps none out.
	Secrets *redact.Redactor
	// MaxNewFileBytes is the size of the largest new file committed;
	// larger ones are left out and named in Result.TooLarge. 0 means
	// DefaultMaxNewFileBytes, a negative value no limit.
	MaxNewFileBytes int64
	// Branch is the branch the commits go to, created from HEAD's commit
	// when it does not exist (e.g. "agent/<thread>"); the user's checkout,
	// index and branch are then never touched. Empty means the branch
	// checked out (or a detached HEAD).
	Branch string
	// Programs finds git, once, at Open, never in a directory of PATH the
	// model's commands can write; nil means one made from PATH that
	// knows the workspace alone (the agent hands its own, which also
	// knows the directories its sandbox lets commands write).
	Programs *progpath.Resolver
}

// Committer commits the changes of one workspace into the repository it
// belonged to when [Open] was called. It is safe for concurrent use; commits
// are made one at a time.
type Committer struct {
	dir     string  // the workspace: absolute, links resolved
	repo    bool    // whether dir was in a git work tree at Open
	gitDir  string  // the git directory, when repo
	top     string  // the top of the work tree, when repo
	prefix  string  // dir relative to top, with a final "/", or ""
	prog    program // git, and the PATH of its commands
	timeout time.Duration
	secrets *redact.Redactor
	maxNew  int64 // Options.MaxNewFileBytes; < 0: no limit
	// waitDelay is the git commands' (see git.waitDelay); tests shorten it.
	waitDelay time.Duration
	// At Open: the git directory's identity, the ".git" entries from dir
	// up to top (to the file system's root when !repo), the configuration.
	gitDirID entry
	layout   []entry
	config   []setting
	// The repositories inside the workspace at Open (see nested.go).
	repos repositories

	mu sync.Mutex // one commit at a time; guards told and repos.dirs
	// told is what Result.Repositories and Result.TooLarge said, by path,
	// so that each is said once (see noteNew).
	told map[string]string
	// failed says that the last commit failed: its changes are still to
	// be committed.
	failed bool
	// branch is Options.Branch.
	branch string
	// before is the snapshot taken before the round of tools at hand;
	// owned what the agent's tools left in each path they changed; turn
	// the paths the turn's tools changed, to commit; mixed those the user
	// had changed too (see Hook).
	before snapshot
	owned  map[string]fingerprint
	turn   map[string]bool
	mixed  map[string]bool
}

// writeMessage writes a commit message to a new temporary file, readable
// by its owner only, and returns its name; the caller removes it.
func writeMessage(msg string) (string, error) {
	f, err := os.CreateTemp("", "fsmgen-commit-*.txt")
	if err != nil {
		return "", fmt.Errorf("write the commit message: %w; check that the temporary directory (TMPDIR) is writable", err)
	}
	_, werr := f.WriteString(msg)
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("write the commit message: %w", err)
	}
	return f.Name(), nil
}

// Open records the repository the workspace dir belongs to, if any, and
// its configuration, for the commits to come; call it when the agent
// starts, before any tool runs. A dir outside any git work tree is fine:
// its commits are skipped with SkippedNotRepo. An error means dir is not a
// directory, git is not installed, or git failed.
func Open(ctx context.Context, dir string, opt Options) (*Committer, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("auto-commit in %q: %w", dir, err)
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("auto-commit in %q: %w; give an existing directory", dir, err)
	}
	if fi, err := os.Stat(resolved); err != nil {
		return nil, fmt.Errorf("auto-commit in %q: %w; give an existing directory", dir, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("auto-commit in %q: not a directory; give the workspace directory", dir)
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.MaxNewFileBytes == 0 {
		opt.MaxNewFileBytes = DefaultMaxNewFileBytes
	}
	programs := opt.Programs
	if programs == nil {
		programs = progpath.New(progpath.Options{PATH: os.Getenv("PATH"), Workspace: resolved})
	}
	bin, err := programs.Look("git")
	if err != nil {
		return nil, fmt.Errorf("auto-commit: %w; or turn auto-commit off", err)
	}
	prog := program{git: bin, path: programs.PATH()}
	if opt.Branch != "" {
		if err := checkBranchName(ctx, prog, opt.Branch); err != nil {
			return nil, err
		}
	}
	c := &Committer{dir: resolved, prog: prog, timeout: opt.Timeout, secrets: opt.Secrets, maxNew: opt.MaxNewFileBytes, told: map[string]string{},
		branch: opt.Branch, owned: map[string]fingerprint{}, turn: map[string]bool{}, mixed: map[string]bool{}}
	find := git{prog: prog, dir: resolved, timeout: opt.Timeout, redact: opt.Secrets}

	inside, err := find.insideWorkTree(ctx)
	if err != nil {
		return nil, err
	}
	if !inside {
		c.layout, err = recordLayout(resolved, "")
		return c, err
	}
	out, err := find.run(ctx, "rev-parse", "--absolute-git-dir", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || !filepath.IsAbs(lines[0]) || !filepath.IsAbs(lines[1]) {
		return nil, fmt.Errorf("auto-commit in %s: git rev-parse said %q, not a git directory and a work tree; check the repository with git status", resolved, out)
	}
	c.repo, c.gitDir, c.top = true, lines[0], lines[1]
	if c.gitDirID, err = stateOf(c.gitDir); err != nil {
		return nil, fmt.Errorf("auto-commit in %s: %w", resolved, err)
	}
	if c.layout, err = recordLayout(resolved, c.top); err != nil {
		return nil, err
	}
	if c.config, err = c.git().config(ctx); err != nil {
		return nil, err
	}
	if c.prefix, err = c.git().prefix(ctx); err != nil {
		return nil, err
	}
	if c.repos, err = c.scanRepositories(ctx, c.git()); err != nil {
		return nil, err
	}
	if c.before, err = c.snapshot(ctx); err != nil {
		return nil, err
	}
	if err := c.ownEarlierWork(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Dir returns the workspace directory: absolute, links resolved.
func (c *Committer) Dir() string { return c.dir }

// Repository returns the git directory the commits go into, or "" when the
// workspace was not in a git work tree when the committer was opened.
func (c *Committer) Repository() string { return c.gitDir }

// git returns the runner of git commands in the recorded repository.
func (c *Committer) git() git {
	return git{
		prog:      c.prog,
		dir:       c.dir,
		env:       []string{"GIT_DIR=" + c.gitDir, "GIT_WORK_TREE=" + c.top},
		timeout:   c.timeout,
		waitDelay: c.waitDelay,
		redact:    c.secrets,
	}
}

// pathspec is every path below the working directory but the temporary
// files.
var pathspec = []string{"--", ".",
	":(exclude,glob)**/" + EditTempPattern,
	":(exclude,glob)**/" + AtomicTempPattern,
}

// result is res with what was left out of the commit, redacted and
// sorted; repositories and large files that were named before with the
// same state are not named again.
func (c *Committer) result(res Result, out leftOut) Result {
	list := func(paths []string, kind string, states map[string]string) []string {
		var named []string
		for _, p := range paths {
			if states != nil && !c.noteNew(kind, p, states[p]) {
				continue
			}
			named = append(named, c.secrets.String(p))
		}
		slices.Sort(named)
		return slices.Compact(named)
	}
	res.Withheld = list(out.secrets, "", nil)
	res.Repositories = list(out.repos, repositoryKind, c.repoStates(out.repos))
	res.TooLarge = list(out.large, largeKind, out.largeStates)
	return res
}

// largeKind is the kind of noteNew's records of large files.
const largeKind = "large"

// noteNew reports whether the path p of the kind has a state other than
// the one it had when it was last named, and records the state.
func (c *Committer) noteNew(kind, p, state string) bool {
	key := kind + "\x00" + p
	if was, ok := c.told[key]; ok && was == state {
		return false
	}
	c.told[key] = state
	return true
}

// exclude makes the paths pathspecs that exclude themselves and what is
// below them.
func exclude(paths []string) []string {
	specs := make([]string, len(paths))
	for i, p := range paths {
		specs[i] = ":(exclude,literal)" + p
	}
	return specs
}

// literal makes paths pathspecs that match themselves only (no globs).
func literal(paths []string) []string {
	specs := make([]string, len(paths))
	for i, p := range paths {
		specs[i] = ":(literal)" + p
	}
	return specs
}

// splitNUL splits git's -z output into its entries.
func splitNUL(out []byte) []string {
	var list []string
	for e := range strings.SplitSeq(string(out), "\x00") {
		if e != "" {
			list = append(list, e)
		}
	}
	return list
}

// sameDir reports whether a and b name the same directory.
func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// cleanName makes a tool name safe to quote on one line of a message.
func cleanName(name string) string {
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.IsSpace(r) || r == ',' {
			return '_'
		}
		return r
	}, name)
	if r := []rune(name); len(r) > maxToolNameLen {
		name = string(r[:maxToolNameLen]) + "…"
	}
	if name == "" {
		return "(unnamed)"
	}
	return name
}

// insideWorkTree reports whether the directory is inside a git work tree.
func (g git) insideWorkTree(ctx context.Context) (bool, error) {
	out, _, err := g.runCode(ctx, "rev-parse", "--is-inside-work-tree")
	if err != nil {
		if ctx.Err() == nil && strings.Contains(err.Error(), "not a git repository") {
			return false, nil
		}
		return false, err
	}
	// "false" inside a .git directory or a bare repository.
	return strings.TrimSpace(string(out)) == "true", nil
}
