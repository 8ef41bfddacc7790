package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/fsmgen/fsmgen/agent/internal/progpath"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
)

// probeTimeout bounds the trial run of bubblewrap in New.
const probeTimeout = 30 * time.Second

// offAdvice ends every error that leaves commands unconfinable.
const offAdvice = "or run with -sandbox=off to run bash unconfined"

// Options configures a [Sandbox]. The zero value asks for the defaults:
// mode auto, no network, the default hidden paths, no persistent cache.
type Options struct {
	// Mode chooses whether commands are confined; "" means Auto.
	Mode Mode
	// Network lets confined commands reach the network; by default they
	// only have a loopback interface of their own.
	Network bool
	// CacheDir, if set, is a directory (created if need be) that holds a
	// cache for each workspace: confined commands may write to their
	// workspace's, which persists between them, and XDG_CACHE_HOME points
	// at it and GOCACHE at its go-build subdirectory, so that builds stay
	// incremental (see [Sandbox.CacheDir]). When empty, the cache is in
	// the command's private /tmp and lost when it ends.
	CacheDir string
	// Hidden lists the paths confined commands must not see: absolute, or
	// starting with "~/" for the home directory ("~" is the home
	// directory itself), wildcards allowed. nil means DefaultHidden(),
	// which starts with the home directories (an empty list hides
	// nothing); to add paths, append to DefaultHidden().
	Hidden []string
	// Expose lists the paths confined commands see although a hidden
	// directory holds them (the home directory, mostly): read-only unless
	// said writable. Where a hidden path and an exposed one are nested,
	// the more specific one wins: exposing ~/.config shows it but for
	// ~/.config/gh, which DefaultHidden names. nil means DefaultExpose(nil)
	// (Go's module cache); to add paths, append to it. New fails when
	// a path does not exist.
	Expose []Exposure
	// Env adds variable names to the allow-list of DefaultEnv (a trailing
	// "*" stands for any suffix). Names that look secret are still
	// dropped.
	Env []string
	// Redactor knows the agent's secrets: a variable whose value holds
	// one never reaches a command, whatever its name. nil knows none.
	Redactor *redact.Redactor
	// Limits bounds what each confined command may use; nil means
	// DefaultLimits(). A zero field sets no limit. Commands run with mode
	// off are not limited.
	Limits *Limits
	// Bwrap is the bubblewrap program; "" means "bwrap". Programs finds
	// it.
	Bwrap string
	// Programs finds bubblewrap, the shell that sets the limits and the
	// program of every command given by name (see [Command].Args) on the
	// host, never in a directory the model's commands can write. nil
	// means one made from the PATH of Environ that skips the directories
	// of [Options.Writable]; it knows no workspace, which the agent's
	// own resolver does.
	Programs *progpath.Resolver
	// Environ returns the environment commands take their variables from;
	// nil means os.Environ, read at each command's start.
	Environ func() []string
	// ReadOnlyWorkspace mounts each command's workspace read-only: it can
	// read the project and write only its private /tmp and its build
	// cache (the agent's plan mode). Unconfined (mode off) nothing can
	// keep a command from writing, so every command is then refused.
	ReadOnlyWorkspace bool
}

// Sandbox starts commands confined as its [Options] say. It is immutable
// and safe for concurrent use.
type Sandbox struct {
	mode     Mode
	disabled error  // why commands are refused; nil when they run
	bwrap    string // the bubblewrap program, when commands are confined
	version  string // what `bwrap --version` printed
	lay      layout // without the workspace and its cache, which are per command
	cache    string // the base of the workspaces' caches, every link resolved
	env      envSpec
	environ  func() []string
	filter   []byte // the seccomp filter (see seccomp.go); nil where there is none
	limits   Limits
	pids     *pidsCgroups // where commands get a pids cgroup; nil for RLIMIT_NPROC alone
	pidsWhy  error        // why there is no pids cgroup, when the agent runs as root
	// tmpUnlimited says that this bubblewrap cannot size /tmp (before 0.7).
	tmpUnlimited bool
	// readOnly mounts the workspace read-only (Options.ReadOnlyWorkspace).
	readOnly bool
	// programs finds programs on the host (Options.Programs); inside
	// finds those of commands, which must be visible to them: programs
	// without the directories of PATH hidden from confined commands.
	programs, inside *progpath.Resolver
	// shell is the bash that sets the limits, "" when there are none.
	shell string
}

// New returns the sandbox opt describes.
//
// In modes auto and bwrap it finds bubblewrap and proves that it works by
// running it once, confined as commands will be. When that fails, mode
// bwrap returns the error; mode auto returns a sandbox whose commands are
// all refused, with the reason in [Sandbox.Disabled]. An error is also
// returned for invalid options and when ctx ends first.
func New(ctx context.Context, opt Options) (*Sandbox, error) {
	mode := opt.Mode
	if mode == "" {
		mode = Auto
	}
	if _, err := ParseMode(string(mode)); err != nil {
		return nil, err
	}
	s := &Sandbox{
		mode:     mode,
		environ:  opt.Environ,
		readOnly: opt.ReadOnlyWorkspace,
		env:      envSpec{network: opt.Network, extra: opt.Env, redactor: opt.Redactor},
	}
	if s.environ == nil {
		s.environ = os.Environ
	}
	s.programs = opt.Programs
	if s.programs == nil {
		s.programs = progpath.New(progpath.Options{PATH: pathOf(s.environ()), Writable: opt.Writable()})
	}
	s.inside = s.programs
	if mode == Off {
		s.env.network = true // nothing stops it; the proxy variables are useful
		return s, nil
	}

	hidden := opt.Hidden
	if hidden == nil {
		hidden = defaultHidden
	}
	home, _ := os.UserHomeDir() // without one, "~/" paths hide nothing
	expanded, err := expandHidden(hidden, home)
	if err != nil {
		return nil, err
	}
	filter, err := seccompFilter(runtime.GOARCH)
	if err != nil {
		return nil, err
	}
	s.filter = filter
	expose := opt.Expose
	if expose == nil {
		expose = DefaultExpose(s.environ())
	}
	exposed, err := expandExposures(expose, home)
	if err != nil {
		return nil, err
	}
	s.limits = DefaultLimits()
	if opt.Limits != nil {
		s.limits = *opt.Limits
	}
	if s.limits.Processes > 0 && os.Geteuid() == 0 {
		s.pids, s.pidsWhy = findPidsCgroups()
	}
	s.lay = layout{network: opt.Network, hidden: expanded, expose: exposed, seccomp: filter != nil, procKeys: existing(procKeys),
		tmpSize: s.limits.TmpSize}
	if opt.CacheDir != "" {
		abs, err := filepath.Abs(opt.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("sandbox cache directory %q: %w", opt.CacheDir, err)
		}
		s.cache = abs
	}

	s.inside = s.programs.Without("hidden from sandboxed commands; -"+FlagExpose+" shows it", s.hiddenPATH()...)

	if err := s.detect(ctx, opt.Bwrap); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("check the sandbox: %w", context.Cause(ctx))
		}
		if mode == Bwrap {
			return nil, err
		}
		s.disabled = err
		s.bwrap = ""
	}
	return s, nil
}

// Detect finds bubblewrap (bwrap, or "bwrap" on PATH when empty) and
// proves that it works here by running it once, confined like a command
// with the default options. It returns the program's path, or an error
// that says what is wrong and what to do.
func Detect(ctx context.Context, bwrap string) (string, error) {
	s, err := New(ctx, Options{Mode: Bwrap, Bwrap: bwrap})
	if err != nil {
		return "", err
	}
	return s.bwrap, nil
}

// detect sets s.bwrap, s.version and s.lay.userns from a trial run.
func (s *Sandbox) detect(ctx context.Context, bwrap string) error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("the sandbox needs Linux (bubblewrap), not %s; %s", runtime.GOOS, offAdvice)
	}
	name := bwrap
	if name == "" {
		name = "bwrap"
	}
	path, err := s.programs.Look(name)
	if err != nil {
		where, skipped := "", ""
		if bwrap != "" {
			where = " at " + bwrap
		}
		var nf *progpath.NotFoundError
		switch {
		case !errors.As(err, &nf):
			return fmt.Errorf("bubblewrap: %w; install the bubblewrap package (apt install bubblewrap) in a system directory %s", err, offAdvice)
		case len(nf.Skipped) > 0:
			skipped = " (the agent never runs one from a directory its commands can write: skipped " + strings.Join(nf.Skipped, "; ") + ")"
		}
		return fmt.Errorf("bubblewrap is not installed%s%s: install the bubblewrap package (apt install bubblewrap) %s", where, skipped, offAdvice)
	}
	if l := s.limits; l.Memory > 0 || l.Processes > 0 || l.FileSize > 0 || l.CPU > 0 {
		// The limits are set by a shell, which must be the system's:
		// one planted on PATH would set none.
		if s.shell, err = s.inside.Look("bash"); err != nil {
			return fmt.Errorf("the sandbox cannot set its limits here: %w %s", err, offAdvice)
		}
	}
	s.bwrap = path
	if err := s.setupCache(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	// First with nested user namespaces disabled (bubblewrap 0.8 and
	// later, and only where a user namespace can be made), then without.
	var msg string
	for _, userns := range []bool{true, false} {
		s.lay.userns = userns
		out, err := s.probe(ctx)
		if err != nil && s.lay.tmpSize > 0 && strings.Contains(err.Error(), "--size") {
			// Bubblewrap before 0.7 cannot size a tmpfs: /tmp is not limited.
			s.lay.tmpSize, s.tmpUnlimited = 0, true
			out, err = s.probe(ctx)
		}
		if err == nil {
			s.version = out
			return nil
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		msg = err.Error()
	}
	if strings.Contains(msg, limitsArg0+":") {
		return fmt.Errorf("the sandbox cannot set its limits here: %s; check that bash is installed %s", msg, offAdvice)
	}
	if strings.Contains(strings.ToLower(msg), "seccomp") {
		return fmt.Errorf("bubblewrap cannot install the sandbox's seccomp filter here: %s; use a kernel with seccomp filters (CONFIG_SECCOMP_FILTER) %s", msg, offAdvice)
	}
	return fmt.Errorf("bubblewrap cannot create namespaces here: %s; allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu an AppArmor profile for bwrap) %s", msg, offAdvice)
}

// probe runs `bwrap --version` inside the sandbox and returns what it
// printed, or an error holding bubblewrap's message.
func (s *Sandbox) probe(ctx context.Context) (string, error) {
	var out bytes.Buffer
	p, err := s.start(Command{Dir: "/", Args: []string{s.bwrap, "--version"}, Stdout: &out, Stderr: &out}, "")
	if err != nil {
		return "", err
	}
	stop := context.AfterFunc(ctx, p.Kill)
	defer stop()
	err = p.Wait()
	text := strings.TrimSpace(out.String())
	if err != nil || !strings.HasPrefix(text, "bubblewrap") {
		if text == "" && err != nil {
			text = err.Error()
		}
		return "", errors.New(text)
	}
	return text, nil
}

// Mode returns the mode asked for.
func (s *Sandbox) Mode() Mode { return s.mode }

// Confined reports whether commands run inside bubblewrap.
func (s *Sandbox) Confined() bool { return s.bwrap != "" }

// Network reports whether commands can reach the network: always with
// mode off, and when Options.Network allows it otherwise.
func (s *Sandbox) Network() bool { return s.env.network }

// ReadOnlyWorkspace reports whether commands see their workspace
// read-only (Options.ReadOnlyWorkspace): they can change nothing of it.
func (s *Sandbox) ReadOnlyWorkspace() bool { return s.readOnly }

// Disabled returns why commands are refused — mode auto found no working
// bubblewrap — or nil when they run. The agent prints it at start.
func (s *Sandbox) Disabled() error { return s.disabled }

// String describes the sandbox in a few words, for a start-up message.
func (s *Sandbox) String() string {
	switch {
	case s.disabled != nil:
		return "disabled: " + s.disabled.Error()
	case !s.Confined():
		return "off: commands run unconfined"
	}
	net := "no network"
	if s.env.network {
		net = "network allowed"
	}
	if s.readOnly {
		net += ", workspace read-only"
	}
	return fmt.Sprintf("%s (%s), %s; limits: %s", s.version, s.bwrap, net, s.LimitsString())
}

// LimitsString describes the limits of confined commands and says which
// do not hold here, and why.
func (s *Sandbox) LimitsString() string {
	text := s.limits.String()
	var not []string
	if s.limits.Processes > 0 {
		switch {
		case s.pids != nil:
			text = strings.Replace(text, " processes", " processes (a pids cgroup)", 1)
		case os.Geteuid() == 0:
			not = append(not, fmt.Sprintf("processes, as root is exempt from RLIMIT_NPROC and no pids cgroup can be made (%v)", s.pidsWhy))
		case !s.lay.userns:
			not = append(not, "processes, as without a user namespace (a setuid bubblewrap) RLIMIT_NPROC would count all of your processes")
		}
	}
	if s.tmpUnlimited {
		not = append(not, "the size of /tmp, which this bubblewrap cannot set (0.7 or later can)")
	}
	if len(not) > 0 {
		text += "; not limited here: " + strings.Join(not, "; ")
	}
	return text
}

// Limits returns the limits of confined commands.
func (s *Sandbox) Limits() Limits { return s.limits }

// enforced returns the limits as they are set on a command: without the
// process limit where it cannot hold, so that it neither fails every fork
// of an ordinary user with a setuid bubblewrap (RLIMIT_NPROC would count
// all of the user's processes) nor is said to have been reached by root's
// commands, which it does not bind.
func (s *Sandbox) enforced() Limits {
	l := s.limits
	if s.pids == nil && (os.Geteuid() == 0 || !s.lay.userns) {
		l.Processes = 0
	}
	return l
}

// Command is one command to start.
type Command struct {
	// Workspace is the directory the command may write to: absolute, not
	// "/". It may be empty for a command that writes nothing, when Dir is
	// set.
	Workspace string
	// Dir is the working directory, absolute; "" means Workspace.
	Dir string
	// Args is the program and its arguments, e.g. {"bash", "-c", script}.
	// A program given by name (no slash) is found, unconfined, by
	// [Sandbox.Look] (never in a directory of PATH the model's commands
	// can write); confined, inside the sandbox through the PATH commands
	// see, as the model's own commands find theirs: it runs confined
	// either way. Its name stays the command's argv[0].
	Args []string
	// Stdout and Stderr receive the command's output; nil discards it.
	// Give an *os.File so that Wait does not wait for the output to be
	// copied.
	Stdout, Stderr io.Writer
	// Stdin is the command's standard input; nil means empty. A
	// long-lived server the agent talks to over its standard input and
	// output (an MCP server) gets a pipe here; give an *os.File.
	Stdin io.Reader
	// Env sets variables for this command whatever their names: the
	// caller grants them (an MCP server's entry in the agent's config
	// file names those it needs, a token say). The sandbox's own
	// variables (TMPDIR, the caches) win over them.
	Env map[string]string
	// Masked lists files (absolute paths; links are followed) the command
	// reads [MaskNotice] in place of, and cannot change, move or remove:
	// the files of the workspace that hold the agent's API key. Those
	// that are no regular file, or inside a hidden directory, are
	// skipped.
	Masked []string
}

// Start starts c, confined as the sandbox says, with the curated
// environment, in a session of its own (without a controlling terminal).
// The caller must call Wait.
//
// The command gets standard input, output and error as c says, and no
// other file descriptor of the agent: Start first marks every descriptor
// of the process from 3 up close-on-exec (process-wide, see the package
// doc), so that one the agent inherited without the flag cannot take a
// command around the sandbox.
func (s *Sandbox) Start(c Command) (*Process, error) {
	if s.disabled != nil {
		return nil, fmt.Errorf("commands are disabled because the sandbox is unavailable: %w", s.disabled)
	}
	if s.readOnly && !s.Confined() {
		return nil, errors.New("commands are refused: the workspace must stay read-only and, unconfined (-sandbox off), nothing keeps a command from writing it; use -sandbox auto or bwrap")
	}
	if c.Workspace != "" && (!filepath.IsAbs(c.Workspace) || filepath.Clean(c.Workspace) == "/") {
		return nil, fmt.Errorf("workspace %q: give an absolute directory other than /", c.Workspace)
	}
	if c.Dir != "" && !filepath.IsAbs(c.Dir) {
		return nil, fmt.Errorf("working directory %q: give an absolute directory", c.Dir)
	}
	if c.Workspace == "" && c.Dir == "" {
		return nil, errors.New("no workspace and no working directory given; give the workspace")
	}
	cache := s.CacheDir(c.Workspace)
	if cache != "" {
		if err := setupWorkspaceCache(cache); err != nil {
			return nil, err
		}
	}
	return s.start(c, cache)
}

// start starts c without checking it, with cache as its cache directory
// ("" for one in its private /tmp).
func (s *Sandbox) start(c Command, cache string) (*Process, error) {
	if len(c.Args) == 0 {
		return nil, errors.New("no command given")
	}
	dir := c.Dir
	if dir == "" {
		dir = c.Workspace
	}
	argv := c.Args
	prog := argv[0] // the program run on the host
	if !s.Confined() && !strings.Contains(prog, "/") {
		p, err := s.inside.Look(prog)
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", prog, err)
		}
		prog = p
	}
	env := s.env
	var writable []string // what a confined command may write
	if len(c.Env) > 0 {
		env.set = maps.Clone(c.Env)
	}
	if s.Confined() {
		lay := s.lay
		if c.Workspace != "" {
			lay.workspace = filepath.Clean(c.Workspace)
			if s.readOnly {
				lay.readOnly = []string{lay.workspace}
			} else {
				lay.writable = []string{lay.workspace}
			}
		}
		lay.masked = c.Masked
		if cache != "" {
			lay.writable = append(lay.writable, cache)
		} else {
			cache = filepath.Join("/tmp", ".cache")
		}
		if env.set == nil {
			env.set = map[string]string{}
		}
		maps.Copy(env.set, map[string]string{"TMPDIR": "/tmp", "GOTMPDIR": ""})
		// From what commands may see of the environment: a GOPROXY
		// holding a password is not (see curate).
		maps.Copy(env.set, toolchainEnv(cache, curate(s.environ(), env), func(p string) bool {
			_, err := os.Stat(p)
			return err == nil && s.HiddenBy(p) == ""
		}))
		argv = append([]string{s.bwrap}, lay.args(dir, s.enforced().wrap(s.shell, argv))...)
		prog = s.bwrap
		writable = writableDirs(lay)
	}
	cmd := exec.Command(prog, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir = dir
	cmd.Env = curate(s.environ(), env)
	cmd.Stdout, cmd.Stderr, cmd.Stdin = c.Stdout, c.Stderr, c.Stdin
	// A session of its own: no controlling terminal, so that, even
	// unconfined, it can neither read the user's keystrokes nor write to
	// their terminal through /dev/tty; and a process group of its own,
	// the session's, which Kill kills.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if s.Confined() {
		// bubblewrap's --die-with-parent holds from when bubblewrap has
		// started; this, set before it runs, also covers an agent killed
		// as it starts a command (which bubblewrap would outlive).
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if s.Confined() && s.filter != nil {
		// The filter goes to bubblewrap through a pipe (fd 3, see
		// layout.args), written in full before the start: it is far
		// smaller than a pipe's buffer.
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("start %s: pass the seccomp filter: %w", argv[0], err)
		}
		_, err = w.Write(s.filter)
		w.Close()
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("start %s: pass the seccomp filter: %w", argv[0], err)
		}
		defer r.Close() // the child has its copy once started
		cmd.ExtraFiles = []*os.File{r}
	}
	if err := CloseInheritedFDs(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p := &Process{cmd: cmd, confined: s.Confined(), done: make(chan struct{}), limits: s.enforced(), tmpUnlimited: s.tmpUnlimited}
	if s.Confined() {
		p.disk = newDiskWatch(s.limits.Disk, writable)
	}
	if s.Confined() && s.pids != nil {
		cg, err := s.pids.create(s.limits.Processes)
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", argv[0], err)
		}
		p.cgroup, p.pidsCgroup = cg, true
	}
	started := make(chan error, 1)
	go p.run(started)
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	return p, nil
}
