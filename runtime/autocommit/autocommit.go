// Package autocommit is the coding agent's post-tools hook: after a round of
// tool calls that may have changed files, it commits every change in the
// workspace to git, with a message saying which tools ran.
//
// It runs the git command line through os/exec. It never changes the user's
// git configuration and never commits files outside the workspace directory:
// when the workspace is a subdirectory of a larger repository, only changes
// below it are committed, and changes the user staged elsewhere stay staged.
package autocommit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/fsmgen/fsmgen/chat"
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

// maxToolNameLen caps a tool name quoted in a commit message: names come
// from the LLM's calls and may be anything.
const maxToolNameLen = 64

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
}

// Commit commits every change below dir — modified, added and deleted
// files, respecting .gitignore so that ignored files are never committed —
// if anything changed. It is skipped, with the reason in Result.Skipped,
// when dir is not inside a git work tree or nothing changed. The message
// says which tools ran, e.g.
//
//	agent: edit_file, bash
//
//	Auto-committed after tools: edit_file (ok), bash (failed)
//
// When the repository has no user name or email configured, the commit is
// made as FallbackName <FallbackEmail>. An error means git failed (it is not
// installed, a hook refused the commit, a merge is in progress, …); its text
// includes git's own message.
func Commit(ctx context.Context, dir string, tools []chat.CompletedTool) (Result, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Result{}, fmt.Errorf("auto-commit in %q: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return Result{}, fmt.Errorf("auto-commit in %q: %w; give an existing directory", dir, err)
	} else if !fi.IsDir() {
		return Result{}, fmt.Errorf("auto-commit in %q: not a directory; give the workspace directory", dir)
	}
	g := git{dir: abs}

	inside, err := g.insideWorkTree(ctx)
	if err != nil {
		return Result{}, err
	}
	if !inside {
		return Result{Skipped: SkippedNotRepo}, nil
	}

	// Every path below is the pathspec ".": dir and what is below it.
	status, err := g.run(ctx, "status", "--porcelain", "-z", "--untracked-files=all", "--", ".")
	if err != nil {
		return Result{}, err
	}
	if len(status) == 0 {
		return Result{Skipped: SkippedNoChanges}, nil
	}
	if _, err := g.run(ctx, "add", "--all", "--", "."); err != nil {
		return Result{}, err
	}
	// Status can list changes that stage to nothing (e.g. untracked content
	// inside a submodule); commit only when the index really differs.
	if same, err := g.stagedMatchesHead(ctx); err != nil {
		return Result{}, err
	} else if same {
		return Result{Skipped: SkippedNoChanges}, nil
	}

	identity, err := g.fallbackIdentity(ctx)
	if err != nil {
		return Result{}, err
	}
	msg := Message(tools)
	args := append(identity, "commit", "--quiet", "--message", msg, "--", ".")
	if _, err := g.run(ctx, args...); err != nil {
		return Result{}, err
	}
	sha, err := g.run(ctx, "rev-parse", "HEAD")
	if err != nil {
		return Result{}, err
	}
	return Result{Committed: true, Commit: strings.TrimSpace(string(sha)), Message: msg}, nil
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

// git runs git commands in one directory.
type git struct {
	dir string
}

// run runs git with args in the directory and returns its standard output.
// The error includes git's standard error.
func (g git) run(ctx context.Context, args ...string) ([]byte, error) {
	out, _, err := g.runEnv(ctx, nil, args...)
	return out, err
}

// runEnv is run with extra environment variables; it also returns the exit
// code (-1 when git did not run to an exit).
func (g git) runEnv(ctx context.Context, env []string, args ...string) ([]byte, int, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = g.dir
	cmd.Env = append(append(os.Environ(), "GIT_TERMINAL_PROMPT=0"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.Bytes(), 0, nil
	}
	if errors.Is(err, exec.ErrNotFound) {
		return nil, -1, fmt.Errorf("auto-commit: %w; install git or turn auto-commit off", err)
	}
	code := -1
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		err = ctxErr
	}
	detail := strings.TrimSpace(stderr.String())
	if detail == "" {
		detail = strings.TrimSpace(stdout.String())
	}
	if detail != "" {
		return stdout.Bytes(), code, fmt.Errorf("auto-commit: git %s in %s: %w: %s", args[0], g.dir, err, detail)
	}
	return stdout.Bytes(), code, fmt.Errorf("auto-commit: git %s in %s: %w", args[0], g.dir, err)
}

// insideWorkTree reports whether the directory is inside a git work tree.
func (g git) insideWorkTree(ctx context.Context) (bool, error) {
	// LC_ALL=C so that git's "not a git repository" can be recognised.
	out, _, err := g.runEnv(ctx, []string{"LC_ALL=C"}, "rev-parse", "--is-inside-work-tree")
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
func (g git) stagedMatchesHead(ctx context.Context) (bool, error) {
	if _, code, err := g.runEnv(ctx, nil, "rev-parse", "--verify", "--quiet", "HEAD"); err != nil {
		if code == 1 {
			// No HEAD yet: the first commit. Anything in the index is new.
			out, err := g.run(ctx, "ls-files", "--cached", "-z", "--", ".")
			return len(out) == 0, err
		}
		return false, err
	}
	_, code, err := g.runEnv(ctx, nil, "diff", "--cached", "--quiet", "--", ".")
	switch {
	case err == nil:
		return true, nil
	case code == 1:
		return false, nil
	}
	return false, err
}

// fallbackIdentity returns the `-c` options that supply the fallback user
// name and email when the repository's configuration lacks them.
func (g git) fallbackIdentity(ctx context.Context) ([]string, error) {
	var opts []string
	for _, kv := range [][2]string{{"user.name", FallbackName}, {"user.email", FallbackEmail}} {
		out, code, err := g.runEnv(ctx, nil, "config", "--get", kv[0])
		switch {
		case err == nil && strings.TrimSpace(string(out)) != "":
			continue // configured
		case err != nil && code != 1: // 1 means "not set"
			return nil, err
		}
		opts = append(opts, "-c", kv[0]+"="+kv[1])
	}
	return opts, nil
}
