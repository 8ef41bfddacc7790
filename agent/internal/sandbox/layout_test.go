package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/proctest"
)

// mkTree creates the files (ending in "/" for a directory, "-> target"
// for a symbolic link) under root.
func mkTree(t *testing.T, root string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		name, target, isLink := strings.Cut(p, " -> ")
		full := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		switch {
		case isLink:
			require.NoError(t, os.Symlink(target, full))
		case strings.HasSuffix(name, "/"):
			require.NoError(t, os.MkdirAll(full, 0o755))
		default:
			require.NoError(t, os.WriteFile(full, []byte("x"), 0o644))
		}
	}
}

func TestLayoutArgs(t *testing.T) {
	t.Parallel()
	r := proctest.HostDir(t)
	mkTree(t, r,
		"ws/.git/", "ws/secrets/", "ws/key.pem",
		"cache/",
		"out/dir/", "out/file", "out/key_a", "out/key_b",
		"out/link -> dir",
		"out/hidden-parent/ws2/",
		// A home directory with a project, credentials and tools.
		"home/.ssh/id_ed25519", "home/.gitconfig", "home/.env",
		"home/.config/gh/hosts.yml", "home/.config/app/settings.json",
		"home/go/pkg/mod/", "home/.npm/", "home/.cache/agent/proj-01/",
		"home/src/proj/.git/", "home/src/proj/.env", "home/src/proj/sub/key.txt", "home/src/proj/dir/",
		"home/src/proj/link.env -> .env",
		"opt/cargo/bin/", "home/.cargo -> ../opt/cargo",
	)
	h := r + "/home"
	// Under /tmp, which the sandbox replaces: nothing to hide.
	private, err := os.MkdirTemp("/tmp", "fsmgen-sandbox-test-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(private) })
	head := []string{"--unshare-all"}
	mounts := []string{
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
	}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name string
		lay  layout
		dir  string
		want []string
	}{
		{
			name: "nothing hidden, no workspace",
			lay:  layout{},
			dir:  "/",
			want: cat(head, mounts, []string{"--chdir", "/", "--", "cmd"}),
		},
		{
			name: "network and user namespace",
			lay:  layout{network: true, userns: true},
			dir:  "/",
			want: cat(head, []string{"--share-net", "--unshare-user", "--disable-userns"}, mounts, []string{"--chdir", "/", "--", "cmd"}),
		},
		{
			name: "the keyrings' lists in /proc",
			lay:  layout{procKeys: []string{"/proc/keys", "/proc/key-users"}},
			dir:  "/",
			want: cat(head, mounts[:11], []string{"--ro-bind", "/dev/null", "/proc/keys", "--ro-bind", "/dev/null", "/proc/key-users"}, mounts[11:], []string{"--chdir", "/", "--", "cmd"}),
		},
		{
			name: "seccomp filter",
			lay:  layout{seccomp: true},
			dir:  "/",
			want: cat(head, mounts[:4], []string{"--seccomp", "3"}, mounts[4:], []string{"--chdir", "/", "--", "cmd"}),
		},
		{
			name: "workspace, cache, .git and hidden paths in and out",
			lay: layout{
				workspace: r + "/ws",
				writable:  []string{r + "/ws", r + "/cache"},
				hidden: []string{
					r + "/out/file", r + "/out/link", r + "/out/dir", // the link is the directory: hidden once
					r + "/out/key_*", r + "/ws/secrets", r + "/ws/key.pem",
					r + "/missing", private, r + "/out/[", // skipped: missing, under /tmp, bad pattern
				},
			},
			dir: r + "/ws",
			want: cat(head, mounts, []string{
				"--bind", r + "/cache", r + "/cache",
				"--tmpfs", r + "/out/dir",
				"--ro-bind", "/dev/null", r + "/out/file",
				"--ro-bind", "/dev/null", r + "/out/key_a",
				"--ro-bind", "/dev/null", r + "/out/key_b",
				"--bind", r + "/ws", r + "/ws",
				"--ro-bind", r + "/ws/.git", r + "/ws/.git",
				"--ro-bind", "/dev/null", r + "/ws/key.pem",
				"--tmpfs", r + "/ws/secrets",
				"--remount-ro", r + "/out/dir",
				"--remount-ro", r + "/ws/secrets",
				"--chdir", r + "/ws", "--", "cmd",
			}),
		},
		{
			name: "a workspace inside a hidden directory",
			lay: layout{
				workspace: r + "/out/hidden-parent/ws2",
				writable:  []string{r + "/out/hidden-parent/ws2"},
				hidden:    []string{r + "/out/hidden-parent"},
			},
			dir: r + "/out/hidden-parent/ws2",
			want: cat(head, mounts, []string{
				"--tmpfs", r + "/out/hidden-parent",
				"--bind", r + "/out/hidden-parent/ws2", r + "/out/hidden-parent/ws2",
				"--remount-ro", r + "/out/hidden-parent",
				"--chdir", r + "/out/hidden-parent/ws2", "--", "cmd",
			}),
		},
		{
			name: "a read-only workspace: visible anyway, not mounted again",
			lay:  layout{workspace: r + "/ws", readOnly: []string{r + "/ws"}, writable: []string{r + "/cache"}},
			dir:  r + "/ws",
			want: cat(head, mounts, []string{
				"--bind", r + "/cache", r + "/cache",
				"--chdir", r + "/ws", "--", "cmd",
			}),
		},
		{
			name: "a read-only workspace in a hidden directory and one under /tmp",
			lay: layout{
				workspace: r + "/out/hidden-parent/ws2",
				readOnly:  []string{r + "/out/hidden-parent/ws2", private},
				hidden:    []string{r + "/out/hidden-parent"},
			},
			dir: r + "/out/hidden-parent/ws2",
			want: cat(head, mounts, []string{
				"--ro-bind", private, private, // paths in order: /tmp/… before /var/tmp/…
				"--tmpfs", r + "/out/hidden-parent",
				"--ro-bind", r + "/out/hidden-parent/ws2", r + "/out/hidden-parent/ws2",
				"--remount-ro", r + "/out/hidden-parent",
				"--chdir", r + "/out/hidden-parent/ws2", "--", "cmd",
			}),
		},
		{
			// Only the home's tmpfs hides what it holds; what is shown in
			// it is mounted back, the more specific path winning.
			name: "an empty home, exposures, masked files",
			lay: layout{
				workspace: h + "/src/proj",
				writable:  []string{h + "/src/proj", h + "/.cache/agent/proj-01"},
				hidden: []string{
					h, h + "/.ssh", h + "/.gitconfig", h + "/.env", h + "/.config/gh", // inside the home: skipped but for gh, inside an exposure
					h + "/.npm", // exposed on its very path: the exposure wins
				},
				expose: []Exposure{
					{Path: h + "/go/pkg/mod"}, {Path: h + "/.config"}, {Path: h + "/.npm", Writable: true},
					{Path: h + "/.cargo"},       // a link: its target is shown at both paths
					{Path: r + "/out/file"},     // not hidden: skipped
					{Path: h + "/src/proj/dir"}, // read-only inside the writable workspace
					{Path: r + "/missing"},      // gone: skipped
				},
				masked: []string{
					h + "/src/proj/.env", h + "/src/proj/link.env", // the same file, masked once
					h + "/src/proj/sub/key.txt",
					h + "/src/proj/dir", h + "/src/proj/missing", h + "/.env", // not a file, missing, hidden: skipped
				},
				notice: r + "/notice",
			},
			dir: h + "/src/proj",
			want: cat(head, mounts, []string{
				"--tmpfs", h,
				"--bind", h + "/.cache/agent/proj-01", h + "/.cache/agent/proj-01",
				"--ro-bind", r + "/opt/cargo", h + "/.cargo",
				"--ro-bind", h + "/.config", h + "/.config",
				"--tmpfs", h + "/.config/gh",
				"--bind", h + "/.npm", h + "/.npm",
				"--ro-bind", h + "/go/pkg/mod", h + "/go/pkg/mod",
				"--bind", h + "/src/proj", h + "/src/proj",
				"--ro-bind", r + "/notice", h + "/src/proj/.env",
				"--ro-bind", h + "/src/proj/.git", h + "/src/proj/.git",
				"--ro-bind", h + "/src/proj/dir", h + "/src/proj/dir",
				"--ro-bind", r + "/notice", h + "/src/proj/sub/key.txt",
				"--remount-ro", h,
				"--remount-ro", h + "/.config/gh",
				"--chdir", h + "/src/proj", "--", "cmd",
			}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.lay.args(tt.dir, []string{"cmd"}))
		})
	}
}

func TestGitPaths(t *testing.T) {
	t.Parallel()
	r := proctest.HostDir(t)
	mkTree(t, r,
		"plain/.git/",
		"worktree/.git", // rewritten below: gitdir outside
		"separate/.git", // rewritten below: gitdir inside
		"separate/.realgit/",
		"relative/.git", // rewritten below: relative gitdir inside
		"relative/sub/gitdir/",
		"linked/.git -> .store",
		"linked/.store/",
		"none/",
		"repo/.git/", "repo/sub/",
		"elsewhere/gitdir/",
	)
	require.NoError(t, os.WriteFile(r+"/worktree/.git", []byte("gitdir: "+r+"/elsewhere/gitdir\n"), 0o644))
	require.NoError(t, os.WriteFile(r+"/separate/.git", []byte("gitdir: "+r+"/separate/.realgit\n"), 0o644))
	require.NoError(t, os.WriteFile(r+"/relative/.git", []byte("gitdir: sub/gitdir"), 0o644))
	tests := []struct {
		ws   string
		want []string
	}{
		{ws: "plain", want: []string{r + "/plain/.git"}},
		{ws: "worktree", want: []string{r + "/worktree/.git"}},
		{ws: "separate", want: []string{r + "/separate/.git", r + "/separate/.realgit"}},
		{ws: "relative", want: []string{r + "/relative/.git", r + "/relative/sub/gitdir"}},
		{ws: "linked", want: []string{r + "/linked/.store"}},
		{ws: "none", want: nil},
		{ws: "repo/sub", want: nil}, // the repository's .git is outside the workspace
	}
	for _, tt := range tests {
		t.Run(tt.ws, func(t *testing.T) {
			t.Parallel()
			ws := filepath.Join(r, tt.ws)
			assert.Equal(t, tt.want, gitPaths(ws, []string{ws}))
		})
	}
	assert.Nil(t, gitPaths("", nil))
}

func TestExpandHidden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		paths   []string
		home    string
		want    []string
		wantErr string
	}{
		{name: "absolute and home", paths: []string{"/etc/shadow", "~/.ssh", "/a/../b/"}, home: "/home/u", want: []string{"/etc/shadow", "/home/u/.ssh", "/b"}},
		{name: "no home: home paths dropped", paths: []string{"~/.ssh", "/etc/shadow"}, want: []string{"/etc/shadow"}},
		{name: "the home itself", paths: []string{"~", "~/"}, home: "/home/u/", want: []string{"/home/u", "/home/u"}},
		{name: "a home at the root hides nothing", paths: []string{"~", "~/.ssh", "/run"}, home: "/", want: []string{"/run"}},
		{name: "relative", paths: []string{"threads"}, home: "/h", wantErr: `hidden path "threads" is neither absolute nor in the home directory`},
		{name: "tilde user", paths: []string{"~root/x"}, home: "/h", wantErr: "neither absolute"},
		{name: "root", paths: []string{"/x/.."}, home: "/h", wantErr: `hidden path "/" would hide everything`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := expandHidden(tt.paths, tt.home)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDefaultHidden(t *testing.T) {
	t.Parallel()
	h := DefaultHidden()
	assert.Equal(t, []string{"~", "/home", "/root"}, h[:3], "deny by default: the home directories first")
	for _, want := range []string{
		// What issue 20 found readable outside the list.
		"~/.config/environment.d", "~/.pam_environment", "~/.env", "~/.config/zsh", "~/.bashrc.d", "~/.gitconfig",
		"~/.config/io.datasette.llm", "~/.aider.conf.yml", "~/.local/share/fsmgen-agent",
		"/etc/shadow", "/etc/gshadow", "/run", "~/.ssh", "~/.gnupg", "~/.aws", "~/.netrc", "~/.git-credentials", "~/.config/gh", "~/.docker", "~/.kube",
		// Shell startup files, where API keys get exported.
		"~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.profile", "~/.zshrc", "~/.zprofile", "~/.zshenv", "~/.zlogin", "~/.config/fish",
		// Credential stores the review found readable, and their kin.
		"~/.claude", "~/.codex", "~/.huggingface", "~/.cache/huggingface/token", "~/.m2/settings.xml", "~/.gradle/gradle.properties",
		"~/.config/rclone", "~/.config/op", "~/.s3cfg", "~/.boto", "~/.oci", "~/.config/doctl", "~/.config/hcloud", "~/.netlify", "~/.vercel",
	} {
		assert.Contains(t, h, want)
	}
	assert.Len(t, slices.Compact(slices.Sorted(slices.Values(h))), len(h), "no duplicates")
	_, err := expandHidden(h, "/home/u")
	require.NoError(t, err, "the default list is valid")
	h[0] = "changed"
	assert.Equal(t, "~", DefaultHidden()[0], "DefaultHidden returns a copy")
}

func TestParseExposure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Exposure
		wantErr string
	}{
		{in: "~/.cargo/bin", want: Exposure{Path: "~/.cargo/bin"}},
		{in: "/opt/sdk:ro", want: Exposure{Path: "/opt/sdk"}},
		{in: "~/.npm:rw", want: Exposure{Path: "~/.npm", Writable: true}},
		{in: "/a:b", want: Exposure{Path: "/a:b"}},
		{in: ":rw", wantErr: `exposed path ":rw" is empty; give a path, e.g. ~/.cargo/bin or ~/.npm:rw`},
		{in: "", wantErr: "is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseExposure(tt.in)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			back, err := ParseExposure(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, back, "String reads back")
		})
	}
}

func TestDefaultExpose(t *testing.T) {
	t.Parallel()
	r := proctest.HostDir(t)
	mkTree(t, r, "home/go/pkg/mod/", "gopath/pkg/mod/", "modcache/", "goroot/")
	tests := []struct {
		name    string
		environ []string
		want    []Exposure
	}{
		{name: "GOMODCACHE", environ: []string{"GOMODCACHE=" + r + "/modcache", "GOPATH=" + r + "/gopath", "HOME=" + r + "/home"}, want: []Exposure{{Path: r + "/modcache"}}},
		{name: "GOPATH's first entry", environ: []string{"GOPATH=" + r + "/gopath:/elsewhere", "HOME=" + r + "/home"}, want: []Exposure{{Path: r + "/gopath/pkg/mod"}}},
		{name: "the home's go", environ: []string{"HOME=" + r + "/home", "GOROOT=" + r + "/goroot"}, want: []Exposure{{Path: r + "/home/go/pkg/mod"}, {Path: r + "/goroot"}}},
		{name: "missing or relative", environ: []string{"GOMODCACHE=rel", "GOPATH=" + r + "/none", "GOROOT=" + r + "/none"}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, DefaultExpose(tt.environ))
		})
	}
}

func TestExpandExposures(t *testing.T) {
	t.Parallel()
	r := proctest.HostDir(t)
	mkTree(t, r, "home/.cargo/bin/", "opt/")
	tests := []struct {
		name    string
		in      []Exposure
		home    string
		want    []Exposure
		wantErr string
	}{
		{name: "home and absolute", in: []Exposure{{Path: "~/.cargo/bin"}, {Path: r + "/opt/", Writable: true}}, home: r + "/home",
			want: []Exposure{{Path: r + "/home/.cargo/bin"}, {Path: r + "/opt", Writable: true}}},
		{name: "missing", in: []Exposure{{Path: "~/.rustup"}}, home: r + "/home",
			wantErr: `exposed path "~/.rustup": stat ` + r + `/home/.rustup: no such file or directory; give an existing file or directory (-sandbox-expose)`},
		{name: "relative", in: []Exposure{{Path: "bin"}}, home: r + "/home", wantErr: `exposed path "bin" is neither absolute nor in the home directory; give an absolute path or one starting with ~/ (-sandbox-expose)`},
		{name: "no home", in: []Exposure{{Path: "~/.cargo"}}, wantErr: `exposed path "~/.cargo" is in the home directory, which is unknown here (set HOME); give an absolute path (-sandbox-expose)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := expandExposures(tt.in, tt.home)
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
