package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
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
