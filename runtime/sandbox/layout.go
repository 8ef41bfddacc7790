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

// homePrefix starts a hidden path that is relative to the home directory.
const homePrefix = "~/"

// defaultHidden is what DefaultHidden returns.
var defaultHidden = []string{
	// Password hashes and host keys (readable when the agent runs as root).
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/ssh/ssh_host_*_key",
	// Sockets of daemons: Docker, D-Bus, databases, the user's ssh-agent
	// and gpg-agent under /run/user. A socket on a read-only mount can
	// still be connected to.
	"/run", "/var/run",
	// Keys, password stores and git's credentials.
	"~/.ssh", "~/.gnupg", "~/.password-store", "~/.local/share/keyrings", "~/.pki",
	"~/.config/op", "~/.op", "~/.config/Bitwarden CLI", "~/.config/sops",
	"~/.netrc", "~/.git-credentials", "~/.config/git/credentials",
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
	// Face (current and legacy token files).
	"~/.claude", "~/.claude.json", "~/.codex", "~/.gemini", "~/.config/github-copilot",
	"~/.cache/huggingface/token", "~/.cache/huggingface/stored_tokens", "~/.huggingface",
	// Shell startup files, where people export API keys. Non-interactive
	// `bash -c` reads none of them, so hiding them costs commands nothing.
	"~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.bash_aliases", "~/.profile",
	"~/.zshrc", "~/.zprofile", "~/.zshenv", "~/.zlogin", "~/.config/fish",
	// Histories (secrets typed on command lines) and browser profiles
	// (cookies, saved passwords).
	"~/.bash_history", "~/.zsh_history", "~/.local/share/fish/fish_history", "~/.local/share/atuin",
	"~/.python_history", "~/.node_repl_history", "~/.psql_history", "~/.mysql_history", "~/.rediscli_history",
	"~/.mozilla", "~/.config/google-chrome", "~/.config/chromium",
}

// DefaultHidden returns the paths hidden from confined commands by
// default: password hashes and host keys under /etc, /run and /var/run
// (daemons' sockets: Docker, D-Bus, databases, ssh-agent, gpg-agent), and
// under the home directory ("~/") the credentials of ssh, gpg, password
// managers, git and the forges' CLIs, the clouds' and hosting services'
// CLIs, package registries and build tools (npm, pip, cargo, Maven,
// Gradle, ...), databases and AI tools (Claude Code, Codex, Hugging Face,
// ...), shell startup files (~/.bashrc, ~/.profile, ~/.zshrc, ...),
// histories and browser profiles.
//
// A hidden directory appears empty and read-only; a hidden file appears
// empty. Paths that do not exist when a command starts are skipped; a
// path may hold the wildcards of [filepath.Match]. To hide more, append
// to this list (the agent adds its threads directory and event log).
func DefaultHidden() []string { return slices.Clone(defaultHidden) }

// expandHidden checks the configured hidden paths and makes them absolute:
// "~/x" becomes home/x (and is dropped when home is unknown). It fails on
// a relative path or on "/".
func expandHidden(paths []string, home string) ([]string, error) {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if rest, ok := strings.CutPrefix(p, homePrefix); ok {
			if home == "" {
				continue // no home directory: nothing of it to hide
			}
			p = filepath.Join(home, rest)
		}
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("hidden path %q is neither absolute nor in the home directory; give an absolute path or one starting with ~/", p)
		}
		p = filepath.Clean(p)
		if p == "/" {
			return nil, errors.New("hidden path \"/\" would hide everything; name the directories and files to hide")
		}
		out = append(out, p)
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
	writable []string // absolute, resolved: the workspace and the cache
	hidden   []string // absolute patterns (see expandHidden)
	// workspace, if set, is the directory whose .git is made read-only.
	workspace string
}

// args returns bubblewrap's arguments to run argv in dir.
//
// The mounts are made in this order, each able to cover the ones before:
// the host's root read-only; a fresh /dev, /proc (its lists of keys made
// unreadable) and /tmp; an empty tmpfs
// over each hidden directory outside the writable ones (/dev/null over
// each hidden file); the writable directories; the workspace's .git
// read-only; the hidden paths inside the writable directories; then the
// hidden directories are made read-only (not recursively, so a writable
// directory inside one stays writable).
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
	a = append(a, "--tmpfs", "/tmp")
	writable := slices.Clone(l.writable)
	slices.Sort(writable) // a parent before its children

	hidden := resolveHidden(l.hidden)
	hide := func(h hiddenPath) {
		if h.dir {
			a = append(a, "--tmpfs", h.path)
		} else {
			a = append(a, "--ro-bind", os.DevNull, h.path)
		}
	}
	var inner []hiddenPath
	for _, h := range hidden {
		switch {
		case withinAny(h.path, writable):
			inner = append(inner, h)
		case withinAny(h.path, private):
			// out of sight already
		default:
			hide(h)
		}
	}
	for _, w := range writable {
		a = append(a, "--bind", w, w)
	}
	for _, g := range gitPaths(l.workspace, writable) {
		a = append(a, "--ro-bind", g, g)
	}
	for _, h := range inner {
		hide(h)
	}
	if l.network {
		// /etc/resolv.conf often links into /run, which is hidden.
		if real, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && real != "/etc/resolv.conf" &&
			!withinAny(real, private) && slices.ContainsFunc(hidden, func(h hiddenPath) bool { return h.dir && within(real, h.path) }) {
			a = append(a, "--ro-bind", real, real)
		}
	}
	for _, h := range hidden {
		if h.dir && (withinAny(h.path, writable) || !withinAny(h.path, private)) {
			a = append(a, "--remount-ro", h.path)
		}
	}
	a = append(a, "--chdir", dir, "--")
	return append(a, argv...)
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
