package autocommit

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fsmgen/fsmgen/agent/internal/redact"
)

// defaultWaitDelay is how long a git command's output is waited for after
// the command was killed or exited, in case a process it started outside
// its process group still holds the pipes.
const defaultWaitDelay = 2 * time.Second

// hardening is the configuration every git command runs with, on its
// command line so that it overrides every configuration file: no hook,
// no file system monitor, no signing, no garbage collection or maintenance
// in the background, no external diff, no pager, editor, askpass, ssh or
// credential helper, and dirty submodules left alone (git would run a
// status inside each of them, under their own configuration).
var hardening = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.pager=cat",
	"-c", "core.editor=:",
	"-c", "core.askPass=",
	"-c", "core.sshCommand=false",
	"-c", "credential.helper=",
	"-c", "commit.gpgSign=false",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "diff.ignoreSubmodules=dirty",
	"-c", "status.submoduleSummary=false",
}

// hardEnv is the environment every git command runs with, after the
// agent's own: no system configuration, no prompt, and programs that do
// nothing where git could start one.
var hardEnv = []string{
	"GIT_CONFIG_NOSYSTEM=1",
	"GIT_TERMINAL_PROMPT=0",
	"GIT_PAGER=cat",
	"PAGER=cat",
	"GIT_EDITOR=:",
	"GIT_SEQUENCE_EDITOR=:",
	"GIT_ASKPASS=",
	"SSH_ASKPASS=",
	"GIT_SSH_COMMAND=false",
	"LC_ALL=C", // git's messages are recognised by their English text
}

// droppedEnv are the agent's environment variables git commands do not
// see: programs git would run in place of its own.
var droppedEnv = []string{"GIT_EXTERNAL_DIFF", "GIT_SSH"}

// environ returns the agent's environment without droppedEnv and with
// PATH set to path, then hardEnv, then extra; for a variable given twice,
// the last wins.
func environ(path string, extra []string) []string {
	env := make([]string, 0, len(os.Environ())+len(hardEnv)+len(extra)+1)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(droppedEnv, name) && name != "PATH" {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+path)
	return append(append(env, hardEnv...), extra...)
}

// program is the git the commands run, found once by the committer's
// resolver (Options.Programs), and the PATH they get: the directories
// that resolver looks in, so that what git starts through PATH (a filter
// the user configured, git-lfs say) is never one the model's commands
// planted either.
type program struct {
	git, path string
}

// git runs git commands in one directory.
type git struct {
	prog    program
	dir     string        // the working directory
	env     []string      // added to the environment, e.g. GIT_DIR
	timeout time.Duration // of each command
	// waitDelay is the command's exec.Cmd.WaitDelay; 0 means
	// defaultWaitDelay.
	waitDelay time.Duration
	// redact is applied to git's messages in errors: they can quote a
	// path named with a secret.
	redact *redact.Redactor
}

// run runs git with args in the directory and returns its standard output.
// The error includes git's standard error.
func (g git) run(ctx context.Context, args ...string) ([]byte, error) {
	out, _, err := g.runCode(ctx, args...)
	return out, err
}

// runPaths runs git with args and the pathspecs specs, which it reads
// from its standard input (--pathspec-from-file): paths, which may hold a
// secret, never appear on a command line. The command must accept
// --pathspec-from-file (add, commit, reset, rm, …).
func (g git) runPaths(ctx context.Context, specs []string, args ...string) ([]byte, error) {
	var in bytes.Buffer
	for _, s := range specs {
		in.WriteString(s)
		in.WriteByte(0)
	}
	args = append(slices.Clip(args), "--pathspec-from-file=-", "--pathspec-file-nul")
	out, _, err := g.runInput(ctx, in.Bytes(), args...)
	return out, err
}

// prefix returns the working directory relative to the top of the work
// tree, with a final "/", or "" at the top: what paths relative to the top
// (git status's) begin with below the working directory.
func (g git) prefix(ctx context.Context) (string, error) {
	out, err := g.run(ctx, "rev-parse", "--show-prefix")
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(out), "\n"), nil
}

// runCode is run that also returns git's exit code (-1 when git did not
// run to an exit).
//
// git runs in its own process group, with a deadline of g.timeout; when
// the deadline passes or ctx is done the whole group is killed (hooks,
// filters, whatever git started), and after g.waitDelay the pipes are closed
// even if a process that left the group still holds them, so that the
// call returns promptly.
func (g git) runCode(ctx context.Context, args ...string) ([]byte, int, error) {
	return g.runInput(ctx, nil, args...)
}

// runInput is runCode with stdin as git's standard input (nil for none).
func (g git) runInput(ctx context.Context, stdin []byte, args ...string) ([]byte, int, error) {
	var stdout bytes.Buffer
	code, err := g.exec(ctx, stdin, &stdout, nil, args...)
	if err != nil {
		// Some callers read the output of a command that failed (git
		// grep's exit 1); it is there when git ran to an exit.
		return stdout.Bytes(), code, err
	}
	return stdout.Bytes(), code, nil
}

// runStream runs git with stdin as its standard input and hands its
// standard output to consume as git writes it, so that output larger
// than memory can be read. When consume returns early, git's output is
// no longer read, and git, stopped by the closed pipe, is waited for; the
// error is consume's, else git's.
func (g git) runStream(ctx context.Context, stdin []byte, consume func(io.Reader) error, args ...string) error {
	_, err := g.exec(ctx, stdin, nil, consume, args...)
	return err
}

// exec runs git with args, stdin as its standard input (nil for none),
// and its standard output in stdout or, when consume is not nil, handed
// to consume as it comes (see runStream). It returns git's exit code and
// an error that includes git's standard error.
func (g git) exec(ctx context.Context, stdin []byte, stdout *bytes.Buffer, consume func(io.Reader) error, args ...string) (int, error) {
	if err := ctx.Err(); err != nil {
		return -1, fmt.Errorf("auto-commit: git %s not run: %w", args[0], err)
	}
	cctx, cancel := context.WithTimeoutCause(ctx, g.timeout, errTimedOut)
	defer cancel()
	cmd := exec.CommandContext(cctx, g.prog.git, append(append([]string{}, hardening...), args...)...)
	cmd.Args[0] = "git"
	cmd.Dir = g.dir
	cmd.Env = environ(g.prog.path, g.env)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if stdout == nil {
		stdout = &bytes.Buffer{}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// The group is the one git leads (Setpgid): its id is git's pid.
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
	cmd.WaitDelay = cmp.Or(g.waitDelay, defaultWaitDelay)
	var err error
	if consume == nil {
		cmd.Stdout = stdout
		err = cmd.Run()
	} else {
		err = runConsumed(cmd, consume)
	}
	if err == nil {
		return 0, nil
	}
	var consumeErr *consumeError
	if errors.As(err, &consumeErr) && ctx.Err() == nil && !errors.Is(context.Cause(cctx), errTimedOut) {
		return -1, consumeErr.err
	}
	if errors.Is(err, exec.ErrNotFound) {
		return -1, fmt.Errorf("auto-commit: %w; install git or turn auto-commit off", err)
	}
	code := -1
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	}
	switch {
	case ctx.Err() != nil:
		stdout.Reset()
		return code, fmt.Errorf("auto-commit: git %s stopped: %w", args[0], ctx.Err())
	case errors.Is(context.Cause(cctx), errTimedOut):
		stdout.Reset()
		return code, fmt.Errorf("auto-commit: git %s in %s did not finish within %s and was stopped (a filter or another git process holding the repository?); "+
			"raise the limit with the agent's -commit-timeout flag: %w", args[0], g.dir, g.timeout, errTimedOut)
	}
	detail := strings.TrimSpace(stderr.String())
	if detail == "" {
		detail = strings.TrimSpace(stdout.String())
	}
	detail = g.redact.String(detail)
	if detail != "" {
		return code, fmt.Errorf("auto-commit: git %s in %s: %w: %s", args[0], g.dir, err, detail)
	}
	return code, fmt.Errorf("auto-commit: git %s in %s: %w", args[0], g.dir, err)
}

// consumeError is the error a consumer of runStream returned.
type consumeError struct{ err error }

func (e *consumeError) Error() string { return e.err.Error() }

// runConsumed starts cmd with its standard output in a pipe that consume
// reads, then waits for cmd. cmd.Cancel kills git's group when the
// context is done, which ends consume's reads; a consumer that stops
// early closes the pipe, which makes git stop writing.
func runConsumed(cmd *exec.Cmd, consume func(io.Reader) error) error {
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	cerr := consume(out)
	// Whatever consume left unread: read no more, so that git ends.
	_ = out.Close()
	werr := cmd.Wait()
	if cerr != nil {
		return &consumeError{cerr}
	}
	return werr
}

// errTimedOut is the cause of a git command's context when its own
// deadline passed.
var errTimedOut = errors.New("git timed out")

// ownIndex returns g with an index of its own, empty, in a new temporary
// directory, so that the user's index is never touched, and the function
// that removes it; what names the operation in the error ("auto-commit",
// "undo").
func (c *Committer) ownIndex(g git, what string) (git, func(), error) {
	tmp, err := os.MkdirTemp("", "fsmgen-index-*")
	if err != nil {
		return g, nil, fmt.Errorf("%s in %s: %w; check that the temporary directory (TMPDIR) is writable", what, c.dir, err)
	}
	gi := g
	gi.env = append(slices.Clip(g.env), "GIT_INDEX_FILE="+filepath.Join(tmp, "index"))
	return gi, func() { _ = os.RemoveAll(tmp) }, nil
}

// asAgent returns g authoring and committing as AgentName <AgentEmail>.
func (g git) asAgent() git {
	g.env = append(slices.Clip(g.env), "GIT_AUTHOR_NAME="+AgentName, "GIT_AUTHOR_EMAIL="+AgentEmail,
		"GIT_COMMITTER_NAME="+AgentName, "GIT_COMMITTER_EMAIL="+AgentEmail)
	return g
}
