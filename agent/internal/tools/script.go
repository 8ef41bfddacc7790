package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
)

// Script is a shell script the agent runs itself, confined as the bash
// tool's commands are: a hook the user configured, say.
type Script struct {
	// Command is the script, run with `bash -c` in the workspace root.
	Command string
	// Stdin is the script's standard input; nil means empty.
	Stdin []byte
	// Env sets variables for the script whatever their names; the
	// sandbox's own (TMPDIR, the caches) win over them. The caller must
	// keep secrets out of them.
	Env map[string]string
	// Sandbox confines the script. It must confine (bubblewrap): a
	// script never runs unconfined on the host, whatever -sandbox says.
	Sandbox *sandbox.Sandbox
	// OutputLimit caps the bytes of output returned, as the bash tool's
	// (its beginning and end are kept); 0 means DefaultBashOutputLimit.
	OutputLimit int
	// GitGuard, when set, is checked after the script ran, as after a
	// bash command: what it changed of the workspace's git repositories
	// is put back, and the output says so.
	GitGuard *GitGuard
	// Progress, when set, gets the script's progress as the bash tool
	// reports a command's.
	Progress func(chat.ToolProgress)
}

// ErrUnconfined is the error of a Script whose sandbox does not confine:
// the sandbox is off (-sandbox=off) or unavailable.
var ErrUnconfined = errors.New("it runs only in the sandbox, which is off or unavailable here (bubblewrap: apt install bubblewrap; -sandbox auto or bwrap)")

// RunScript runs s in the workspace ws through the bash tool's path
// (bubblewrap, the curated environment, the masks of the files holding
// the API key, the resource limits, the kill of every process it started
// when it ends or ctx is done) and returns its combined output, cut as a
// command's is, and an error when it could not run, failed (a non-zero
// status: "command exited with status N") or was stopped.
func RunScript(ctx context.Context, ws *Workspace, s Script) (string, error) {
	if strings.TrimSpace(s.Command) == "" {
		return "", errors.New("the script is empty")
	}
	sb := s.Sandbox
	switch {
	case sb == nil || sb.Disabled() != nil || !sb.Confined():
		return "", ErrUnconfined
	case ctx.Err() != nil:
		return "", ctx.Err()
	}
	limit := s.OutputLimit
	if limit <= 0 {
		limit = DefaultBashOutputLimit
	}
	t := &bashTool{ws: ws, opt: BashOptions{OutputLimit: limit, ProgressEvery: DefaultProgressEvery, Sandbox: sb, GitGuard: s.GitGuard}}
	progress := s.Progress
	if progress == nil {
		progress = func(chat.ToolProgress) {}
	}
	var stdin io.Reader
	if s.Stdin != nil {
		stdin = bytes.NewReader(s.Stdin)
	}
	ran := false
	out, err := t.exec(ctx, sb, s.Command, stdin, s.Env, progress, &ran)
	if ran && s.GitGuard != nil {
		if note := s.GitGuard.CheckNote(context.WithoutCancel(ctx)); note != "" {
			out = strings.TrimPrefix(strings.TrimSuffix(out, "(no output)")+"\n"+note, "\n")
		}
	}
	if err != nil && !ran {
		return out, fmt.Errorf("start it: %w", err)
	}
	return out, err
}
