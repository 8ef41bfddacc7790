package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox/sandboxtest"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/internal/proctest"
)

// These tests run the agent's real bash tool through the sandbox and check
// each thing the sandbox promises, in every variant that applies: mode off
// (where the same check shows what the sandbox prevents), bubblewrap run by
// this user, and, when the tests run as root, bubblewrap run by the
// unprivileged user nobody (through unprivileged user namespaces).

// helperEnv, when set, makes the test binary a helper "agent": see
// runHelper.
const helperEnv = "FSMGEN_SANDBOX_TEST_HELPER"

func TestMain(m *testing.M) {
	sandboxtest.Main()
	if spec := os.Getenv(helperEnv); spec != "" {
		os.Exit(runHelper(spec))
	}
	os.Exit(m.Run())
}

// helperSpec is what a helper agent is asked to do.
type helperSpec struct {
	Mode      sandbox.Mode
	Bwrap     string
	Workspace string
	Cache     string
	Command   string // "{agent}" is replaced with the helper's pid
	Limits    *sandbox.Limits
	// PrintTTY makes the helper print its own controlling terminal first,
	// as "agent-tty=N" (tty_nr of /proc/self/stat, 0 for none).
	PrintTTY bool
}

// runHelper runs one bash call as the agent would, prints its output and
// returns 0 (1 if the call failed).
func runHelper(spec string) int {
	var h helperSpec
	if err := json.Unmarshal([]byte(spec), &h); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	sb, err := sandbox.New(context.Background(), sandbox.Options{Mode: h.Mode, Bwrap: h.Bwrap, CacheDir: h.Cache, Limits: h.Limits})
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	ws, err := tools.NewWorkspace(h.Workspace)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	if h.PrintTTY {
		tty, err := ttyNr("self")
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 2
		}
		fmt.Printf("agent-tty=%d\n", tty)
	}
	command := strings.ReplaceAll(h.Command, "{agent}", strconv.Itoa(os.Getpid()))
	raw, _ := json.Marshal(map[string]string{"command": command})
	out := tools.Default(ws, tools.Options{Sandbox: sb}).Run(context.Background(), chat.ToolCall{Name: "bash", Arguments: raw}, nil)
	fmt.Print(out.Content)
	if out.IsError {
		return 1
	}
	return 0
}

// variant is one way of running commands.
type variant struct {
	name         string
	mode         sandbox.Mode
	unprivileged bool // bubblewrap run by nobody
}

func (v variant) confined() bool { return v.mode != sandbox.Off }

var (
	off          = variant{name: "off", mode: sandbox.Off}
	bwrap        = variant{name: "bwrap", mode: sandbox.Bwrap}
	unprivileged = variant{name: "bwrap-as-nobody", mode: sandbox.Bwrap, unprivileged: true}
	allVariants  = []variant{off, bwrap, unprivileged}
	confined     = []variant{bwrap, unprivileged}
)

// nobody is the unprivileged user's uid and gid.
const nobody = "65534"

// fixture is a workspace and its surroundings, all outside /tmp (which the
// sandbox replaces with its own) so that what the sandbox hides and makes
// read-only is really there to reach.
type fixture struct {
	v        variant
	base     string // holds everything below
	ws       string // the workspace
	outside  string // a directory beside it, with a.txt
	home     string // $HOME, with credentials
	threads  string // the agent's threads, to be hidden
	eventLog string // the agent's event log, to be hidden
	cache    string // the sandbox's cache directory (Options.CacheDir)
	wsCache  string // the workspace's cache directory in it
	sb       *sandbox.Sandbox
	set      *tools.Set
}

// newFixture builds the fixture for v (skipping the test when v cannot run
// here) with opt's Network, Hidden (appended to the fixture's) and
// Redactor.
func newFixture(t *testing.T, v variant, opt sandbox.Options) *fixture {
	t.Helper()
	if v.unprivileged && os.Getuid() != 0 {
		t.Skip("runs bubblewrap as nobody, which needs root")
	}
	base := proctest.HostDir(t)
	f := &fixture{
		v: v, base: base,
		ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside"), home: filepath.Join(base, "home"),
		threads: filepath.Join(base, "data", "threads"), cache: filepath.Join(base, "cache"),
	}
	f.eventLog = filepath.Join(base, "data", "T-1.events.jsonl")
	files := map[string]string{
		"ws/here.txt":                "here\n",
		"outside/a.txt":              "outside\n",
		"home/.ssh/id_ed25519":       "-----BEGIN OPENSSH PRIVATE KEY-----\n",
		"home/.aws/credentials":      "aws_secret_access_key = AWSSECRET\n",
		"home/.netrc":                "machine example.com password NETRCSECRET\n",
		"home/.gitconfig":            "[user]\n\tname = Test User\n\temail = test@example.com\n[safe]\n\tdirectory = *\n[url \"https://x:GITCONFIGSECRET@github.com/\"]\n\tinsteadOf = https://github.com/\n",
		"data/threads/T-1.json":      `{"thread": "THREADSECRET"}`,
		"data/T-1.events.jsonl":      `{"event": "LOGSECRET"}`,
		"ws/.private/notes":          "INNERSECRET\n",
		"home/.config/gh/hosts.yaml": "oauth_token: GHSECRET\n",
		// Where the review found keys readable, and a few more.
		"home/.bashrc":                               "export OPENAI_API_KEY=BASHRCSECRET\n",
		"home/.profile":                              "export HF_TOKEN=PROFILESECRET\n",
		"home/.zshrc":                                "export GITHUB_TOKEN=ZSHRCSECRET\n",
		"home/.config/fish/config.fish":              "set -gx API_TOKEN FISHSECRET\n",
		"home/.claude/.credentials.json":             `{"claudeAiOauth": {"accessToken": "CLAUDESECRET"}}`,
		"home/.claude.json":                          `{"primaryApiKey": "CLAUDEJSONSECRET"}`,
		"home/.codex/auth.json":                      `{"OPENAI_API_KEY": "CODEXSECRET"}`,
		"home/.cache/huggingface/token":              "hf_HFSECRET\n",
		"home/.m2/settings.xml":                      "<password>M2SECRET</password>\n",
		"home/.gradle/gradle.properties":             "signing.password=GRADLESECRET\n",
		"home/.config/rclone/rclone.conf":            "secret_access_key = RCLONESECRET\n",
		"home/.s3cfg":                                "secret_key = S3CFGSECRET\n",
		"home/.local/share/com.vercel.cli/auth.json": `{"token": "VERCELSECRET"}`,
		// What issue 20 found readable outside the list of hidden paths.
		"home/.config/environment.d/keys.conf":            "OPENAI_API_KEY=ENVDSECRET\n",
		"home/.pam_environment":                           "HF_TOKEN DEFAULT=PAMSECRET\n",
		"home/.env":                                       "ANTHROPIC_API_KEY=HOMEENVSECRET\n",
		"home/.config/zsh/.zshrc":                         "export GITHUB_TOKEN=ZDOTDIRSECRET\n",
		"home/.bashrc.d/keys.sh":                          "export API_TOKEN=BASHRCDSECRET\n",
		"home/.config/io.datasette.llm/keys.json":         `{"openai": "LLMSECRET"}`,
		"home/.aider.conf.yml":                            "openai-api-key: AIDERSECRET\n",
		"home/.local/share/fsmgen-agent/threads/OLD.json": `{"thread": "OLDTHREADSECRET"}`,
		// Beside hidden files, what builds need stays readable.
		"home/.m2/repository/lib.jar":           "jar\n",
		"home/rw/.keep":                         "",
		"home/.cache/huggingface/hub/model.bin": "weights\n",
	}
	for name, content := range files {
		p := filepath.Join(base, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	require.NoError(t, os.Mkdir(f.cache, 0o755))
	t.Setenv("HOME", f.home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")

	var bwrapPath string
	if v.unprivileged {
		bwrapPath = asNobody(t, base)
		// nobody must be able to reach and change everything: only the
		// sandbox may stop it.
		chmodAll(t, base)
	}
	hidden := append(sandbox.DefaultHidden(), f.threads, f.eventLog, filepath.Join(f.ws, ".private"))
	hidden = append(hidden, opt.Hidden...)
	f.sb = sandboxtest.New(t, sandbox.Options{
		Mode: v.mode, Network: opt.Network, Hidden: hidden, Expose: opt.Expose, Redactor: opt.Redactor,
		CacheDir: f.cache, Bwrap: bwrapPath, Env: opt.Env, Limits: opt.Limits,
		ReadOnlyWorkspace: opt.ReadOnlyWorkspace,
	})
	f.wsCache = f.sb.CacheDir(f.ws)
	if v.unprivileged {
		// Start would make it, as root, for root only.
		require.NoError(t, os.Mkdir(f.wsCache, 0o777))
		require.NoError(t, os.Chmod(f.wsCache, 0o777))
	}
	ws, err := tools.NewWorkspace(f.ws)
	require.NoError(t, err)
	f.set = tools.Default(ws, tools.Options{Sandbox: f.sb, Timeout: time.Minute})
	return f
}

// asNobody writes, in dir, a program standing in for bubblewrap that runs
// it as nobody, and returns its path. `--version` alone, which the
// sandbox's check runs inside the sandbox, runs bubblewrap as is.
func asNobody(t *testing.T, dir string) string {
	t.Helper()
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		sandboxtest.Unavailable(t, err)
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	p := filepath.Join(dir, "bwrap-as-nobody")
	script := fmt.Sprintf(`#!/bin/sh
if [ "$#" = 1 ] && [ "$1" = --version ]; then exec %[1]s --version; fi
exec %[2]s --reuid=%[3]s --regid=%[3]s --clear-groups %[1]s "$@"
`, bw, setpriv, nobody)
	require.NoError(t, os.WriteFile(p, []byte(script), 0o755))
	return p
}

// bash runs command through the fixture's bash tool.
func (f *fixture) bash(t *testing.T, command string) chat.ToolOutcome {
	t.Helper()
	raw, err := json.Marshal(map[string]string{"command": command})
	require.NoError(t, err)
	return f.set.Run(context.Background(), chat.ToolCall{Name: "bash", Arguments: raw}, nil)
}

// listing returns every file under dir with its content.
func listing(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if fi.IsDir() {
			files[rel+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(p)
		files[rel] = string(data)
		return err
	}))
	return files
}

func TestWritesOnlyInTheWorkspace(t *testing.T) {
	hostTmp := t.TempDir() // under /tmp, which confined commands do not see
	require.NoError(t, os.WriteFile(filepath.Join(hostTmp, "a.txt"), []byte("tmp\n"), 0o644))
	for _, v := range allVariants {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			if v.unprivileged {
				require.NoError(t, os.Chmod(filepath.Dir(hostTmp), 0o755))
				require.NoError(t, os.Chmod(hostTmp, 0o777))
				require.NoError(t, os.Chmod(filepath.Join(hostTmp, "a.txt"), 0o666))
			}
			beforeOutside, beforeTmp := listing(t, f.outside), listing(t, hostTmp)

			out := f.bash(t, "echo made > new.txt && mkdir -p sub && echo deep > sub/f && cat new.txt")
			require.False(t, out.IsError, out.Content)
			assert.Equal(t, "made\n", out.Content)
			assert.FileExists(t, filepath.Join(f.ws, "sub", "f"))

			attempts := []string{
				fmt.Sprintf("echo x > %s/new.txt", f.outside),
				fmt.Sprintf("echo x >> %s/a.txt", f.outside),
				fmt.Sprintf("rm %s/a.txt", f.outside),
				fmt.Sprintf("mkdir %s/dir", f.outside),
				fmt.Sprintf("mkdir -p %[1]s && echo x > %[1]s/new.txt && echo x >> %[1]s/a.txt", hostTmp),
				// Root keeps no capability to undo the read-only mount.
				fmt.Sprintf("mount -o remount,bind,rw / 2>/dev/null; echo x > %s/remounted.txt", f.outside),
			}
			for _, a := range attempts {
				out := f.bash(t, a)
				if v.confined() && !strings.Contains(a, hostTmp) {
					assert.True(t, out.IsError, "%s: %s", a, out.Content)
					assert.Contains(t, out.Content, "Read-only file system", a)
				}
			}
			if !v.confined() {
				assert.NotEqual(t, beforeOutside, listing(t, f.outside), "unconfined, the writes outside happen")
				return
			}
			assert.Equal(t, beforeOutside, listing(t, f.outside))
			assert.Equal(t, beforeTmp, listing(t, hostTmp))

			out = f.bash(t, "grep CapEff /proc/self/status; echo x > /tmp/private && cat /tmp/private; ls -A /tmp")
			require.False(t, out.IsError, out.Content)
			assert.Regexp(t, `^CapEff:\s+0+\nx\nprivate\n$`, out.Content, "no capabilities, and an empty /tmp of its own")
		})
	}
}

func TestSecretsAreHidden(t *testing.T) {
	// Each command prints a secret when it can read it.
	commands := []struct {
		name, command, secret string
	}{
		{"ssh key", "cat ~/.ssh/id_ed25519", "PRIVATE KEY"},
		{"aws", "cat ~/.aws/credentials", "AWSSECRET"},
		{"netrc", "cat ~/.netrc", "NETRCSECRET"},
		{"gh", "cat ~/.config/gh/hosts.yaml", "GHSECRET"},
		{"bashrc", "cat ~/.bashrc", "BASHRCSECRET"},
		{"profile", "cat ~/.profile", "PROFILESECRET"},
		{"zshrc", "cat ~/.zshrc", "ZSHRCSECRET"},
		{"fish", "cat ~/.config/fish/config.fish", "FISHSECRET"},
		{"claude code", "cat ~/.claude/.credentials.json", "CLAUDESECRET"},
		{"claude code's settings", "cat ~/.claude.json", "CLAUDEJSONSECRET"},
		{"codex", "cat ~/.codex/auth.json", "CODEXSECRET"},
		{"hugging face", "cat ~/.cache/huggingface/token", "HFSECRET"},
		{"maven", "cat ~/.m2/settings.xml", "M2SECRET"},
		{"gradle", "cat ~/.gradle/gradle.properties", "GRADLESECRET"},
		{"rclone", "cat ~/.config/rclone/rclone.conf", "RCLONESECRET"},
		{"s3cmd", "cat ~/.s3cfg", "S3CFGSECRET"},
		{"vercel", "cat ~/.local/share/com.vercel.cli/auth.json", "VERCELSECRET"},
		{"environment.d", "cat ~/.config/environment.d/*", "ENVDSECRET"},
		{"pam_environment", "cat ~/.pam_environment", "PAMSECRET"},
		{"the home's .env", "cat ~/.env", "HOMEENVSECRET"},
		{"ZDOTDIR", "cat ~/.config/zsh/.zshrc", "ZDOTDIRSECRET"},
		{"bashrc.d", "cat ~/.bashrc.d/*", "BASHRCDSECRET"},
		{"git's configuration", "git config --global --get-regexp url 2>&1; cat ~/.gitconfig", "GITCONFIGSECRET"},
		{"llm", "cat ~/.config/io.datasette.llm/keys.json", "LLMSECRET"},
		{"aider", "cat ~/.aider.conf.yml", "AIDERSECRET"},
		{"earlier sessions", "cat ~/.local/share/fsmgen-agent/threads/*", "OLDTHREADSECRET"},
		{"threads", "cat {threads}/*", "THREADSECRET"},
		{"event log", "cat {log}", "LOGSECRET"},
		{"hidden inside the workspace", "cat .private/notes", "INNERSECRET"},
		{"listing", "ls -A ~/.ssh ~/.aws {threads} .private", "id_ed25519"},
		{"search", "grep -r SECRET ~ {threads} {log} . 2>/dev/null", "SECRET"},
	}
	for _, v := range allVariants {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			for _, c := range commands {
				t.Run(c.name, func(t *testing.T) {
					cmd := strings.NewReplacer("{threads}", f.threads, "{log}", f.eventLog).Replace(c.command)
					out := f.bash(t, cmd)
					if v.confined() {
						assert.NotContains(t, out.Content, c.secret)
					} else {
						assert.Contains(t, out.Content, c.secret, "unconfined, the secret is readable")
					}
				})
			}
			if !v.confined() {
				return
			}
			out := f.bash(t, "ls -A ~; echo x > ~/new")
			assert.Equal(t, chat.ToolOutcome{Content: "command exited with status 1\n\nbash: line 1: " + f.home + "/new: Read-only file system\n", IsError: true}, out,
				"an empty, read-only home")
			out = f.bash(t, "cat ~/.m2/repository/lib.jar ~/.cache/huggingface/hub/model.bin")
			assert.True(t, out.IsError, "nothing of the home is exposed by default: %s", out.Content)
			out = f.bash(t, strings.ReplaceAll("ls -A {threads} .private /run; echo y > .private/new", "{threads}", f.threads))
			assert.True(t, out.IsError)
			assert.Equal(t, 1, strings.Count(out.Content, "Read-only file system"), out.Content)
			assert.NoFileExists(t, filepath.Join(f.ws, ".private", "new"))
			if !v.unprivileged { // nobody cannot read it anyway
				out = f.bash(t, "cat /etc/shadow /etc/gshadow")
				assert.True(t, out.IsError)
				assert.NotContains(t, out.Content, "root:")
			}
		})
	}
}

// TestExposed checks what -sandbox-expose shows of the home directory: an
// exposed directory, read-only or writable, but for the credentials the
// hidden list names inside it.
func TestExposed(t *testing.T) {
	for _, v := range confined {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{Expose: []sandbox.Exposure{
				{Path: "~/.m2"}, {Path: "~/.cache/huggingface"}, {Path: "~/.config"}, {Path: "~/.ssh"}, {Path: "~/rw", Writable: true},
			}})
			for _, c := range []struct{ command, want string }{
				{"cat ~/.m2/repository/lib.jar ~/.cache/huggingface/hub/model.bin", "jar\nweights\n"},
				{"cat ~/.ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\n"}, // named on its own: the more specific path wins
				{"ls -A ~ | sort | tr '\\n' ' '", ".cache .config .m2 .ssh rw "},
				{"cat ~/.m2/settings.xml ~/.cache/huggingface/token ~/.config/gh/hosts.yaml ~/.config/environment.d/keys.conf ~/.config/io.datasette.llm/keys.json 2>&1 | grep -c SECRET || true", "0\n"},
				{"echo x > ~/rw/new && cat ~/rw/new", "x\n"},
				{"{ echo x > ~/.m2/new; } 2>/dev/null || echo refused", "refused\n"},
			} {
				out := f.bash(t, c.command)
				assert.Equal(t, c.want, out.Content, c.command)
			}
			assert.FileExists(t, filepath.Join(f.home, "rw", "new"))
			assert.NoFileExists(t, filepath.Join(f.home, ".m2", "new"))
		})
	}
}

func TestSecretsAreHiddenInExposures(t *testing.T) {
	for _, v := range confined {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{Expose: []sandbox.Exposure{{Path: "~"}}})
			out := f.bash(t, "cat ~/.m2/repository/lib.jar ~/.cache/huggingface/hub/model.bin")
			assert.Equal(t, chat.ToolOutcome{Content: "jar\nweights\n"}, out, "only the files holding secrets are hidden")
			out = f.bash(t, "grep -r SECRET ~ 2>/dev/null | cut -c1-200")
			assert.NotContains(t, out.Content, "SECRET", "the whole home exposed, the list still hides what it names")
			out = f.bash(t, strings.ReplaceAll("ls -A ~/.ssh {threads} .private /run; echo x > ~/.ssh/new; echo y > .private/new", "{threads}", f.threads))
			assert.True(t, out.IsError)
			assert.Equal(t, 2, strings.Count(out.Content, "Read-only file system"), out.Content)
			assert.NoFileExists(t, filepath.Join(f.home, ".ssh", "new"))
			assert.NoFileExists(t, filepath.Join(f.ws, ".private", "new"))
			if !v.unprivileged { // nobody cannot read it anyway
				out = f.bash(t, "cat /etc/shadow /etc/gshadow")
				assert.True(t, out.IsError)
				assert.NotContains(t, out.Content, "root:")
			}
		})
	}
}

func TestGitIsReadOnly(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	layouts := []struct {
		name  string
		setup func(t *testing.T, f *fixture) // makes f.ws a repository's work tree, one way or another
	}{
		{"a .git directory", func(t *testing.T, f *fixture) {
			git(t, f.ws, "init", "--quiet")
		}},
		{"a .git file naming a gitdir inside the workspace", func(t *testing.T, f *fixture) {
			git(t, f.ws, "init", "--quiet", "--separate-git-dir", filepath.Join(f.ws, ".realgit"))
			require.NoError(t, os.WriteFile(filepath.Join(f.ws, ".gitignore"), []byte("/.realgit/\n"), 0o644))
		}},
		{"a worktree", func(t *testing.T, f *fixture) {
			main := filepath.Join(f.base, "main")
			require.NoError(t, os.Mkdir(main, 0o755))
			git(t, main, "init", "--quiet")
			git(t, main, "commit", "--quiet", "--allow-empty", "-m", "main")
			require.NoError(t, os.RemoveAll(f.ws))
			git(t, main, "worktree", "add", "--quiet", f.ws)
			require.NoError(t, os.WriteFile(filepath.Join(f.ws, "here.txt"), []byte("here\n"), 0o644))
		}},
		{"a subdirectory of a repository", func(t *testing.T, f *fixture) {
			git(t, f.base, "init", "--quiet")
			require.NoError(t, os.WriteFile(filepath.Join(f.base, ".gitignore"), []byte("/*\n!/ws/\n"), 0o644))
		}},
	}
	for _, v := range confined {
		for _, l := range layouts {
			t.Run(v.name+"/"+l.name, func(t *testing.T) {
				f := newFixture(t, v, sandbox.Options{})
				l.setup(t, f)
				git(t, f.ws, "add", "--all")
				git(t, f.ws, "commit", "--quiet", "-m", "initial")
				if v.unprivileged {
					chmodAll(t, f.base)
				}
				head := git(t, f.ws, "rev-parse", "HEAD")
				require.NoError(t, os.WriteFile(filepath.Join(f.ws, "here.txt"), []byte("changed\n"), 0o666))

				// (The hidden directory .private shows as deleted.)
				out := f.bash(t, "git status --short && git log --oneline && git diff --stat")
				require.False(t, out.IsError, out.Content)
				assert.Contains(t, out.Content, "M here.txt")
				assert.Contains(t, out.Content, "initial")
				assert.Regexp(t, `here.txt\s+\|`, out.Content)

				for _, c := range []string{"git add --all", "git commit --quiet -am sneaky", "git branch other", "git tag v1", "git config user.name Someone"} {
					out := f.bash(t, c)
					assert.True(t, out.IsError, "%s: %s", c, out.Content)
					assert.Contains(t, out.Content, "Read-only file system", c)
				}
				out = f.bash(t, "echo still > writable.txt && cat writable.txt")
				assert.Equal(t, "still\n", out.Content, "the rest of the workspace stays writable")
				assert.Equal(t, head, git(t, f.ws, "rev-parse", "HEAD"))
				assert.Empty(t, git(t, f.ws, "branch", "--list", "other"))
				assert.Empty(t, git(t, f.ws, "diff", "--cached", "--name-only"), "nothing was staged")
			})
		}
	}
}

// git runs git in dir and returns its trimmed output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
	return strings.TrimSpace(string(out))
}

// chmodAll makes everything under dir writable by everyone.
func chmodAll(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.Mode()&os.ModeSymlink != 0 {
			return err
		}
		if fi.IsDir() {
			return os.Chmod(p, 0o777)
		}
		return os.Chmod(p, fi.Mode().Perm()|0o666)
	}))
}

func TestNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() { // accept and close, until the listener is closed
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port)
	tests := []struct {
		v       variant
		network bool
		want    bool
	}{
		{v: off, want: true},
		{v: bwrap, want: false},
		{v: bwrap, network: true, want: true},
		{v: unprivileged, want: false},
		{v: unprivileged, network: true, want: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/network=%t", tt.v.name, tt.network), func(t *testing.T) {
			f := newFixture(t, tt.v, sandbox.Options{Network: tt.network})
			out := f.bash(t, connect)
			if tt.want {
				assert.Equal(t, chat.ToolOutcome{Content: "connected\n"}, out)
				return
			}
			assert.True(t, out.IsError, out.Content)
			assert.Contains(t, out.Content, "Connection refused", "a loopback of its own, with nothing listening")
			out = f.bash(t, "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '")
			assert.Equal(t, "lo\n", out.Content, "no interface but loopback")
		})
	}
}

func TestEnvironment(t *testing.T) {
	const (
		apiKey = "sk-ant-api03-planted-in-the-agent"
		other  = "value-the-redactor-knows-0123"
	)
	t.Setenv("ANTHROPIC_API_KEY", apiKey)
	t.Setenv("OPENAI_API_KEY", apiKey)
	t.Setenv("GITHUB_TOKEN", "ghp_plantedtoken")
	t.Setenv("DB_PASSWORD", "hunter2-planted")
	t.Setenv("LC_PAPER", other) // an allowed name, a secret value
	t.Setenv("GOPROXY", "https://user:pw-planted@proxy.example/")
	t.Setenv("FSMGEN_UNLISTED", "unlisted-planted")
	t.Setenv("FSMGEN_EXTRA", "extra-kept")
	t.Setenv("TZ", "UTC")
	t.Setenv("GOFLAGS", "-count=1")
	for _, v := range allVariants {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{Redactor: redact.New(apiKey, other), Env: []string{"FSMGEN_EXTRA"}})
			out := f.bash(t, "env")
			require.False(t, out.IsError, out.Content)
			for _, leak := range []string{apiKey, "ghp_planted", "hunter2", other, "pw-planted", "unlisted-planted", "ANTHROPIC_", "OPENAI_"} {
				assert.NotContains(t, out.Content, leak)
			}
			for _, kept := range []string{"FSMGEN_EXTRA=extra-kept", "TZ=UTC", "GOFLAGS=-count=1", "HOME=" + f.home, "PATH=", "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat"} {
				assert.Contains(t, out.Content, kept)
			}
			if v.confined() {
				assert.Contains(t, out.Content, "TMPDIR=/tmp\n")
				require.NotEmpty(t, f.wsCache)
				assert.Contains(t, out.Content, "XDG_CACHE_HOME="+f.wsCache+"\n")
				assert.Contains(t, out.Content, "GOCACHE="+filepath.Join(f.wsCache, "go-build")+"\n")
				for _, v := range []string{"GOMODCACHE=" + filepath.Join(f.wsCache, "go-mod"), "npm_config_cache=" + filepath.Join(f.wsCache, "npm"),
					"PIP_CACHE_DIR=" + filepath.Join(f.wsCache, "pip"), "CARGO_HOME=" + filepath.Join(f.wsCache, "cargo")} {
					assert.Contains(t, out.Content, v+"\n", "the toolchains' caches are the workspace's")
				}
				assert.Contains(t, out.Content, "GOPROXY="+"https://proxy.golang.org,direct\n", "the planted proxy, which holds a password, is not kept")
			}
		})
	}
}

// helper starts the test binary as a helper agent running command through
// its bash tool in f's workspace, with secret in the helper's own (initial)
// environment, and returns the helper and a channel of its output.
func (f *fixture) helper(t *testing.T, command, secret string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := f.helperCmd(t, command, secret)
	return cmd, f.startHelper(t, cmd)
}

// helperCmd returns the command of a helper agent (see helper), not
// started.
func (f *fixture) helperCmd(t *testing.T, command, secret string) *exec.Cmd {
	t.Helper()
	var bwrapPath string
	if f.v.unprivileged {
		bwrapPath = filepath.Join(f.base, "bwrap-as-nobody")
	}
	spec, err := json.Marshal(helperSpec{Mode: f.v.mode, Bwrap: bwrapPath, Workspace: f.ws, Cache: f.cache, Command: command})
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+string(spec), "ANTHROPIC_API_KEY="+secret)
	return cmd
}

// startHelper starts cmd, a helper agent, and returns a channel of its
// output.
func (f *fixture) startHelper(t *testing.T, cmd *exec.Cmd) <-chan string {
	t.Helper()
	outc := make(chan string, 1)
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = pw, pw
	require.NoError(t, cmd.Start())
	pw.Close()
	go func() {
		defer pr.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := pr.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		outc <- b.String()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return outc
}

// TestAgentIsOutOfReach runs a command from a helper agent whose own
// environment holds a key, and looks for the key, and the agent, from the
// command in every way it can.
func TestAgentIsOutOfReach(t *testing.T) {
	const secret = "sk-ant-api03-in-the-agents-own-environ"
	command := strings.Join([]string{
		"cat /proc/$PPID/environ",
		"cat /proc/{agent}/environ /proc/{agent}/cmdline",
		"for p in /proc/[0-9]*; do cat $p/environ $p/cmdline; echo; done",
		"env",
		"ps -eo pid,args 2>/dev/null",
		"kill -0 {agent} 2>/dev/null && echo signalled-$((40+2))", // the command line shows in /proc: no literal answers
		"test -e /proc/{agent} && echo seen-$((40+2))",
		"true",
	}, "; ")
	for _, v := range allVariants {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			cmd, outc := f.helper(t, command, secret)
			out := <-outc
			require.NoError(t, cmd.Wait(), out)
			if !v.confined() {
				assert.Contains(t, out, secret, "unconfined, the agent's environment is readable")
				assert.Contains(t, out, "signalled-42")
				return
			}
			assert.NotContains(t, out, secret)
			assert.NotContains(t, out, "signalled-42")
			assert.NotContains(t, out, "seen-42")
		})
	}
}

// TestEverythingDiesWithTheAgent kills a helper agent while its command
// runs, with processes in the background that left the command's session:
// they must all die with it.
func TestEverythingDiesWithTheAgent(t *testing.T) {
	for _, v := range confined {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			marker := fmt.Sprintf("fsmgen-sandbox-test-%d", time.Now().UnixNano())
			sandboxtest.KillAtCleanup(t, marker)
			loop := fmt.Sprintf(": %s; while :; do date >> beat; sleep 0.05; done", marker)
			command := fmt.Sprintf("setsid sh -c '%[1]s' & set -m; (%[1]s) & while [ ! -s beat ]; do sleep 0.01; done; touch ready; sleep 60", loop)
			cmd, _ := f.helper(t, command, "none")
			require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(f.ws, "ready")); return err == nil },
				20*time.Second, 10*time.Millisecond, "the command never got ready")
			require.NotEmpty(t, sandboxtest.Processes(marker))
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			_ = cmd.Wait()
			assert.Eventually(t, func() bool { return len(sandboxtest.Processes(marker)) == 0 }, 10*time.Second, 10*time.Millisecond,
				"processes outlived the agent: %v", sandboxtest.Processes(marker))
			beat := filepath.Join(f.ws, "beat")
			fi, err := os.Stat(beat)
			require.NoError(t, err)
			time.Sleep(200 * time.Millisecond) // four beats, were anything left beating
			fi2, err := os.Stat(beat)
			require.NoError(t, err)
			assert.Equal(t, fi.Size(), fi2.Size(), "the beat file still grows")
		})
	}
}

func TestGoBuildsInside(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not installed")
	}
	for _, v := range confined {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			// A package that imports nothing builds in a moment even with an
			// empty cache (go vet or go test would build the standard library
			// first: seconds).
			files := map[string]string{
				"go.mod":  "module example.com/tiny\n\ngo 1.22\n",
				"tiny.go": "package tiny\n\n// Answer is the answer.\nfunc Answer() int { return 42 }\n",
			}
			for name, content := range files {
				require.NoError(t, os.WriteFile(filepath.Join(f.ws, name), []byte(content), 0o666))
			}
			out := f.bash(t, "go env GOCACHE && go build ./... && echo built")
			if v.unprivileged && out.IsError && strings.Contains(out.Content, "permission denied") {
				t.Skipf("go cannot run as nobody here (its GOROOT or GOPATH is private): %s", out.Content)
			}
			require.False(t, out.IsError, out.Content)
			assert.Equal(t, filepath.Join(f.wsCache, "go-build")+"\nbuilt\n", out.Content)
			entries, err := os.ReadDir(filepath.Join(f.wsCache, "go-build"))
			require.NoError(t, err)
			assert.NotEmpty(t, entries, "the build cache persists outside the sandbox")
		})
	}
}

// TestConcurrentCalls runs calls in parallel through one sandbox, as the
// agent runs the calls of one round.
func TestConcurrentCalls(t *testing.T) {
	for _, v := range []variant{off, bwrap} {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			const n = 8
			outs := make(chan chat.ToolOutcome, n)
			for i := range n {
				raw, err := json.Marshal(map[string]string{"command": fmt.Sprintf("echo %d > out-%d.txt && cat out-%d.txt", i, i, i)})
				require.NoError(t, err)
				go func() {
					outs <- f.set.Run(context.Background(), chat.ToolCall{Name: "bash", Arguments: raw}, nil)
				}()
			}
			var got []string
			for range n {
				out := <-outs
				assert.False(t, out.IsError, out.Content)
				got = append(got, strings.TrimSpace(out.Content))
			}
			assert.ElementsMatch(t, []string{"0", "1", "2", "3", "4", "5", "6", "7"}, got)
			for i := range n {
				assert.FileExists(t, filepath.Join(f.ws, fmt.Sprintf("out-%d.txt", i)))
			}
		})
	}
}

// TestKeyringIsOutOfReach runs a command from a helper agent whose
// session keyring holds a key (as a user's login session can), and tries
// to read the key as `keyctl search` and `keyctl read` would: the kernel
// keyring is not namespaced, so only the seccomp filter stands between
// the command and the key.
func TestKeyringIsOutOfReach(t *testing.T) {
	const desc, payload = "fsmgen-sandbox-test", "KEYRING-SECRET-0a1b2c3d"
	for _, v := range allVariants {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			cmd := f.helperCmd(t, sandboxtest.KeyReader(t, f.base, desc), "none")
			sandboxtest.WithSessionKey(t, cmd, desc, payload)
			outc := f.startHelper(t, cmd)
			out := <-outc
			require.NoError(t, cmd.Wait(), out)
			if !v.confined() {
				assert.Contains(t, out, payload, "unconfined, the session's keys are readable")
				return
			}
			assert.NotContains(t, out, payload)
			assert.Contains(t, out, "keyring: search: operation not permitted")
		})
	}
}

// forkCount is a command that tries to start 200 processes at once
// without retrying (bash retries a refused fork for half a minute) and
// prints how many it started and why it stopped.
const forkCount = `perl -e 'my $n = 0; for (1..200) { my $p = fork; last unless defined $p; if (!$p) { sleep 10; exit } $n++ } print "started $n: $!\n"'`

// TestLimits reaches each limit of a confined command through the bash
// tool, and checks that the command is stopped or refused and that the
// result says which limit, naming its flag. The agent runs as root here
// (the process limit is then a pids cgroup), and bubblewrap as root or as
// nobody.
func TestLimits(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl is not installed") // Debian's perl-base is essential
	}
	limits := sandbox.Limits{Memory: 64 << 20, Processes: 40, CPU: time.Second, FileSize: 1 << 20, TmpSize: 8 << 20}
	tests := []struct {
		name, command string
		isError       bool
		want          []string // in the result, in order
	}{
		{name: "processes", command: forkCount,
			want: []string{"[sandbox limit -sandbox-processes: the command reached its limit of 40 processes and threads at once", "started 3", ": Resource temporarily unavailable"}},
		{name: "memory", command: `perl -e '$x = "a" x (200 << 20); print length($x), "\n"'`, isError: true,
			want: []string{"sandbox limit -sandbox-memory: a process may have run out of its 64 MiB of memory", "Out of memory"}},
		{name: "memory below the limit", command: `perl -e '$x = "a" x (16 << 20); print length($x), "\n"'`,
			want: []string{"16777216\n"}},
		{name: "CPU", command: "while :; do :; done", isError: true,
			want: []string{"sandbox limit -sandbox-cpu: a process used its 1s of CPU time and was killed", "killed by signal CPU time limit exceeded"}},
		{name: "file size", command: "head -c 2M /dev/zero > big; stat -c %s big", isError: false,
			want: []string{"[sandbox limit -sandbox-file-size: a process tried to write a file over 1 MiB and was stopped", "File size limit exceeded", "1048576\n"}},
		{name: "/tmp", command: "for i in $(seq 12); do head -c 1000K /dev/zero > /tmp/f$i || break; done; du -sk /tmp | cut -f1", isError: false,
			want: []string{"[sandbox limit -sandbox-tmp-size: the command may have filled its /tmp of 8 MiB", "No space left on device", "8192\n"}},
	}
	for _, v := range confined {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{Limits: &limits})
			assert.Contains(t, f.sb.String(), "limits: 64 MiB of memory per process, 40 processes (a pids cgroup), 1s of CPU per process, files up to 1 MiB, a /tmp of 8 MiB")
			t.Run("its cgroup cannot be left", func(t *testing.T) {
				out := f.bash(t, "for f in /sys/fs/cgroup/pids/tasks /sys/fs/cgroup/pids/cgroup.procs; do (echo $$ > $f) 2>&1; done; true")
				assert.Equal(t, 2, strings.Count(out.Content, "Read-only file system"), out.Content)
			})
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					out := f.bash(t, tt.command)
					assert.Equal(t, tt.isError, out.IsError, out.Content)
					rest := out.Content
					for _, w := range tt.want {
						i := strings.Index(rest, w)
						if !assert.GreaterOrEqual(t, i, 0, "%q not in (what follows of) %q", w, out.Content) {
							break
						}
						rest = rest[i+len(w):]
					}
				})
			}
		})
	}
}

// TestLimitsWithoutRoot runs the bash tool from a helper agent that runs
// as nobody, as an ordinary user runs the agent: there is no pids cgroup,
// and RLIMIT_NPROC, counted in the sandbox's own user namespace, limits
// the processes of the command alone.
func TestLimitsWithoutRoot(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("runs the agent as nobody, which needs root")
	}
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl is not installed")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	f := newFixture(t, unprivileged, sandbox.Options{})
	bin := filepath.Join(f.base, "agent-as-nobody")
	data, err := os.ReadFile(os.Args[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	require.NoError(t, os.Chmod(f.wsCache, 0o777))
	limits := sandbox.Limits{Processes: 40}
	spec, err := json.Marshal(helperSpec{Mode: sandbox.Bwrap, Workspace: f.ws, Cache: f.cache, Command: forkCount, Limits: &limits})
	require.NoError(t, err)
	cmd := exec.Command(setpriv, "--reuid="+nobody, "--regid="+nobody, "--clear-groups", bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+string(spec), "HOME="+f.home)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Regexp(t, `^\[sandbox limit -sandbox-processes: the command may have reached its limit of 40 processes and threads at once\. .*\]\nstarted 3\d: Resource temporarily unavailable\n$`, string(out))
}

// TestWorkspaceInTheHome runs a command in a workspace inside the home
// directory, where projects usually are, with its cache there too: the
// home is empty but for them, and they are writable.
func TestWorkspaceInTheHome(t *testing.T) {
	for _, v := range confined {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			proj := filepath.Join(f.home, "src", "proj")
			require.NoError(t, os.MkdirAll(proj, 0o777))
			require.NoError(t, os.WriteFile(filepath.Join(proj, "main.go"), []byte("package main\n"), 0o666))
			sb := sandboxtest.New(t, sandbox.Options{Mode: v.mode, CacheDir: filepath.Join(f.home, ".cache", "agent"), Bwrap: bwrapOf(f)})
			if v.unprivileged {
				require.NoError(t, os.MkdirAll(sb.CacheDir(proj), 0o777))
				chmodAll(t, f.home)
			}
			ws, err := tools.NewWorkspace(proj)
			require.NoError(t, err)
			set := tools.Default(ws, tools.Options{Sandbox: sb, Timeout: time.Minute})
			raw, err := json.Marshal(map[string]string{"command": "cat main.go && echo x > new && echo y > $XDG_CACHE_HOME/c && find ~ -mindepth 1 | sort && cat ~/.ssh/id_ed25519"})
			require.NoError(t, err)
			out := set.Run(context.Background(), chat.ToolCall{Name: "bash", Arguments: raw}, nil)
			cache := sb.CacheDir(proj)
			want := "command exited with status 1\n\npackage main\n" + strings.Join([]string{
				f.home + "/.cache", f.home + "/.cache/agent", cache, cache + "/c",
				f.home + "/src", proj, proj + "/main.go", proj + "/new",
			}, "\n") + "\ncat: " + f.home + "/.ssh/id_ed25519: No such file or directory\n"
			assert.Equal(t, want, out.Content, "only the workspace and its cache, writable, in an empty home")
			assert.FileExists(t, filepath.Join(proj, "new"))
			assert.FileExists(t, filepath.Join(cache, "c"))
		})
	}
}

// bwrapOf returns the bubblewrap program of f's variant ("" for bwrap on
// PATH).
func bwrapOf(f *fixture) string {
	if f.v.unprivileged {
		return filepath.Join(f.base, "bwrap-as-nobody")
	}
	return ""
}

func TestReadOnlyWorkspace(t *testing.T) {
	for _, v := range allVariants {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{ReadOnlyWorkspace: true})
			if !v.confined() {
				before := listing(t, f.ws)
				out := f.bash(t, "echo x > new.txt")
				require.True(t, out.IsError, "unconfined, a read-only workspace cannot be kept: every command is refused")
				assert.Contains(t, out.Content, "-sandbox off")
				assert.Equal(t, before, listing(t, f.ws))
				return
			}
			before := listing(t, f.ws)
			out := f.bash(t, "cat here.txt && echo private > /tmp/p && cat /tmp/p && echo cached > $XDG_CACHE_HOME/c && cat $XDG_CACHE_HOME/c")
			require.False(t, out.IsError, out.Content)
			assert.Equal(t, "here\nprivate\ncached\n", out.Content, "it reads the workspace and writes its /tmp and cache")
			for _, attempt := range []string{
				"echo x > new.txt",
				"echo x >> here.txt",
				"rm here.txt",
				"mkdir sub",
				"touch here.txt",
				"mount -o remount,bind,rw . 2>/dev/null; echo x > remounted.txt",
			} {
				out := f.bash(t, attempt)
				assert.True(t, out.IsError, "%s: %s", attempt, out.Content)
				assert.Contains(t, out.Content, "Read-only file system", attempt)
			}
			assert.Equal(t, before, listing(t, f.ws), "the workspace is untouched")
			assert.Contains(t, f.sb.String(), "workspace read-only")
			assert.True(t, f.sb.ReadOnlyWorkspace())
		})
	}
}

func TestReadOnlyWorkspaceInTheHome(t *testing.T) {
	for _, v := range confined {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			proj := filepath.Join(f.home, "src", "proj")
			require.NoError(t, os.MkdirAll(proj, 0o777))
			require.NoError(t, os.WriteFile(filepath.Join(proj, "main.go"), []byte("package main\n"), 0o666))
			sb := sandboxtest.New(t, sandbox.Options{Mode: v.mode, CacheDir: filepath.Join(f.home, ".cache", "agent"), Bwrap: bwrapOf(f), ReadOnlyWorkspace: true})
			if v.unprivileged {
				require.NoError(t, os.MkdirAll(sb.CacheDir(proj), 0o777))
				chmodAll(t, f.home)
			}
			ws, err := tools.NewWorkspace(proj)
			require.NoError(t, err)
			set := tools.Default(ws, tools.Options{Sandbox: sb, Timeout: time.Minute})
			raw, err := json.Marshal(map[string]string{"command": "cat main.go; echo x > new; ls -A ~/src/proj"})
			require.NoError(t, err)
			out := set.Run(context.Background(), chat.ToolCall{Name: "bash", Arguments: raw}, nil)
			assert.Contains(t, out.Content, "package main\n", "the workspace is shown though the home is hidden")
			assert.Contains(t, out.Content, "Read-only file system")
			assert.NoFileExists(t, filepath.Join(proj, "new"))
		})
	}
}

// TestDiskLimit writes past the disk limit from bash, in one file and in
// many: the command is stopped soon after (with everything it started)
// and the result says so first, naming the flag; below the limit
// nothing happens. RLIMIT_FSIZE stays at 256 MiB, so that a watcher that
// failed would not fill the disk.
func TestDiskLimit(t *testing.T) {
	const limit, fileLimit = 16 << 20, 256 << 20
	limits := sandbox.Limits{Disk: limit, FileSize: fileLimit}
	note := "sandbox limit -sandbox-disk: the command wrote "
	tests := []struct {
		name, command string
		stopped       bool
		written       string // a file or directory of the workspace the command wrote
	}{
		{name: "yes into one file", command: "yes 0123456789abcdef > yes.out", stopped: true, written: "yes.out"},
		{name: "dd", command: "dd if=/dev/zero of=dd.out bs=1M count=200 status=none", stopped: true, written: "dd.out"},
		{name: "many small files", command: "mkdir many; for i in $(seq 200); do head -c 1M /dev/zero > many/f$i; done", stopped: true, written: "many"},
		{name: "a background writer", command: "(yes 0123456789abcdef > bg.out &); sleep 60", stopped: true, written: "bg.out"},
		{name: "below the limit", command: "head -c 4M /dev/zero > small.out; echo ok", written: "small.out"},
	}
	for _, v := range confined {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{Limits: &limits})
			assert.Contains(t, f.sb.String(), "16 MiB written to the disk per command")
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					out := f.bash(t, tt.command)
					size := diskUse(t, filepath.Join(f.ws, tt.written))
					if !tt.stopped {
						assert.False(t, out.IsError, out.Content)
						assert.NotContains(t, out.Content, note)
						assert.Equal(t, "ok\n", out.Content)
						return
					}
					assert.True(t, out.IsError, out.Content)
					assert.True(t, strings.HasPrefix(out.Content, note), "the note comes first: %s", out.Content)
					assert.Contains(t, out.Content, "over its limit of 16 MiB, and was stopped with everything it started")
					assert.Greater(t, size, int64(limit)/2, "it wrote")
					assert.Less(t, size, int64(fileLimit), "it was stopped by the disk limit, not RLIMIT_FSIZE")
					require.NoError(t, os.RemoveAll(filepath.Join(f.ws, tt.written)))
				})
			}
		})
	}
}

// diskUse returns the bytes the file or directory tree p holds on disk.
func diskUse(t *testing.T, p string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Sys().(*syscall.Stat_t).Blocks * 512
		}
		return err
	}))
	return n
}
