// Package autocommit is the coding agent's post-tools hook: after a round of
// tool calls that may have changed files, it commits every change in the
// workspace to git, with a message saying which tools ran.
//
// It runs the git command line through os/exec. It never changes the user's
// git configuration and never commits files outside the workspace directory:
// when the workspace is a subdirectory of a larger repository, only changes
// below it are committed, and changes the user staged elsewhere stay staged.
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
// every file git reads included. Each [Committer.Commit] then:
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

	"github.com/fsmgen/fsmgen/chat"
	"github.com/fsmgen/fsmgen/runtime/redact"
)

// The reasons a [Result] gives for committing nothing.
const (
	SkippedNotRepo   = "not a git repository"
	SkippedNoChanges = "no changes"
)

// The identity used when the repository has none configured. It is passed
// with `git -c` for the one commit, never written to any configuration.
const (
	FallbackName  = "fsmgen-agent"
	FallbackEmail = "agent@fsmgen.invalid"
)

// The temporary files that are never committed, as globs of a file's
// base name.
const (
	// EditTempPattern is the agent's edit_file's temporary files
	// (tools.EditTempPattern).
	EditTempPattern = ".fsmgen-edit-*.tmp"
	// AtomicTempPattern is the temporary files of the atomic writes of
	// the agent's thread store (and of fsmgen's generator).
	AtomicTempPattern = ".*.tmp-*"
)

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
	// were not committed because they hold a secret (see
	// Options.Secrets); they stay changed in the work tree.
	Withheld []string `json:"withheld,omitempty"`
}

// Options configures a [Committer]. The zero value gives the defaults.
type Options struct {
	// Timeout limits each git command; 0 means DefaultTimeout.
	Timeout time.Duration
	// Secrets keeps changed files that hold a secret, raw or encoded (an
	// API key a tool wrote into a file), out of the commits; nil keeps
	// none out.
	Secrets *redact.Redactor
}

// Committer commits the changes of one workspace into the repository it
// belonged to when [Open] was called. It is safe for concurrent use; commits
// are made one at a time.
type Committer struct {
	dir     string // the workspace: absolute, links resolved
	repo    bool   // whether dir was in a git work tree at Open
	gitDir  string // the git directory, when repo
	top     string // the top of the work tree, when repo
	timeout time.Duration
	secrets *redact.Redactor
	// waitDelay is the git commands' (see git.waitDelay); tests shorten it.
	waitDelay time.Duration
	// At Open: the git directory's identity, the ".git" entries from dir
	// up to top (to the file system's root when !repo), the configuration.
	gitDirID entry
	layout   []entry
	config   []setting

	mu sync.Mutex // one commit at a time
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
	c := &Committer{dir: resolved, timeout: opt.Timeout, secrets: opt.Secrets}
	find := git{dir: resolved, timeout: opt.Timeout}

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
		dir:       c.dir,
		env:       []string{"GIT_DIR=" + c.gitDir, "GIT_WORK_TREE=" + c.top},
		timeout:   c.timeout,
		waitDelay: c.waitDelay,
	}
}

// pathspec is every path below the working directory but the temporary
// files.
var pathspec = []string{"--", ".",
	":(exclude,glob)**/" + EditTempPattern,
	":(exclude,glob)**/" + AtomicTempPattern,
}

// Commit commits every change below the workspace — modified, added and
// deleted files, respecting .gitignore so that ignored files are never
// committed, temporary files excepted — if anything changed. It is
// skipped, with the reason in Result.Skipped, when the workspace was not in
// a git work tree at Open or nothing changed. The message says which tools
// ran, e.g.
//
//	agent: edit_file, bash
//
//	Auto-committed after tools: edit_file (ok), bash (failed)
//
// When the repository has no user name or email configured, the commit is
// made as FallbackName <FallbackEmail>. It is refused with an error
// wrapping ErrRepositoryChanged or ErrConfigChanged when the repository or
// its configuration changed since Open (see the package documentation).
// Any other error means git failed or was stopped (a merge is in progress,
// the index is locked, the timeout passed, ctx was cancelled, …); its text
// includes git's own message.
func (c *Committer) Commit(ctx context.Context, tools []chat.CompletedTool) (Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
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
	config, err := c.checkConfig(ctx, g)
	if err != nil {
		return Result{}, err
	}

	status, err := g.run(ctx, append([]string{"status", "--porcelain", "-z", "--untracked-files=all", "--ignore-submodules=dirty"}, pathspec...)...)
	if err != nil {
		return Result{}, err
	}
	if len(status) == 0 {
		return Result{Skipped: SkippedNoChanges}, nil
	}
	if _, err := g.run(ctx, append([]string{"add", "--all"}, pathspec...)...); err != nil {
		return Result{}, err
	}
	withheld, err := c.withholdSecrets(ctx, g)
	if err != nil {
		return Result{}, err
	}
	// Status can list changes that stage to nothing (e.g. untracked content
	// inside a submodule); commit only when the index really differs.
	if same, err := stagedMatchesHead(ctx, g); err != nil {
		return Result{}, err
	} else if same {
		return Result{Skipped: SkippedNoChanges, Withheld: withheld}, nil
	}

	msg := Message(tools)
	args := append(fallbackIdentity(config), "commit", "--quiet", "--no-verify", "--message", msg)
	args = append(args, pathspec...)
	for _, w := range withheld {
		// A commit with paths takes their content from the work tree:
		// the withheld files must be left out by name.
		args = append(args, ":(exclude,literal)"+w)
	}
	if _, err := g.run(ctx, args...); err != nil {
		return Result{}, err
	}
	sha, err := g.run(ctx, "rev-parse", "HEAD")
	if err != nil {
		return Result{}, err
	}
	return Result{Committed: true, Commit: strings.TrimSpace(string(sha)), Message: msg, Withheld: withheld}, nil
}

// withholdSecrets unstages the staged changes that hold a secret and
// returns their paths. It searches the staged content (git grep --cached),
// reading the secrets' forms from its standard input so that they appear
// on no command line.
func (c *Committer) withholdSecrets(ctx context.Context, g git) ([]string, error) {
	var forms []string
	for _, f := range c.secrets.Forms() {
		if !strings.ContainsAny(f, "\n\r") {
			forms = append(forms, f)
		}
	}
	if len(forms) == 0 {
		return nil, nil
	}
	out, err := g.run(ctx, append([]string{"diff", "--cached", "--name-only", "--relative", "-z", "--no-renames", "--diff-filter=d"}, pathspec...)...)
	if err != nil {
		return nil, err
	}
	changed := splitNUL(out)
	patterns := []byte(strings.Join(forms, "\n") + "\n")
	var hits []string
	for chunk := range slices.Chunk(changed, 256) {
		args := append([]string{"grep", "--cached", "-l", "-z", "-F", "--no-color", "-f", "-", "--"}, literal(chunk)...)
		out, code, err := g.runInput(ctx, patterns, args...)
		if err != nil && code != 1 { // 1: no file matches
			return nil, err
		}
		hits = append(hits, splitNUL(out)...)
	}
	if len(hits) == 0 {
		return nil, nil
	}
	unstage := []string{"reset", "--quiet", "--"}
	if _, code, err := g.runCode(ctx, "rev-parse", "--verify", "--quiet", "HEAD"); err != nil {
		if code != 1 {
			return nil, err
		}
		unstage = []string{"rm", "--cached", "--quiet", "--"} // no HEAD to reset to yet
	}
	for chunk := range slices.Chunk(hits, 256) {
		if _, err := g.run(ctx, append(unstage, literal(chunk)...)...); err != nil {
			return nil, err
		}
	}
	slices.Sort(hits)
	return hits, nil
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

// Hook is Commit with the signature of the agent's post-tools hook
// (agentexec.Hook). dir must be the committer's workspace.
func (c *Committer) Hook(ctx context.Context, dir string, tools []chat.CompletedTool) (Result, error) {
	if !sameDir(dir, c.dir) {
		return Result{}, fmt.Errorf("auto-commit was opened for %s, not for %s; open a committer for each workspace", c.dir, dir)
	}
	return c.Commit(ctx, tools)
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

// Message returns the commit message for a round of tools: a summary line
// naming each tool once, in the order they ran, then a body listing every
// call with its status.
func Message(tools []chat.CompletedTool) string {
	if len(tools) == 0 {
		return "agent: auto-commit\n\nAuto-committed after tools: (none recorded)"
	}
	seen := make(map[string]bool, len(tools))
	var names, calls []string
	for _, t := range tools {
		name := cleanName(t.ToolName)
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
		status := "ok"
		if !t.Succeeded {
			status = "failed"
		}
		calls = append(calls, fmt.Sprintf("%s (%s)", name, status))
	}
	return fmt.Sprintf("agent: %s\n\nAuto-committed after tools: %s", strings.Join(names, ", "), strings.Join(calls, ", "))
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

// stagedMatchesHead reports whether the index matches HEAD below the
// directory, so that a commit would record nothing. In a repository without
// commits yet, anything staged is a change.
func stagedMatchesHead(ctx context.Context, g git) (bool, error) {
	if _, code, err := g.runCode(ctx, "rev-parse", "--verify", "--quiet", "HEAD"); err != nil {
		if code == 1 {
			// No HEAD yet: the first commit. Anything in the index is new.
			out, err := g.run(ctx, append([]string{"ls-files", "--cached", "-z"}, pathspec...)...)
			return len(out) == 0, err
		}
		return false, err
	}
	_, code, err := g.runCode(ctx, append([]string{"diff", "--cached", "--quiet", "--no-ext-diff", "--no-textconv"}, pathspec...)...)
	switch {
	case err == nil:
		return true, nil
	case code == 1:
		return false, nil
	}
	return false, err
}

// fallbackIdentity returns the `-c` options that supply the fallback user
// name and email when the configuration lacks them.
func fallbackIdentity(config []setting) []string {
	var opts []string
	for _, kv := range [][2]string{{"user.name", FallbackName}, {"user.email", FallbackEmail}} {
		if strings.TrimSpace(lookup(config, kv[0])) == "" {
			opts = append(opts, "-c", kv[0]+"="+kv[1])
		}
	}
	return opts
}
