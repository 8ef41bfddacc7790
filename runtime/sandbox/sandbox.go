package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fsmgen/fsmgen/internal/atomicfile"
	"github.com/fsmgen/fsmgen/runtime/redact"
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
	// Bwrap is the bubblewrap program; "" means "bwrap" on PATH.
	Bwrap string
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
	path, err := exec.LookPath(name)
	if err != nil {
		where := ""
		if bwrap != "" {
			where = " at " + bwrap
		}
		return fmt.Errorf("bubblewrap is not installed%s: install the bubblewrap package (apt install bubblewrap) %s", where, offAdvice)
	}
	if path, err = filepath.Abs(path); err != nil {
		return fmt.Errorf("bubblewrap %q: %w", name, err)
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

// setupCache creates the base cache directory and resolves its links.
// Only New calls it.
func (s *Sandbox) setupCache() error {
	if s.cache == "" {
		return nil
	}
	if err := os.MkdirAll(s.cache, 0o700); err != nil {
		return fmt.Errorf("create the sandbox cache directory: %w; choose another one", err)
	}
	real, err := filepath.EvalSymlinks(s.cache)
	if err != nil {
		return fmt.Errorf("sandbox cache directory: %w", err)
	}
	s.cache = real
	// The notice a command reads in place of a masked file. Commands see
	// the cache's directory read-only: only its workspace's is writable.
	notice := filepath.Join(s.cache, maskNoticeName)
	if old, err := os.ReadFile(notice); err != nil || string(old) != MaskNotice {
		if err := atomicfile.Write(notice, []byte(MaskNotice), 0o444); err != nil {
			return fmt.Errorf("write the notice of masked files in the sandbox cache directory: %w", err)
		}
	}
	s.lay.notice = notice
	return nil
}

// MaskNotice is what a confined command reads in place of a masked file
// (see [Command].Masked) when the sandbox has a cache directory (without
// one, a masked file cannot be read at all).
const MaskNotice = "fsmgen-agent: this file is masked: it holds the agent's API key, or is one of the agent's own logs or journals, which commands may not read. Leave it as it is.\n"

// maskNoticeName is the notice's file in the cache directory: the cache
// of no workspace, whose names end in a hash.
const maskNoticeName = "masked-file-notice.txt"

// maxCacheLabel bounds the readable part of a workspace cache's name.
const maxCacheLabel = 32

// CacheDir returns the cache directory of the commands run in workspace:
// a subdirectory of [Options.CacheDir] named after the workspace, its base
// name then 16 hexadecimal digits of the SHA-256 of its absolute path
// with every link resolved (e.g. "myproject-0123456789abcdef"). It
// returns "" when commands have no persistent cache: without
// Options.CacheDir, without a workspace, and when they are not confined.
//
// Each workspace has a cache of its own because a build cache is trusted:
// Go's GOCACHE does not check what it hands back, so a command that could
// write to another project's cache could plant build outputs in that
// project's builds. The same workspace gets the same directory in every
// sandbox, so builds stay incremental from one session to the next.
func (s *Sandbox) CacheDir(workspace string) string {
	if s.cache == "" || workspace == "" || !s.Confined() {
		return ""
	}
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	sum := sha256.Sum256([]byte(ws))
	label := strings.Map(func(r rune) rune {
		if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_' || r == '-') {
			return r
		}
		return '_'
	}, filepath.Base(ws))
	if len(label) > maxCacheLabel {
		label = label[:maxCacheLabel]
	}
	return filepath.Join(s.cache, strings.TrimLeft(label, ".")+"-"+hex.EncodeToString(sum[:8]))
}

// setupWorkspaceCache creates dir, a workspace's cache directory (see
// CacheDir), if need be, and checks that it is a directory of its own.
func setupWorkspaceCache(dir string) error {
	// The base too, in case it was removed since New.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the sandbox cache directory: %w; choose another one", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("sandbox cache directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("sandbox cache directory %s is not a directory (a link?); remove it", dir)
	}
	return nil
}

// HiddenPATH returns the directories of the commands' PATH that they
// cannot see, as the agent's environment gives it (a toolchain in the
// home directory, say, which must be exposed to be of use): none when
// commands are not confined.
func (s *Sandbox) HiddenPATH() []string {
	if !s.Confined() {
		return nil
	}
	var path string
	for _, kv := range curate(s.environ(), s.env) {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	ms := s.lay.mounts()
	var out []string
	for _, dir := range filepath.SplitList(path) {
		real, err := filepath.EvalSymlinks(dir)
		if !filepath.IsAbs(dir) || err != nil || slices.Contains(out, dir) {
			continue
		}
		var last *mount // the most specific mount that holds it
		for i := range ms {
			if within(real, ms[i].path) {
				last = &ms[i]
			}
		}
		if last != nil && (last.kind == hideDir || last.kind == hideFile) {
			out = append(out, dir)
		}
	}
	return out
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
		maps.Copy(env.set, map[string]string{
			"TMPDIR":         "/tmp",
			"GOTMPDIR":       "",
			"XDG_CACHE_HOME": cache,
			"GOCACHE":        filepath.Join(cache, "go-build"),
		})
		argv = append([]string{s.bwrap}, lay.args(dir, s.enforced().wrap(c.Args))...)
		writable = writableDirs(lay)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
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

// Process is a started command.
type Process struct {
	cmd          *exec.Cmd
	confined     bool
	limits       Limits
	tmpUnlimited bool
	cgroup       *commandCgroup // its pids cgroup; nil without
	pidsCgroup   bool           // it has a pids cgroup
	done         chan struct{}  // closed once the command was waited for
	err          error          // what cmd.Wait returned; set before done is closed
	pidsRefused  int            // tasks its pids cgroup refused; set before done is closed
	disk         *diskWatch     // the watcher of what it writes; nil without (its wrote is set before done is closed)
	killMu       sync.Mutex     // serialises Kill
}

// run starts the command and waits for it, on one locked OS thread.
// bubblewrap's --die-with-parent kills the sandbox when the thread that
// started it exits (Linux's parent-death signal follows the thread, not
// the process), and Go may end a thread; locking keeps that thread alive
// for as long as the command runs. With a pids cgroup, the thread joins
// the cgroup for the fork, so that bubblewrap starts in it (see
// cgroup.go); should it fail to leave, it stays locked, and so ends with
// this goroutine rather than serve other goroutines from the command's
// cgroup.
func (p *Process) run(started chan<- error) {
	runtime.LockOSThread()
	unlock := true
	defer func() {
		if unlock {
			runtime.UnlockOSThread()
		}
	}()
	cg := p.cgroup
	if cg != nil {
		if err := cg.enter(); err != nil {
			cg.remove()
			started <- fmt.Errorf("put the command in its pids cgroup: %w", err)
			return
		}
	}
	err := p.cmd.Start()
	if cg != nil && cg.leave() != nil {
		unlock = false
	}
	if err != nil {
		if cg != nil && unlock {
			cg.remove()
		}
		started <- err
		return
	}
	started <- nil
	stopWatch := p.watchDisk()
	p.err = p.cmd.Wait()
	stopWatch()
	if cg == nil {
		close(p.done)
		return
	}
	p.pidsRefused = cg.refused()
	close(p.done)
	// The cgroup empties a millisecond or so after the command's last
	// process is reaped: its removal need not hold up the command's end.
	if unlock {
		cg.remove()
	}
}

// watchDisk starts the command's disk watcher, if it has one, in a
// goroutine of its own, which kills the command when it wrote more than
// its limit; the function returned stops it and waits for it to end.
func (p *Process) watchDisk() (stop func()) {
	if p.disk == nil {
		return func() {}
	}
	quit, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		p.disk.run(quit, p.Kill)
	}()
	return func() {
		close(quit)
		<-ended
	}
}

// Wait waits for the command to exit and returns what [exec.Cmd.Wait]
// does: nil, or an *exec.ExitError. A confined command killed by signal N
// exits with status 128+N.
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// Done is closed once the command has exited and was waited for.
func (p *Process) Done() <-chan struct{} { return p.done }

// Kill kills the command and every process it started. Confined, that is
// everything in its PID namespace, which dies with bubblewrap (and with
// the command itself, so Kill has nothing to do once it has exited).
// Unconfined, it is the command's process group (that of its session):
// a process that left the group (setsid, set -m) survives.
func (p *Process) Kill() {
	p.killMu.Lock()
	defer p.killMu.Unlock()
	select {
	case <-p.done:
		if p.confined {
			return // the namespace is gone, and the group id may be reused
		}
	default:
	}
	// ESRCH (nothing left to kill) is the normal case after a clean exit.
	// While the command has not been waited for, its group id cannot be
	// reused; after, the group keeps its id while any member is alive.
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}
