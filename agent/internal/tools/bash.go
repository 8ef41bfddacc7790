package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
)

// drainGrace is how long the bash tool keeps reading output after the
// command is gone, in case a process that escaped the kill (possible only
// with the sandbox off) still holds the output pipe open.
const drainGrace = time.Second

// BashOptions configures the bash tool. The zero value gives the defaults.
type BashOptions struct {
	// OutputLimit caps the bytes of output returned; 0 means
	// DefaultBashOutputLimit.
	OutputLimit int
	// ProgressEvery is how often progress is reported while the command
	// runs; 0 means DefaultProgressEvery.
	ProgressEvery time.Duration
	// Sandbox confines the commands; nil means a sandbox with the default
	// options (mode auto: bubblewrap, or no bash at all), detected at the
	// first call.
	Sandbox *sandbox.Sandbox
	// GitGuard, when set, is checked after every command: what the
	// command changed of the workspace's git repositories is put back,
	// and the output says so (see [GitGuard]).
	GitGuard *GitGuard
}

// Bash returns the bash tool, which runs a shell command with the
// workspace root as its working directory.
//
// The command runs as `bash -c COMMAND` through the sandbox (see package
// sandbox for what it confines in each mode), with standard input empty,
// standard output and error combined, no other file descriptor of the
// agent, no controlling terminal, and the sandbox's curated environment. When it ends, and when its context is done, every process
// it started is killed: with the sandbox, all of its PID namespace; with
// the sandbox off, its process group (a process that left the group, e.g.
// with setsid, survives). When the sandbox is unavailable (mode auto
// without a working bubblewrap), every call fails saying why.
func Bash(ws *Workspace, opt BashOptions) Tool {
	if opt.OutputLimit <= 0 {
		opt.OutputLimit = DefaultBashOutputLimit
	}
	if opt.ProgressEvery <= 0 {
		opt.ProgressEvery = DefaultProgressEvery
	}
	return &bashTool{ws: ws, opt: opt}
}

// bashTool implements bash.
type bashTool struct {
	ws  *Workspace
	opt BashOptions

	mu       sync.Mutex       // guards detected
	detected *sandbox.Sandbox // the default sandbox, once detected (opt.Sandbox nil)
}

// sandbox returns the sandbox to run commands in: opt.Sandbox, or the
// default one, detected at the first call that gets this far.
func (t *bashTool) sandbox(ctx context.Context) (*sandbox.Sandbox, error) {
	if t.opt.Sandbox != nil {
		return t.opt.Sandbox, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.detected == nil {
		sb, err := sandbox.New(ctx, sandbox.Options{})
		if err != nil {
			return nil, fmt.Errorf("set up the sandbox for bash: %w", err)
		}
		t.detected = sb
	}
	return t.detected, nil
}

// Mutating implements Mutator: a command may change the workspace and
// more, unless its sandbox keeps the workspace read-only (plan mode).
func (t *bashTool) Mutating() bool {
	return t.opt.Sandbox == nil || !t.opt.Sandbox.ReadOnlyWorkspace()
}

// bashUsage describes bash's arguments in error messages.
const bashUsage = `{"command": "go test ./..."}`

// bashArgs are bash's arguments.
type bashArgs struct {
	Command *string `json:"command" jsonschema:"The bash command line to run, e.g. \"go test ./... 2>&1 | tail -50\". Several commands can be joined with && or newlines."`
}

// bashSchema is the JSON Schema of bashArgs.
var bashSchema = argsSchema[bashArgs]()

// Spec implements Tool. What it says of the sandbox follows opt.Sandbox
// (nil is described as the default: confined, no network).
func (t *bashTool) Spec() chat.ToolSpec {
	var b strings.Builder
	sb := t.opt.Sandbox
	if sb != nil && sb.Disabled() != nil {
		b.WriteString("This tool is disabled here because its sandbox is unavailable: every call fails. Use read_file, list_files and edit_file instead. ")
	}
	b.WriteString("Run a shell command with `bash -c` in the workspace root and return its combined standard output and standard error. " +
		"Use it to build, run tests, search (grep -rn, find), inspect git history, and run programs. " +
		"The command is not interactive: standard input is empty and nothing can prompt, so pass flags such as -y or --no-pager. " +
		"A non-zero exit status is reported as an error together with the output. ")
	fmt.Fprintf(&b, "Output over %d KiB is cut in the middle, keeping its beginning and end, with a note. ", t.opt.OutputLimit>>10)
	if sb == nil || sb.Confined() || sb.Disabled() != nil {
		if sb != nil && sb.ReadOnlyWorkspace() {
			b.WriteString("The command runs in a sandbox. The workspace is read-only: the command can read the project but not change it (writing there fails with Read-only file system). It can write only in /tmp, which is private to the call and emptied after it; ")
		} else {
			b.WriteString("The command runs in a sandbox. It can write only inside the workspace and in /tmp, which is private to the call and emptied after it; ")
		}
		b.WriteString("" +
			"the rest of the file system is read-only, the home directory is empty but for what the user chose to show, files holding credentials are hidden, " +
			"and a file holding the agent's API key, or one of the agent's own logs, reads as a notice (leave it as it is). " +
			"Setting the setuid or setgid bit of a file fails (Operation not permitted). " +
			"The repository's .git is read-only: inspect it with git status, git log and git diff, but do not run git add, git commit or anything else that changes it; " +
			"the agent commits your changes itself. ")
		if sb != nil && sb.Network() {
			b.WriteString("Network access is allowed. ")
		} else {
			b.WriteString("There is no network access, so whatever downloads (go get, go mod download, npm install, pip install, curl) fails unless what it needs is already present. ")
		}
		b.WriteString("The environment is minimal and holds no secrets. ")
		if sb != nil && sb.Confined() {
			fmt.Fprintf(&b, "Its use of the machine is limited (%s); a limit reached is said first in the result. ", sb.Limits())
		}
	}
	if t.opt.GitGuard != nil {
		b.WriteString("Do not create or change git repositories in the workspace (a .git, a submodule's configuration, a bare repository): " +
			"the agent undoes such changes after every command. ")
	}
	b.WriteString("The command has a time limit; when it is exceeded, or when the command finishes, every process it started, including background ones, is killed, " +
		"so do not start servers or watchers expecting them to keep running. " +
		"Each call starts a fresh shell in the workspace root: cd and exported variables do not carry over between calls. " +
		"Prefer read_file, list_files and edit_file for reading and changing files.")
	return chat.ToolSpec{
		Name:        "bash",
		Description: b.String(),
		InputSchema: bashSchema,
	}
}

// Run implements Tool. Once a command ran, the git guard, if any, puts
// back what it changed of the workspace's git repositories, even when
// the command failed or was stopped.
func (t *bashTool) Run(ctx context.Context, raw json.RawMessage, progress func(chat.ToolProgress)) (string, error) {
	ran := false
	out, err := t.runCommand(ctx, raw, progress, &ran)
	if ran && t.opt.GitGuard != nil {
		// Not cancelled with the call: what a command that was stopped
		// planted is undone too.
		if note := t.opt.GitGuard.CheckNote(context.WithoutCancel(ctx)); note != "" {
			out = strings.TrimSuffix(out, "(no output)") + "\n" + note
			out = strings.TrimPrefix(out, "\n")
		}
	}
	return out, err
}

// runCommand runs the command, setting *ran once it has started.
func (t *bashTool) runCommand(ctx context.Context, raw json.RawMessage, progress func(chat.ToolProgress), ran *bool) (string, error) {
	var args bashArgs
	if err := decodeArgs(raw, &args, bashUsage); err != nil {
		return "", err
	}
	if args.Command == nil {
		return "", missingArg("command", bashUsage)
	}
	if strings.TrimSpace(*args.Command) == "" {
		return "", errors.New("invalid arguments: command is empty; give a shell command to run")
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if progress == nil {
		progress = func(chat.ToolProgress) {}
	}
	sb, err := t.sandbox(ctx)
	if err != nil {
		return "", err
	}
	if why := sb.Disabled(); why != nil {
		return "", fmt.Errorf("bash is disabled because its sandbox is unavailable: %v; use read_file, list_files and edit_file instead", why)
	}
	return t.exec(ctx, sb, *args.Command, nil, nil, progress, ran)
}

// exec runs script with `bash -c` in sb, with stdin as its standard input
// (nil: empty) and env set for it, setting *ran once it has started.
func (t *bashTool) exec(ctx context.Context, sb *sandbox.Sandbox, script string, stdin io.Reader, env map[string]string, progress func(chat.ToolProgress), ran *bool) (string, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("start bash: create the output pipe: %w", err)
	}
	// An *os.File: Wait does not wait for the pipe to drain.
	p, err := sb.Start(sandbox.Command{Workspace: t.ws.Root(), Args: []string{"bash", "-c", script}, Stdout: w, Stderr: w,
		Stdin: stdin, Env: env, Masked: t.ws.maskedSet().Paths()})
	if err != nil {
		r.Close()
		w.Close()
		return "", fmt.Errorf("start bash: %w; check that bash is installed", err)
	}
	w.Close() // the command holds the write end now
	*ran = true
	start := time.Now()

	out := newCappedBuffer(t.opt.OutputLimit)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		_, _ = io.Copy(out, r) // ends at EOF, or when r is closed below
	}()

	// Progress: the command's new output as it comes, at most every
	// OutputEvery, and how long it has run every ProgressEvery.
	ticker := time.NewTicker(min(t.opt.ProgressEvery, OutputEvery))
	defer ticker.Stop()
	var reported int64 // the bytes of output last reported
	lastReport := start
	var waitErr, stopErr error
loop:
	for {
		select {
		case <-p.Done():
			waitErr = p.Wait()
			break loop
		case now := <-ticker.C:
			total := out.size()
			if total == reported && now.Sub(lastReport) < t.opt.ProgressEvery {
				continue
			}
			reported, lastReport = total, now
			elapsed := now.Sub(start).Round(time.Second)
			lines := out.lines()
			progress(chat.ToolProgress{
				Message:        fmt.Sprintf("running %s, %s of output", elapsed, plural(int(lines), "line")),
				UnitsProcessed: lines,
				Output:         out.lastLines(OutputLines),
			})
		case <-ctx.Done():
			p.Kill()
			waitErr = p.Wait()
			stopErr = ctx.Err()
			break loop
		}
	}
	// Kill whatever the command left running in the background (with the
	// sandbox, its PID namespace is gone already).
	p.Kill()
	drain := time.NewTimer(drainGrace)
	select {
	case <-readDone:
		drain.Stop()
	case <-drain.C:
		r.Close() // a process that escaped still holds the pipe: stop reading
		<-readDone
	}
	r.Close()

	elapsed := time.Since(start).Round(time.Millisecond)
	output := out.String()
	note := p.LimitNote([]byte(output))
	if stopErr != nil {
		what := "its whole process group was killed"
		if sb.Confined() {
			what = "every process it started was killed"
		}
		return output, fmt.Errorf("command stopped after %s and %s: %w", elapsed, what, stopErr)
	}
	if err := exitError(waitErr, sb.Confined()); err != nil {
		if note != "" {
			// First: the user sees the first line of a result.
			return output, fmt.Errorf("%s; %w", note, err)
		}
		return output, err
	}
	if note != "" {
		return "[" + note + "]\n" + output, nil
	}
	if output == "" {
		output = "(no output)"
	}
	return output, nil
}

// exitError turns how bash ended into the tool's error; nil on success.
func exitError(waitErr error, confined bool) error {
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil:
		return nil
	case errors.As(waitErr, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Errorf("command was killed by signal %s", ws.Signal())
		}
		code := exitErr.ExitCode()
		// bubblewrap reports a command killed by signal N as status 128+N,
		// as shells do.
		if confined && code > 128 && code < 128+65 {
			return fmt.Errorf("command exited with status %d: it was killed by signal %s", code, syscall.Signal(code-128))
		}
		return fmt.Errorf("command exited with status %d", code)
	default:
		return fmt.Errorf("wait for bash: %w", waitErr)
	}
}

// cappedBuffer collects a command's output, keeping the first and the last
// bytes within a limit and counting what it drops. It is safe for
// concurrent use.
type cappedBuffer struct {
	mu      sync.Mutex
	headCap int
	tailCap int
	head    []byte
	tail    []byte // the last bytes beyond head; may hold up to 2*tailCap
	total   int64
	nlines  int64
}

// newCappedBuffer returns a buffer that keeps at most limit bytes.
func newCappedBuffer(limit int) *cappedBuffer {
	head := limit / 2
	return &cappedBuffer{headCap: head, tailCap: limit - head}
}

// Write implements io.Writer; it never fails.
func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	b.total += int64(n)
	for _, c := range p {
		if c == '\n' {
			b.nlines++
		}
	}
	if room := b.headCap - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if len(p) >= b.tailCap {
		b.tail = append(b.tail[:0], p[len(p)-b.tailCap:]...)
		return n, nil
	}
	b.tail = append(b.tail, p...)
	if len(b.tail) > 2*b.tailCap {
		b.tail = append(b.tail[:0], b.tail[len(b.tail)-b.tailCap:]...)
	}
	return n, nil
}

// lines returns how many lines were written so far.
func (b *cappedBuffer) lines() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.nlines
}

// size returns how many bytes were written so far.
func (b *cappedBuffer) size() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// lastLines returns the last n lines written so far, a line still being
// written last (without a newline); a line a carriage return rewrote in
// place (a progress bar) as it was last written. At most 4 KiB of the
// end is read.
func (b *cappedBuffer) lastLines(n int) string {
	b.mu.Lock()
	end := b.tail
	if len(end) == 0 {
		end = b.head
	}
	end = end[max(0, len(end)-4<<10):]
	text := string(end)
	b.mu.Unlock()
	complete := strings.HasSuffix(text, "\n")
	all := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(end) == 4<<10 && len(all) > 1 {
		all = all[1:] // the first may be cut
	}
	all = all[max(0, len(all)-n):]
	for i, l := range all {
		l = strings.TrimSuffix(l, "\r")
		if j := strings.LastIndexByte(l, '\r'); j >= 0 {
			l = l[j+1:]
		}
		all[i] = l
	}
	s := strings.ToValidUTF8(strings.Join(all, "\n"), "\uFFFD")
	if complete && s != "" {
		s += "\n"
	}
	return s
}

// String returns the output kept, with a note where bytes were cut.
func (b *cappedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.total <= int64(b.headCap+b.tailCap) {
		return strings.ToValidUTF8(string(b.head)+string(b.tail), "\uFFFD")
	}
	tail := b.tail
	if len(tail) > b.tailCap {
		tail = tail[len(tail)-b.tailCap:]
	}
	omitted := b.total - int64(len(b.head)) - int64(len(tail))
	note := fmt.Sprintf("\n[... output cut: %d bytes in total, the %d bytes in the middle were dropped; showing the first %d and the last %d bytes ...]\n",
		b.total, omitted, len(b.head), len(tail))
	return strings.ToValidUTF8(string(b.head), "\uFFFD") + note + strings.ToValidUTF8(string(tail), "\uFFFD")
}
