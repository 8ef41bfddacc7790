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

	"github.com/fsmgen/fsmgen/chat"
)

// drainGrace is how long the bash tool keeps reading output after the
// command's process group is gone, in case a process that left the group
// still holds the output pipe open.
const drainGrace = time.Second

// BashOptions configures the bash tool. The zero value gives the defaults.
type BashOptions struct {
	// OutputLimit caps the bytes of output returned; 0 means
	// DefaultBashOutputLimit.
	OutputLimit int
	// ProgressEvery is how often progress is reported while the command
	// runs; 0 means DefaultProgressEvery.
	ProgressEvery time.Duration
}

// Bash returns the bash tool, which runs a shell command with the
// workspace root as its working directory.
//
// The command runs as `bash -c COMMAND` in a process group of its own, with
// standard input closed and standard output and error combined. When it
// ends, and when its context is done, the whole group is killed with
// SIGKILL, so no process it started in the background outlives the call
// (unless it left the group, e.g. with setsid).
func Bash(ws *Workspace, opt BashOptions) Tool {
	if opt.OutputLimit <= 0 {
		opt.OutputLimit = DefaultBashOutputLimit
	}
	if opt.ProgressEvery <= 0 {
		opt.ProgressEvery = DefaultProgressEvery
	}
	return bashTool{ws: ws, opt: opt}
}

// bashTool implements bash.
type bashTool struct {
	ws  *Workspace
	opt BashOptions
}

// bashUsage describes bash's arguments in error messages.
const bashUsage = `{"command": "go test ./..."}`

// Spec implements Tool.
func (t bashTool) Spec() chat.ToolSpec {
	return chat.ToolSpec{
		Name: "bash",
		Description: "Run a shell command with `bash -c` in the workspace root and return its combined standard output and standard error. " +
			"Use it to build, run tests, search (grep -rn, find), inspect git history, and run programs. " +
			"The command is not interactive: standard input is empty and nothing can prompt, so pass flags such as -y or --no-pager. " +
			"A non-zero exit status is reported as an error together with the output. " +
			fmt.Sprintf("Output over %d KiB is cut in the middle, keeping its beginning and end, with a note. ", t.opt.OutputLimit>>10) +
			"The command has a time limit; when it is exceeded, or when the command finishes, every process it started, including background ones, is killed, " +
			"so do not start servers or watchers expecting them to keep running. " +
			"Each call starts a fresh shell in the workspace root: cd and exported variables do not carry over between calls. " +
			"Prefer read_file, list_files and edit_file for reading and changing files.",
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The bash command line to run, e.g. \"go test ./... 2>&1 | tail -50\". Several commands can be joined with && or newlines."}
  },
  "required": ["command"],
  "additionalProperties": false
}`),
	}
}

// Run implements Tool.
func (t bashTool) Run(ctx context.Context, raw json.RawMessage, progress func(chat.ToolProgress)) (string, error) {
	var args struct {
		Command *string `json:"command"`
	}
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

	r, w, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("start bash: create the output pipe: %w", err)
	}
	cmd := exec.Command("bash", "-c", *args.Command)
	cmd.Dir = t.ws.Root()
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat")
	cmd.Stdout, cmd.Stderr = w, w // an *os.File: Wait does not wait for the pipe to drain
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return "", fmt.Errorf("start bash: %w; check that bash is installed", err)
	}
	w.Close() // the children hold the write end now
	pgid := cmd.Process.Pid
	start := time.Now()

	out := newCappedBuffer(t.opt.OutputLimit)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		_, _ = io.Copy(out, r) // ends at EOF, or when r is closed below
	}()
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	ticker := time.NewTicker(t.opt.ProgressEvery)
	defer ticker.Stop()
	var waitErr, stopErr error
loop:
	for {
		select {
		case waitErr = <-waitDone:
			break loop
		case <-ticker.C:
			elapsed := time.Since(start).Round(time.Second)
			lines := out.lines()
			progress(chat.ToolProgress{
				Message:        fmt.Sprintf("running %s, %d lines of output", elapsed, lines),
				UnitsProcessed: lines,
			})
		case <-ctx.Done():
			killGroup(pgid)
			waitErr = <-waitDone
			stopErr = ctx.Err()
			break loop
		}
	}
	// Kill whatever the command left running in the background. The group
	// keeps its id while any member is alive, so this cannot hit a stranger.
	killGroup(pgid)
	drain := time.NewTimer(drainGrace)
	select {
	case <-readDone:
		drain.Stop()
	case <-drain.C:
		r.Close() // a process outside the group still holds the pipe: stop reading
		<-readDone
	}
	r.Close()

	elapsed := time.Since(start).Round(time.Millisecond)
	output := out.String()
	if stopErr != nil {
		return output, fmt.Errorf("command stopped after %s and its whole process group was killed: %w", elapsed, stopErr)
	}
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil:
		if output == "" {
			output = "(no output)"
		}
		return output, nil
	case errors.As(waitErr, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return output, fmt.Errorf("command was killed by signal %s", ws.Signal())
		}
		return output, fmt.Errorf("command exited with status %d", exitErr.ExitCode())
	default:
		return output, fmt.Errorf("wait for bash: %w", waitErr)
	}
}

// killGroup sends SIGKILL to every process of the group pgid.
func killGroup(pgid int) {
	// ESRCH (nothing left to kill) is the normal case after a clean exit.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
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
