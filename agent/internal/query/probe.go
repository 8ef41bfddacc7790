package query

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsmgen/fsmgen/agent/internal/progpath"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
)

// probeDir is the working directory of the toolchains' version commands:
// never the workspace, whose files (rust-toolchain.toml, go.mod's
// toolchain line, .tool-versions, .python-version, .nvmrc, mise.toml...)
// would otherwise choose, through a toolchain manager's shim, what runs.
const probeDir = "/"

// probeEnv is what a version command run unconfined gets besides PATH and
// HOME: none of the variables that redirect toolchains (RUSTUP_*, CARGO_*,
// GOFLAGS, ASDF_*, MISE_*, PYENV_VERSION, ...), and Go kept to the
// toolchain installed (GOTOOLCHAIN=local: no go.mod switches it, no
// toolchain is downloaded).
var probeEnv = []string{"LANG=C", "GOTOOLCHAIN=local"}

// probeSet is what a version command run in the sandbox gets over the
// sandbox's curated environment ("" removes a variable).
var probeSet = map[string]string{"LANG": "C", "GOTOOLCHAIN": "local", "GOFLAGS": "", "GOENV": "off"}

// probeOutput bounds what is kept of a version command's output.
const probeOutput = 4096

// prober runs the toolchains' version commands where nothing of the
// workspace can choose what runs: confined in sb when it confines
// commands, otherwise unconfined; from / either way, with an environment
// stripped of the variables that redirect toolchains.
type prober struct {
	sb        *sandbox.Sandbox // confines the commands; nil runs them unconfined
	hidden    []string         // directories of PATH the sandbox hides
	workspace string           // a program found in it is not run
	timeout   time.Duration
	// path is the PATH of a version command run unconfined: the
	// directories the model's commands cannot write.
	path string
}

// programs returns the resolver of the programs the facts run: the
// sandbox's, or one made from the environment's PATH and the workspace.
func (f Facts) programs() *progpath.Resolver {
	if f.Sandbox != nil {
		return f.Sandbox.Programs()
	}
	environ := f.Environ
	if environ == nil {
		environ = os.Environ
	}
	var path string
	for _, kv := range environ() {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	return progpath.New(progpath.Options{PATH: path, Workspace: f.Workspace})
}

// prober returns the prober of f, which finds programs with programs, and
// the line that tells the model how the versions were found.
func (f Facts) prober(programs *progpath.Resolver) (prober, string) {
	p := prober{workspace: f.Workspace, timeout: f.VersionTimeout, path: programs.PATH()}
	if p.timeout <= 0 {
		p.timeout = 3 * time.Second
	}
	sb := f.Sandbox
	var why string
	switch {
	case sb == nil:
		why = "no sandbox was given"
	case sb.Disabled() != nil:
		why = "the sandbox is unavailable: " + sb.Disabled().Error()
	case !sb.Confined():
		why = "the sandbox is off (-sandbox off)"
	default:
		p.sb, p.hidden = sb, sb.HiddenPATH()
		return p, "toolchains (version commands run inside the sandbox, from /):\n"
	}
	return p, "toolchains (version commands run outside the sandbox, as " + why + "; from / with only PATH, HOME, LANG=C and GOTOOLCHAIN=local set):\n"
}

// version returns the first line program prog prints about its version
// when run with args, or why there is none.
func (p prober) version(ctx context.Context, prog string, args []string) string {
	if p.workspace != "" && inside(prog, p.workspace) {
		return "version unknown (not run: it lies in the workspace)"
	}
	if slices.Contains(p.hidden, filepath.Dir(prog)) {
		return "version unknown (not run: its directory is hidden from the sandbox; -sandbox-expose shows it)"
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	out := &cappedBuffer{max: probeOutput}
	var err error
	if p.sb != nil {
		err = p.confined(ctx, out, prog, args)
	} else {
		cmd := exec.CommandContext(ctx, prog, args...)
		cmd.Dir = probeDir
		cmd.Env = append([]string{"PATH=" + p.path, "HOME=" + os.Getenv("HOME")}, probeEnv...)
		cmd.Stdout, cmd.Stderr = out, out
		cmd.WaitDelay = time.Second
		err = cmd.Run()
	}
	line, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
	switch {
	case ctx.Err() != nil:
		return "version unknown (it did not answer within " + p.timeout.String() + ")"
	case err != nil:
		return "version unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(line)
}

// confined runs prog with args in the sandbox, its output to out, and
// kills it when ctx ends.
func (p prober) confined(ctx context.Context, out *cappedBuffer, prog string, args []string) error {
	proc, err := p.sb.Start(sandbox.Command{Dir: probeDir, Args: append([]string{prog}, args...), Stdout: out, Stderr: out, Env: probeSet})
	if err != nil {
		return err
	}
	select {
	case <-proc.Done():
	case <-ctx.Done():
		proc.Kill()
	}
	if err := proc.Wait(); err != nil && ctx.Err() == nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return fmt.Errorf("it failed: %w", err)
		}
		return err
	}
	return nil
}

// inside reports whether path lies in dir, links resolved.
func inside(path, dir string) bool {
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	rel, err := filepath.Rel(real(dir), real(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// cappedBuffer keeps the first max bytes written to it, and is safe for
// concurrent use (a command's output and error go to one).
type cappedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

// Write implements io.Writer: it keeps what fits and claims all was
// written, so that the command is not stopped by a failed write.
func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// String returns what was kept.
func (b *cappedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
