package app

import (
	"context"
	"encoding/base32"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox/sandboxtest"
	"github.com/fsmgen/fsmgen/internal/gittest"
	"github.com/fsmgen/fsmgen/internal/proctest"
)

// The tests of issue 20's sandbox findings, each through the agent as a
// user runs it, with default flags but where a test says otherwise.

// bashCalls returns one reply calling bash once for each command, with
// IDs c_0, c_1, ...
func bashCalls(t *testing.T, commands ...string) fakellm.Reply {
	t.Helper()
	var calls []fakellm.ToolCall
	for i, c := range commands {
		args, err := json.Marshal(map[string]string{"command": c})
		require.NoError(t, err)
		calls = append(calls, fakellm.ToolCall{ID: "c_" + string(rune('0'+i)), Name: "bash", Args: string(args)})
	}
	return fakellm.Reply{ToolCalls: calls}
}

// toolResults returns the results the agent sent back in its second
// request, by call ID.
func toolResults(t *testing.T, e *env) map[string]string {
	t.Helper()
	reqs := e.srv.Requests()
	require.GreaterOrEqual(t, len(reqs), 2, "the agent did not send the tools' results")
	results := map[string]string{}
	for _, m := range reqs[1].Messages {
		if m.ToolCallID != "" {
			results[m.ToolCallID] = m.Text
		}
	}
	return results
}

// TestKeyringOutOfReach (issue 20 item 1): a key in the session keyring
// the agent was started in (a login session's, say) cannot be read by
// the model's commands. The keyring is not namespaced; the sandbox's
// seccomp filter refuses keyctl, add_key and request_key.
func TestKeyringOutOfReach(t *testing.T) {
	t.Parallel()
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	const desc, payload = "fsmgen-agent-test", "KEYRING-SECRET-4e5f6a7b"
	reader := sandboxtest.KeyReader(t, proctest.HostDir(t), desc)
	e := newEnv(t, fakellm.Anthropic, nil,
		bashCalls(t, reader, "cat /proc/keys 2>&1 | grep -c "+desc+" || true"),
		fakellm.Reply{Text: "Done."})
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := e.command(ctx, "-p", "Read the keyring.")
	sandboxtest.WithSessionKey(t, cmd, desc, payload)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	results := toolResults(t, e)
	assert.Contains(t, results["c_0"], "keyring: search: operation not permitted")
	assert.Equal(t, "0\n", results["c_1"], "/proc/keys lists the key")
	for i, req := range e.srv.Requests() {
		assert.False(t, strings.Contains(string(req.Body), payload), "request %d holds the key", i)
	}
	assert.False(t, strings.Contains(string(out), payload), "the agent showed the key")
}

// TestCredentialsOutOfReach (issue 20 item 4): the model's commands see an
// empty home directory, not the user's with a list of hidden paths, so
// that credentials the list never named stay out of reach; and the files
// of the workspace that hold the API key (a .env the user keeps there,
// ignored by git) are masked from bash and the file tools alike, so that
// no encoding of the key the redactor does not know can be made of them.
func TestCredentialsOutOfReach(t *testing.T) {
	t.Parallel()
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	home := proctest.HostDir(t)
	secrets := map[string]string{
		".config/environment.d/keys.conf":            "OPENAI_API_KEY=SECRET-ENVD",
		".pam_environment":                           "HF_TOKEN DEFAULT=SECRET-PAM",
		".env":                                       "GITHUB_TOKEN=SECRET-HOMEENV",
		".config/zsh/.zshrc":                         "export GITHUB_TOKEN=SECRET-ZDOTDIR",
		".bashrc.d/keys.sh":                          "export API_TOKEN=SECRET-BASHRCD",
		".gitconfig":                                 "[url \"https://x:SECRET-GITCONFIG@github.com/\"]\n\tinsteadOf = https://github.com/\n",
		".config/io.datasette.llm/keys.json":         `{"openai": "SECRET-LLM"}`,
		".aider.conf.yml":                            "openai-api-key: SECRET-AIDER",
		".local/share/fsmgen-agent/threads/OLD.json": `{"text": "SECRET-OLDTHREAD"}`,
		".local/share/fsmgen-agent/threads/OLD.events.jsonl": `{"text": "SECRET-OLDLOG"}`,
		".config/unknown-tool/token":                         "SECRET-UNKNOWN", // on no list
	}
	for name, content := range secrets {
		p := filepath.Join(home, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content+"\n"), 0o600))
	}
	e := newEnv(t, fakellm.OpenAI, map[string]string{".gitignore": ".env\n", "main.go": "package main\n"})
	require.NoError(t, os.WriteFile(filepath.Join(e.ws, ".env"), []byte("OPENAI_API_KEY="+testKey+"\n"), 0o600))
	encoded := strings.TrimRight(base32.StdEncoding.EncodeToString([]byte(testKey)), "=")

	reply := bashCalls(t,
		"grep -rs SECRET ~ 2>/dev/null | cut -c1-300; ls -A ~; true",
		"base32 -w0 .env; rev .env; true",
		"cat main.go")
	reply.ToolCalls = append(reply.ToolCalls,
		fakellm.ToolCall{ID: "c_read", Name: "read_file", Args: `{"path": ".env"}`},
		fakellm.ToolCall{ID: "c_list", Name: "list_files", Args: `{}`})
	e.srv.Add(reply, fakellm.Reply{Text: "Done."})
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := e.command(ctx, "-p", "Look for credentials.")
	cmd.Env = append(cmd.Env, "HOME="+home)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "agent: masked from the model (they hold the API key): .env\n")

	results := toolResults(t, e)
	assert.Equal(t, "(no output)", results["c_0"], "the home directory is empty and holds no secret")
	assert.Equal(t, "package main\n", results["c_2"], "the rest of the workspace is there")
	assert.Contains(t, results["c_read"], `".env" is masked: it holds the agent's API key`)
	assert.Contains(t, results["c_list"], ".env  (masked: it holds the agent's API key")
	for i, req := range e.srv.Requests() {
		body := string(req.Body)
		assert.False(t, strings.Contains(body, "SECRET-"), "request %d holds a credential of the home directory", i)
		assert.False(t, strings.Contains(body, encoded[:16]), "request %d holds the key in base32", i)
		assert.False(t, strings.Contains(body, reverse(testKey)[:16]), "request %d holds the key reversed", i)
	}
	assert.Equal(t, "OPENAI_API_KEY="+testKey+"\n", gittest.ReadFile(t, e.ws, ".env"), "the .env is left as it was")
	e.checkNoSecret(t)
}

// reverse returns s with its bytes in reverse order.
func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// TestSandboxExpose checks -sandbox-expose: the agent names the
// directories of PATH that commands cannot see, and an exposed one works,
// read-only.
func TestSandboxExpose(t *testing.T) {
	t.Parallel()
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	home := proctest.HostDir(t)
	bin := filepath.Join(home, "tools", "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "hello"), []byte("#!/bin/sh\necho hello from the home\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("SECRET-GITCONFIG\n"), 0o600))
	tests := []struct {
		name       string
		args       []string
		wantStderr string
		want       map[string]string
	}{
		{
			name:       "hidden",
			wantStderr: "agent: PATH: bash does not see " + bin + " (-sandbox-expose shows it)\n",
			want:       map[string]string{"c_0": "hello: command not found", "c_2": "No such file or directory"},
		},
		{
			name: "exposed",
			args: []string{"-sandbox-expose", "~/tools/bin", "-sandbox-expose=~"},
			want: map[string]string{"c_0": "hello from the home\n", "c_1": "refused\n", "c_2": "Permission denied"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, nil,
				bashCalls(t, "hello", "{ echo x > ~/tools/bin/new; } 2>/dev/null || echo refused", "cat ~/.gitconfig"),
				fakellm.Reply{Text: "Done."})
			ctx, cancel := context.WithTimeout(context.Background(), runLimit)
			defer cancel()
			cmd := e.command(ctx, append(tt.args, "-p", "Say hello.")...)
			cmd.Env = append(cmd.Env, "HOME="+home, "PATH="+bin+string(os.PathListSeparator)+pathOutsideHomes())
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			if tt.wantStderr != "" {
				assert.Contains(t, string(out), tt.wantStderr)
			} else {
				assert.NotContains(t, string(out), "bash does not see")
			}
			results := toolResults(t, e)
			for id, want := range tt.want {
				assert.Contains(t, results[id], want, id)
			}
			assert.NotContains(t, results["c_2"], "SECRET", "the whole home exposed, ~/.gitconfig stays hidden")
			assert.NoFileExists(t, filepath.Join(bin, "new"))
		})
	}
}

// pathOutsideHomes returns $PATH without the directories the sandbox hides
// by default as home directories (/root, /home).
func pathOutsideHomes() string {
	var keep []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir != "/root" && dir != "/home" && !strings.HasPrefix(dir, "/root/") && !strings.HasPrefix(dir, "/home/") {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// TestSandboxFlags checks the sandbox's flags: their defaults, what they
// set, and the values refused.
func TestSandboxFlags(t *testing.T) {
	t.Parallel()
	def := sandbox.DefaultLimits()
	tests := []struct {
		args    []string
		want    sandbox.Limits
		expose  []sandbox.Exposure
		wantErr string
	}{
		{args: nil, want: def},
		{args: []string{"-sandbox-memory", "2GiB", "-sandbox-processes", "64", "-sandbox-cpu", "90s", "-sandbox-file-size", "16MiB", "-sandbox-tmp-size", "64MiB", "-sandbox-disk", "4GiB"},
			want: sandbox.Limits{Memory: 2 << 30, Processes: 64, CPU: 90 * time.Second, FileSize: 16 << 20, TmpSize: 64 << 20, Disk: 4 << 30}},
		{args: []string{"-sandbox-memory", "0", "-sandbox-processes", "0", "-sandbox-cpu", "0", "-sandbox-file-size", "0", "-sandbox-tmp-size", "0", "-sandbox-disk", "0"},
			want: sandbox.Limits{}},
		{args: []string{"-sandbox-disk", "lots"}, wantErr: `invalid value "lots" for flag -sandbox-disk: "lots" is not a size`},
		{args: []string{"-sandbox-expose", "~/.cargo/bin", "-sandbox-expose=/opt/x:rw"}, want: def,
			expose: []sandbox.Exposure{{Path: "~/.cargo/bin"}, {Path: "/opt/x", Writable: true}}},
		{args: []string{"-sandbox-memory", "lots"}, wantErr: `invalid value "lots" for flag -sandbox-memory: "lots" is not a size: give a number of bytes, e.g. 512MiB or 2GiB, or 0 for no limit`},
		{args: []string{"-sandbox-processes", "-1"}, wantErr: "agent: -sandbox-processes must be 0 (no limit) or more\n"},
		{args: []string{"-sandbox-cpu", "-1s"}, wantErr: "agent: -sandbox-cpu must be 0 (no limit) or more\n"},
		{args: []string{"-sandbox-expose", ":rw"}, wantErr: `invalid value ":rw" for flag -sandbox-expose: exposed path ":rw" is empty`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			var stderr strings.Builder
			o, code := parseFlags(append(tt.args, "-p", "Hi."), &stderr)
			if tt.wantErr != "" {
				assert.Equal(t, exitUsage, code)
				assert.Contains(t, stderr.String(), tt.wantErr)
				return
			}
			require.Equal(t, -1, code, stderr.String())
			var opt sandbox.Options
			o.sandboxFlags.apply(&opt)
			require.NotNil(t, opt.Limits)
			assert.Equal(t, tt.want, *opt.Limits)
			assert.Equal(t, append(sandbox.DefaultExpose(nil), tt.expose...), opt.Expose)
		})
	}
}

// TestResourceLimits (issue 20 item 9): with default flags, a command can
// no longer start 3,000 processes, allocate 2 GiB or put 600 MiB in its
// /tmp (host memory); the CPU time and file size limits stop a process;
// each limit reached is a message to the model and, on the first line of
// the result, to the user, naming the flag that raises it.
func TestResourceLimits(t *testing.T) {
	t.Parallel()
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl is not installed") // Debian's perl-base is essential
	}
	commands := []string{
		// 3,000 processes at once, without the half minute bash retries a
		// refused fork for.
		`perl -e 'my $n = 0; for (1..3000) { my $p = fork; last unless defined $p; if (!$p) { sleep 20; exit } $n++ } print "started $n\n"'`,
		`perl -e '$x = "a" x (2 << 30); print length($x), "\n"'`,
		`head -c 600M /dev/zero > /tmp/big; stat -c %s /tmp/big`,
	}
	e := newEnv(t, fakellm.Anthropic, nil, bashCalls(t, commands...), fakellm.Reply{Text: "Done."})
	r := e.run(t, "", "-p", "Use a lot.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stderr, "limits: 1 GiB of memory per process, 1024 processes")
	results := toolResults(t, e)
	started := regexp.MustCompile(`started (\d+)`).FindStringSubmatch(results["c_0"])
	require.Len(t, started, 2, results["c_0"])
	n, err := strconv.Atoi(started[1])
	require.NoError(t, err)
	assert.Less(t, n, 1024, "processes started at once")
	assert.Contains(t, results["c_0"], "-sandbox-processes: the command reached its limit of 1024 processes")
	assert.NotContains(t, results["c_1"], "2147483648", "2 GiB allocated")
	assert.Contains(t, results["c_1"], "sandbox limit -sandbox-memory: a process may have run out of its 1 GiB of memory")
	assert.NotContains(t, results["c_2"], "629145600", "600 MiB in /tmp")
	assert.Contains(t, results["c_2"], "-sandbox-tmp-size: the command may have filled its /tmp of 512 MiB")
	for _, flag := range []string{"-sandbox-processes", "-sandbox-memory", "-sandbox-tmp-size"} {
		assert.Regexp(t, "(?m)^  [✓✗] bash: .*"+flag, r.stderr, "the user is told which flag")
	}

	// Lower limits, for the CPU time and the size of a file.
	e = newEnv(t, fakellm.OpenAI, nil,
		bashCalls(t, "while :; do :; done", "head -c 3M /dev/zero > big; stat -c %s big"),
		fakellm.Reply{Text: "Done."})
	r = e.run(t, "", "-sandbox-cpu", "1s", "-sandbox-file-size", "1MiB", "-p", "Spin.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	results = toolResults(t, e)
	assert.Contains(t, results["c_0"], "sandbox limit -sandbox-cpu: a process used its 1s of CPU time and was killed")
	assert.Contains(t, results["c_1"], "sandbox limit -sandbox-file-size: a process tried to write a file over 1 MiB and was stopped")
	assert.Contains(t, results["c_1"], "1048576\n")
	assert.Regexp(t, "(?m)^  ✗ bash: sandbox limit -sandbox-cpu: ", r.stderr)
}

// TestDiskLimit (issue 29 item 4): a command that writes past
// -sandbox-disk, in one file or in many, is stopped with everything it
// started; the model is told which flag raises the limit, and so is the
// user, on the first line of the result. The file size limit is kept at
// 256 MiB, so that a failure fills no disk.
func TestDiskLimit(t *testing.T) {
	t.Parallel()
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	e := newEnv(t, fakellm.Anthropic, nil,
		bashCalls(t, "yes 0123456789abcdef > big; echo never", "for i in $(seq 100); do head -c 1M /dev/zero > f$i; done; echo never"),
		fakellm.Reply{Text: "Done."})
	r := e.run(t, "", "-sandbox-disk", "16MiB", "-sandbox-file-size", "256MiB", "-p", "Fill the disk.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stderr, "16 MiB written to the disk per command")
	results := toolResults(t, e)
	for _, id := range []string{"c_0", "c_1"} {
		assert.True(t, strings.HasPrefix(results[id], "sandbox limit -sandbox-disk: the command wrote "), results[id])
		assert.Contains(t, results[id], "over its limit of 16 MiB, and was stopped with everything it started")
		assert.NotContains(t, results[id], "never")
	}
	fi, err := os.Stat(filepath.Join(e.ws, "big"))
	require.NoError(t, err)
	assert.Less(t, fi.Size(), int64(256<<20), "stopped by the disk limit")
	assert.Regexp(t, "(?m)^  ✗ bash: sandbox limit -sandbox-disk: ", r.stderr, "the user is told")
}

// TestOwnFilesHidden (issue 29 item 4): the agent's own files of an
// earlier session — its event log next to the workspace, and a log, a
// journal and its lock copied into the workspace — are out of the next
// session's model's reach: bash cannot read the log outside (hidden), and
// reads a notice in place of those inside, which the file tools refuse.
func TestOwnFilesHidden(t *testing.T) {
	t.Parallel()
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	const marker = "MARKER-ONE-7d1f"
	base := proctest.HostDir(t)
	ws := filepath.Join(base, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	gittest.Git(t, ws, "init", "--quiet", "--initial-branch=main")
	gittest.Git(t, ws, "config", "user.name", "Test User")
	gittest.Git(t, ws, "config", "user.email", "test@example.com")
	gittest.Git(t, ws, "commit", "--quiet", "--allow-empty", "-m", "initial")

	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "one"})
	e.ws = ws
	first := filepath.Join(base, "first.events.jsonl")
	r := e.run(t, "", "-log", first, "-p", "Remember "+marker+".")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	id := e.onlyThread(t)
	journal, err := os.ReadFile(filepath.Join(e.threads, id+".journal"))
	require.NoError(t, err)
	require.Contains(t, string(journal), marker)
	log, err := os.ReadFile(first)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "saved"), 0o755))
	for name, data := range map[string][]byte{"old.events.jsonl": log, "saved/" + id + ".journal": journal, "saved/" + id + ".lock": nil} {
		require.NoError(t, os.WriteFile(filepath.Join(ws, name), data, 0o644))
	}

	e.srv = fakellm.New(t, fakellm.Anthropic,
		bashCalls(t, "cat ../first.events.jsonl; true", "cat old.events.jsonl saved/*; true"),
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "r_0", Name: "read_file", Args: `{"path":"old.events.jsonl"}`}, {ID: "r_1", Name: "read_file", Args: `{"path":"saved/` + id + `.journal"}`}}},
		fakellm.Reply{Text: "Done."})
	r = e.run(t, "", "-log", filepath.Join(base, "second.events.jsonl"), "-p", "Read the old logs.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stderr, "masked from the model (the agent's own event logs, journals and locks, which hold whole conversations): old.events.jsonl, saved/"+id+".journal, saved/"+id+".lock")
	results := toolResults(t, e)
	assert.Contains(t, results["c_0"], "first.events.jsonl", "the earlier log cannot be opened")
	assert.Equal(t, 3, strings.Count(results["c_1"], sandbox.MaskNotice), results["c_1"])
	reqs := e.srv.Requests()
	require.Len(t, reqs, 3)
	var reads []string
	for _, m := range reqs[2].Messages {
		if strings.HasPrefix(m.ToolCallID, "r_") {
			reads = append(reads, m.Text)
		}
	}
	require.Len(t, reads, 2)
	for _, text := range reads {
		assert.Contains(t, text, "is masked: it is one of the agent's own files")
	}
	for i, req := range reqs {
		assert.NotContains(t, string(req.Body), marker, "request %d holds the earlier session's words", i)
	}
}
