package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// homePrefix starts a path that is relative to the home directory; "~"
// alone is the home directory.
const (
	homePrefix = "~/"
	tilde      = "~"
)

// defaultHidden is what DefaultHidden returns.
var defaultHidden = []string{
	// Home directories: the agent's user's and everyone's (all readable
	// when the agent runs as root). Commands see an empty, read-only home;
	// the workspace, its cache and what is exposed are mounted back.
	tilde, "/home", "/root",
	// Password hashes and host keys (readable when the agent runs as root).
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/ssh/ssh_host_*_key",
	// Sockets of daemons: Docker, D-Bus, databases, the user's ssh-agent
	// and gpg-agent under /run/user. A socket on a read-only mount can
	// still be connected to.
	"/run", "/var/run",
	// The rest hides, within a part of the home directory that is exposed
	// (Options.Expose), what is known to hold credentials.
	//
	// Keys, password stores and git's credentials and configuration
	// (tokens in remote URLs).
	"~/.ssh", "~/.gnupg", "~/.password-store", "~/.local/share/keyrings", "~/.pki",
	"~/.config/op", "~/.op", "~/.config/Bitwarden CLI", "~/.config/sops",
	"~/.netrc", "~/.git-credentials", "~/.config/git/credentials", "~/.gitconfig", "~/.config/git/config",
	// Forges and their CLIs.
	"~/.config/gh", "~/.config/hub", "~/.config/glab-cli",
	// Clouds and hosting: AWS, Azure, Google Cloud, Kubernetes, Docker and
	// Podman registries, Oracle Cloud, DigitalOcean, Hetzner, Fly.io,
	// Netlify, Vercel, Cloudflare, Stripe, ngrok, rclone, s3cmd, boto
	// (gsutil), Databricks, Snowflake, dbt.
	"~/.aws", "~/.azure", "~/.config/gcloud", "~/.kube", "~/.docker", "~/.config/containers/auth.json",
	"~/.oci", "~/.config/doctl", "~/.config/hcloud", "~/.fly",
	"~/.netlify", "~/.config/netlify", "~/.vercel", "~/.local/share/com.vercel.cli",
	"~/.wrangler", "~/.config/.wrangler", "~/.cloudflared", "~/.config/stripe",
	"~/.config/ngrok", "~/.ngrok2", "~/.config/rclone", "~/.s3cfg", "~/.boto",
	"~/.databrickscfg", "~/.snowflake", "~/.dbt/profiles.yml",
	// Package registries and build tools: npm, yarn, pip, Poetry, gem,
	// cargo, Composer, Maven, Gradle, Terraform, Vault.
	"~/.npmrc", "~/.yarnrc", "~/.yarnrc.yml", "~/.pypirc", "~/.config/pypoetry/auth.toml", "~/.gem/credentials",
	"~/.cargo/credentials", "~/.cargo/credentials.toml",
	"~/.composer/auth.json", "~/.config/composer/auth.json",
	"~/.m2/settings.xml", "~/.m2/settings-security.xml", "~/.gradle/gradle.properties",
	"~/.terraform.d/credentials.tfrc.json", "~/.terraformrc", "~/.vault-token",
	// Databases.
	"~/.pgpass", "~/.my.cnf",
	// AI tools: Claude Code, Codex, Gemini CLI, GitHub Copilot, Hugging
	// Face (current and legacy token files), Simon Willison's llm, aider,
	// and this agent's own threads and event logs.
	"~/.claude", "~/.claude.json", "~/.codex", "~/.gemini", "~/.config/github-copilot",
	"~/.cache/huggingface/token", "~/.cache/huggingface/stored_tokens", "~/.huggingface",
	"~/.config/io.datasette.llm", "~/Library/Application Support/io.datasette.llm",
	"~/.aider.conf.yml", "~/.aider.model.settings.yml", "~/.aider",
	"~/.local/share/fsmgen-agent",
	// Environment files and shell startup files, where people export API
	// keys. Non-interactive `bash -c` reads none of them, so hiding them
	// costs commands nothing.
	"~/.env", "~/.pam_environment", "~/.config/environment.d",
	"~/.bashrc", "~/.bashrc.d", "~/.bash_profile", "~/.bash_login", "~/.bash_aliases", "~/.profile",
	"~/.zshrc", "~/.zprofile", "~/.zshenv", "~/.zlogin", "~/.config/zsh", "~/.zsh", "~/.config/fish",
	// Histories (secrets typed on command lines) and browser profiles
	// (cookies, saved passwords).
	"~/.bash_history", "~/.zsh_history", "~/.local/share/fish/fish_history", "~/.local/share/atuin",
	"~/.python_history", "~/.node_repl_history", "~/.psql_history", "~/.mysql_history", "~/.rediscli_history",
	"~/.mozilla", "~/.config/google-chrome", "~/.config/chromium",
}

// DefaultHidden returns the paths hidden from confined commands by
// default. First the home directories: the agent's user's ("~"), /home
// and /root, so that commands see an empty, read-only home (deny by
// default: what a command may see there is exposed by name, see
// [Options.Expose]); then password hashes and host keys under /etc, /run
// and /var/run (daemons' sockets: Docker, D-Bus, databases, ssh-agent,
// gpg-agent). The rest of the list names, under the home directory
// ("~/"), what is known to hold credentials, and is hidden again when a
// part of the home that holds it is exposed: the credentials of ssh, gpg,
// password managers, git (and its configuration, whose remote URLs can
// hold tokens) and the forges' CLIs, the clouds' and hosting services'
// CLIs, package registries and build tools (npm, pip, cargo, Maven,
// Gradle, ...), databases and AI tools (Claude Code, Codex, Hugging Face,
// llm, aider, this agent's threads, ...), environment and shell startup
// files (~/.env, ~/.pam_environment, ~/.config/environment.d, ~/.bashrc,
// ~/.bashrc.d, ~/.profile, ~/.zshrc, ZDOTDIR's ~/.config/zsh, ...),
// histories and browser profiles.
//
// A hidden directory appears empty and read-only; a hidden file cannot be
// read. Paths that do not exist when a command starts are skipped; a path
// may hold the wildcards of [filepath.Match]. To hide more, append to
// this list (the agent adds its threads directory and event log).
func DefaultHidden() []string { return slices.Clone(defaultHidden) }

// expandHome makes p, a path as options give it, absolute: "~/x" becomes
// home/x and "~" home; ok is false when p is relative to a home that is
// unknown ("") or the root. A path that is neither is returned cleaned,
// whatever it is.
func expandHome(p, homeDir string) (string, bool) {
	rest, inHome := strings.CutPrefix(p, homePrefix)
	if p == tilde {
		rest, inHome = "", true
	}
	if !inHome {
		return filepath.Clean(p), true
	}
	if homeDir == "" || filepath.Clean(homeDir) == "/" {
		return "", false
	}
	return filepath.Join(homeDir, rest), true
}

// expandHidden checks the configured hidden paths and makes them absolute:
// "~/x" becomes home/x (and is dropped when home is unknown). It fails on
// a relative path or on "/".
func expandHidden(paths []string, homeDir string) ([]string, error) {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		abs, ok := expandHome(p, homeDir)
		if !ok {
			continue // no home directory: nothing of it to hide
		}
		if !filepath.IsAbs(abs) {
			return nil, fmt.Errorf("hidden path %q is neither absolute nor in the home directory; give an absolute path or one starting with ~/", p)
		}
		if abs == "/" {
			return nil, errors.New("hidden path \"/\" would hide everything; name the directories and files to hide")
		}
		out = append(out, abs)
	}
	return out, nil
}

// Exposure is a path that confined commands see although it lies in a
// hidden directory (the home directory, most often): read-only, or
// writable.
type Exposure struct {
	// Path is absolute, or starts with "~/" for the home directory ("~"
	// is the home directory itself).
	Path string
	// Writable lets commands change it; by default it is read-only.
	Writable bool
}

// String returns the exposure as ParseExposure reads it.
func (e Exposure) String() string {
	if e.Writable {
		return e.Path + ":rw"
	}
	return e.Path
}

// ParseExposure reads an exposure as the agent's -sandbox-expose flag
// gives it: a path, read-only, or a path and ":rw" for a writable one
// (":ro" says read-only explicitly). The path is absolute or starts with
// "~/".
func ParseExposure(s string) (Exposure, error) {
	e := Exposure{Path: s}
	if p, ok := strings.CutSuffix(s, ":rw"); ok {
		e = Exposure{Path: p, Writable: true}
	} else if p, ok := strings.CutSuffix(s, ":ro"); ok {
		e.Path = p
	}
	if e.Path == "" {
		return Exposure{}, fmt.Errorf("exposed path %q is empty; give a path, e.g. ~/.cargo/bin or ~/.npm:rw", s)
	}
	return e, nil
}

// DefaultExpose returns what confined commands see by default although
// it lies in a hidden directory: Go's module cache (GOMODCACHE, or
// GOPATH's pkg/mod, or ~/go/pkg/mod) and GOROOT when set, read-only, so
// that go build and go test work on the modules already downloaded. They
// are taken from environ (os.Environ() when nil) and kept when they
// exist. What `go env -w` wrote is not read, and commands do not see it
// either (it is in the hidden ~/.config/go/env): a module cache moved
// there must be exposed by hand, with that file if commands are to use
// the rest of it.
func DefaultExpose(environ []string) []Exposure {
	if environ == nil {
		environ = os.Environ()
	}
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	var paths []string
	if mc := userModCache(env); mc != "" {
		paths = append(paths, mc)
	}
	if filepath.IsAbs(env["GOROOT"]) {
		paths = append(paths, env["GOROOT"])
	}
	var out []Exposure
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			out = append(out, Exposure{Path: filepath.Clean(p)})
		}
	}
	return out
}

// userModCache returns the user's Go module cache as env gives it
// (GOMODCACHE, or GOPATH's pkg/mod, or ~/go/pkg/mod); "" when unknown.
func userModCache(env map[string]string) string {
	switch gopath, _, _ := strings.Cut(env["GOPATH"], string(filepath.ListSeparator)); {
	case filepath.IsAbs(env["GOMODCACHE"]):
		return env["GOMODCACHE"]
	case filepath.IsAbs(gopath):
		return filepath.Join(gopath, "pkg", "mod")
	case filepath.IsAbs(env["HOME"]):
		return filepath.Join(env["HOME"], "go", "pkg", "mod")
	}
	return ""
}

// expandExposures makes the exposures' paths absolute and checks that
// they exist.
func expandExposures(exposures []Exposure, homeDir string) ([]Exposure, error) {
	out := make([]Exposure, 0, len(exposures))
	for _, e := range exposures {
		abs, ok := expandHome(e.Path, homeDir)
		if !ok {
			return nil, fmt.Errorf("exposed path %q is in the home directory, which is unknown here (set HOME); give an absolute path (-%s)", e.Path, FlagExpose)
		}
		if !filepath.IsAbs(abs) {
			return nil, fmt.Errorf("exposed path %q is neither absolute nor in the home directory; give an absolute path or one starting with ~/ (-%s)", e.Path, FlagExpose)
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, fmt.Errorf("exposed path %q: %w; give an existing file or directory (-%s)", e.Path, err, FlagExpose)
		}
		out = append(out, Exposure{Path: abs, Writable: e.Writable})
	}
	return out, nil
}

// hiddenPath is a hidden path that exists, every link resolved.
type hiddenPath struct {
	path string
	dir  bool
}

// resolveHidden expands the wildcards of patterns and resolves the paths
// that exist (skipping those that do not, or cannot be reached), sorted
// and without duplicates.
func resolveHidden(patterns []string) []hiddenPath {
	var out []hiddenPath
	seen := map[string]bool{}
	for _, pat := range patterns {
		paths := []string{pat}
		if strings.ContainsAny(pat, `*?[\`) {
			paths, _ = filepath.Glob(pat) // the only error is a bad pattern: hide nothing for it
		}
		for _, p := range paths {
			// Most paths do not exist: one lstat says so (it fails when any
			// directory on the way is missing), where EvalSymlinks would
			// take one per component.
			if _, err := os.Lstat(p); err != nil {
				continue
			}
			real, err := filepath.EvalSymlinks(p)
			if err != nil || seen[real] || real == "/" {
				continue
			}
			fi, err := os.Stat(real)
			if err != nil {
				continue
			}
			seen[real] = true
			out = append(out, hiddenPath{path: real, dir: fi.IsDir()})
		}
	}
	slices.SortFunc(out, func(a, b hiddenPath) int { return strings.Compare(a.path, b.path) })
	return out
}

// within reports whether p is root or lies under it. Both are clean,
// absolute paths.
func within(p, root string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+string(filepath.Separator))
}

// withinAny reports whether p lies within one of roots.
func withinAny(p string, roots []string) bool {
	return slices.ContainsFunc(roots, func(r string) bool { return within(p, r) })
}

// private is where the sandbox mounts fresh file systems; host paths under
// them are out of sight already.
var private = []string{"/tmp", "/dev", "/proc"}

// procKeys are the files of /proc that list the kernel keyrings' keys (the
// keys a process may view, with their descriptions, and their users):
// the seccomp filter refuses the keyrings' system calls, and these are
// made unreadable. Kernels without keyrings have neither.
var procKeys = []string{"/proc/keys", "/proc/key-users"}

// existing returns the paths that exist on this machine.
func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// layout is what a confined command sees and may do.
type layout struct {
	network  bool
	userns   bool     // pass --unshare-user --disable-userns
	seccomp  bool     // pass --seccomp: the filter is on seccompFD
	procKeys []string // files of /proc to make unreadable (see procKeys)
	tmpSize  int64    // the size of /tmp in bytes; 0 for the tmpfs default
	hidden   []string // absolute patterns (see expandHidden)
	expose   []Exposure
	writable []string // absolute, resolved: the workspace and the cache
	// readOnly are directories mounted back read-only: the workspace,
	// when it must stay untouched (Options.ReadOnlyWorkspace).
	readOnly []string
	// workspace, if set, is the directory whose .git is made read-only.
	workspace string
	// masked are files to show as notice instead of what they hold.
	masked []string
	notice string // a file explaining the mask; "" for /dev/null
}

// mountKind is what a mount of a command's layout does to its path.
type mountKind int

// The kinds of mounts, in the order they are made on one path.
const (
	hideDir  mountKind = iota // an empty tmpfs, made read-only at the end
	hideFile                  // /dev/null, which cannot be opened (nodev)
	exposeRO                  // the host's path, read-only
	exposeRW                  // the host's path, writable
	gitRO                     // the workspace's repository, read-only
	maskFile                  // the notice, read-only
)

// mount is one mount of a command's layout: kind at path, from src.
type mount struct {
	kind      mountKind
	path, src string
}

// args returns bubblewrap's arguments to run argv in dir.
//
// The host's root is mounted read-only, then a fresh /dev, /proc (its
// lists of keys made unreadable) and /tmp. Then come the mounts on host
// paths, in the order of their paths, so that a mount on a path covers
// the mounts on its parents: where two apply, the more specific path
// wins. They are an empty tmpfs over each hidden directory and /dev/null
// over each hidden file; the exposed paths, read-only or writable; the
// writable directories (the workspace, its cache); the workspace's .git
// read-only; and the notice over each masked file. On one path, an
// exposure or a writable directory wins over hiding. A hidden path or a
// masked file inside a hidden directory, and an exposure whose path is
// visible anyway, are skipped: there is nothing to hide or show. Last,
// the hidden directories are made read-only (not recursively, so what is
// mounted inside them keeps its own mode).
func (l layout) args(dir string, argv []string) []string {
	a := []string{"--unshare-all"}
	if l.network {
		a = append(a, "--share-net")
	}
	if l.userns {
		a = append(a, "--unshare-user", "--disable-userns")
	}
	a = append(a,
		"--die-with-parent", "--new-session",
		// Without this, a command run by root keeps every capability and
		// can simply remount / read-write.
		"--cap-drop", "ALL",
	)
	if l.seccomp {
		a = append(a, "--seccomp", strconv.Itoa(seccompFD))
	}
	a = append(a,
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
	)
	for _, p := range l.procKeys {
		a = append(a, "--ro-bind", os.DevNull, p)
	}
	if l.tmpSize > 0 {
		a = append(a, "--size", strconv.FormatInt(l.tmpSize, 10))
	}
	a = append(a, "--tmpfs", "/tmp")

	var hideDirs []string
	for _, m := range l.mounts() {
		switch m.kind {
		case hideDir:
			a = append(a, "--tmpfs", m.path)
			hideDirs = append(hideDirs, m.path)
		case hideFile:
			a = append(a, "--ro-bind", os.DevNull, m.path)
		case exposeRO, gitRO, maskFile:
			a = append(a, "--ro-bind", m.src, m.path)
		case exposeRW:
			a = append(a, "--bind", m.src, m.path)
		}
	}
	for _, d := range hideDirs {
		a = append(a, "--remount-ro", d)
	}
	a = append(a, "--chdir", dir, "--")
	return append(a, argv...)
}

// mounts returns the mounts on host paths (see args), in order.
func (l layout) mounts() []mount {
	var ms []mount
	hidden := resolveHidden(l.hidden)
	for _, h := range hidden {
		switch {
		case withinAny(h.path, private):
			// out of sight already
		case h.dir:
			ms = append(ms, mount{kind: hideDir, path: h.path})
		default:
			ms = append(ms, mount{kind: hideFile, path: h.path})
		}
	}
	for _, e := range l.expose {
		real, err := filepath.EvalSymlinks(e.Path)
		if err != nil {
			continue // gone since the sandbox was made
		}
		kind := exposeRO
		if e.Writable {
			kind = exposeRW
		}
		ms = append(ms, mount{kind: kind, path: real, src: real})
		if real != e.Path {
			ms = append(ms, mount{kind: kind, path: e.Path, src: real})
		}
	}
	for _, w := range l.writable {
		ms = append(ms, mount{kind: exposeRW, path: w, src: w})
	}
	for _, r := range l.readOnly {
		ms = append(ms, mount{kind: exposeRO, path: r, src: r})
	}
	for _, g := range gitPaths(l.workspace, l.writable) {
		ms = append(ms, mount{kind: gitRO, path: g, src: g})
	}
	if l.network {
		// /etc/resolv.conf often links into /run, which is hidden.
		if real, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && real != "/etc/resolv.conf" && !withinAny(real, private) {
			ms = append(ms, mount{kind: exposeRO, path: real, src: real})
		}
	}
	notice := l.notice
	if notice == "" {
		notice = os.DevNull
	}
	for _, m := range l.masked {
		real, err := filepath.EvalSymlinks(m)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		ms = append(ms, mount{kind: maskFile, path: real, src: notice})
	}
	slices.SortStableFunc(ms, func(a, b mount) int {
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return int(a.kind) - int(b.kind)
	})

	// Keep what changes what a command sees: the nearest kept mount around
	// a path says what is there without it.
	var kept []mount
	var around []mount // the kept mounts around the current path, outermost first
	for i, m := range ms {
		if i > 0 && ms[i-1].path == m.path && ms[i-1].kind == m.kind {
			continue // the same mount twice
		}
		for len(around) > 0 && !within(m.path, around[len(around)-1].path) {
			around = around[:len(around)-1]
		}
		var outer *mount
		if len(around) > 0 {
			outer = &around[len(around)-1]
		}
		hiddenAround := outer != nil && outer.kind == hideDir && outer.path != m.path
		switch m.kind {
		case hideDir, hideFile:
			// Inside a hidden directory there is nothing to hide; on the
			// path of an exposure, the exposure wins (it comes later).
			if hiddenAround || slices.ContainsFunc(ms, func(o mount) bool {
				return o.path == m.path && (o.kind == exposeRO || o.kind == exposeRW)
			}) {
				continue
			}
		case exposeRO:
			// Visible anyway, and read-only unless a writable directory is
			// around it (where this makes it read-only: kept). Under a
			// fresh file system (/tmp), nothing of the host is visible.
			if m.src == m.path && !hiddenAround && (outer == nil || outer.kind != exposeRW) && !withinAny(m.path, private) {
				continue
			}
		case maskFile:
			if hiddenAround {
				continue
			}
		}
		kept = append(kept, m)
		around = append(around, m)
	}
	return kept
}

// maxGitFile bounds how much of a .git file is read for its gitdir line.
const maxGitFile = 4 << 10

// gitPaths returns what to mount read-only so that commands cannot change
// the workspace's repository: its .git (a directory, or a file as in a
// worktree or a submodule, with every link resolved) and, for a .git file,
// the directory its "gitdir:" line names, each only when it lies in a
// writable directory (anything else is read-only already).
func gitPaths(workspace string, writable []string) []string {
	if workspace == "" {
		return nil
	}
	real, err := filepath.EvalSymlinks(filepath.Join(workspace, ".git"))
	if err != nil {
		return nil // no repository here, or the workspace is inside one: read-only already
	}
	var out []string
	if withinAny(real, writable) {
		out = append(out, real)
	}
	fi, err := os.Stat(real)
	if err != nil || fi.IsDir() {
		return out
	}
	f, err := os.Open(real)
	if err != nil {
		return out
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, maxGitFile))
	line, _, _ := bytes.Cut(data, []byte("\n"))
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(line)), "gitdir:")
	if !ok {
		return out
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(filepath.Dir(real), gitdir)
	}
	if g, err := filepath.EvalSymlinks(gitdir); err == nil && withinAny(g, writable) && !slices.Contains(out, g) {
		out = append(out, g)
	}
	return out
}
