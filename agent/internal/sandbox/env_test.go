package sandbox

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/redact"
)

func TestSecretName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want bool
	}{
		{"ANTHROPIC_API_KEY", true},
		{"ANTHROPIC_BASE_URL", true},
		{"OPENAI_ORG", true},
		{"GITHUB_TOKEN", true},
		{"github_token", true},
		{"AWS_SECRET_ACCESS_KEY", true},
		{"MYSECRETS", true},
		{"DB_PASSWORD", true},
		{"PGPASSWD", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", true},
		{"SSH_KEY", true},
		{"PATH", false},
		{"GOFLAGS", false},
		{"KEYBOARD", false},
		{"TOKENIZER_PATH", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, SecretName(tt.name))
		})
	}
}

func TestCurate(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-value-0123456789"
	environ := []string{
		"PATH=/usr/bin",
		"HOME=/home/u",
		"LANG=C.UTF-8",
		"LC_ALL=C",
		"TZ=UTC",
		"GOFLAGS=-mod=mod",
		"GO111MODULE=on",
		"GOOGLE_CLOUD_PROJECT=p",      // not one of Go's variables
		"ANTHROPIC_API_KEY=" + secret, // secret name
		"OPENAI_BASE_URL=http://x",    // secret prefix
		"GITHUB_TOKEN=ghp_x",          // not allowed, and secret
		"LC_PAPER=" + secret,          // allowed name, secret value
		"GOPROXY=https://user:pw@proxy.example/",
		"GONOSUMDB=https://proxy.example/", // a URL without a password
		"HTTPS_PROXY=http://proxy:3128",    // only with network
		"EDITOR=vim",                       // not allowed
		"EXTRA_ONE=1",
		"EXTRA_TWO_TOKEN=2",
		"PAGER=less", // overridden
		"PATH=/second",
		"NOEQUALS",
		"=bad",
		"GOCACHE=/home/u/.cache/go-build",
		"GOTMPDIR=/var/tmp/go",
	}
	red := redact.New(secret)
	tests := []struct {
		name string
		spec envSpec
		want []string
	}{
		{
			name: "no network, no extras",
			spec: envSpec{redactor: red},
			want: []string{"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "LC_ALL=C", "TZ=UTC", "GOFLAGS=-mod=mod", "GO111MODULE=on",
				"GONOSUMDB=https://proxy.example/", "GOCACHE=/home/u/.cache/go-build", "GOTMPDIR=/var/tmp/go",
				"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat"},
		},
		{
			name: "network, extras, set",
			spec: envSpec{network: true, extra: []string{"EXTRA_*"}, redactor: red,
				set: map[string]string{"GOCACHE": "/cache/go-build", "GOTMPDIR": "", "TMPDIR": "/tmp"}},
			want: []string{"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "LC_ALL=C", "TZ=UTC", "GOFLAGS=-mod=mod", "GO111MODULE=on",
				"GONOSUMDB=https://proxy.example/", "HTTPS_PROXY=http://proxy:3128", "EXTRA_ONE=1",
				"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat", "GOCACHE=/cache/go-build", "TMPDIR=/tmp"},
		},
		{
			name: "no redactor: the secret value passes under an allowed name",
			spec: envSpec{},
			want: []string{"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "LC_ALL=C", "TZ=UTC", "GOFLAGS=-mod=mod", "GO111MODULE=on",
				"LC_PAPER=" + secret, "GONOSUMDB=https://proxy.example/", "GOCACHE=/home/u/.cache/go-build", "GOTMPDIR=/var/tmp/go",
				"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, curate(environ, tt.spec))
		})
	}
}

func TestDefaultEnv(t *testing.T) {
	t.Parallel()
	env := DefaultEnv()
	require.Contains(t, env, "PATH")
	require.Contains(t, env, "GO[A-Z0-9]*")
	env[0] = "changed"
	assert.Equal(t, "PATH", DefaultEnv()[0], "DefaultEnv returns a copy")
	for _, name := range env[1:] {
		assert.False(t, SecretName(name), "%s is allowed but looks secret", name)
	}
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Mode
		wantErr string
	}{
		{in: "auto", want: Auto},
		{in: "bwrap", want: Bwrap},
		{in: "off", want: Off},
		{in: "", wantErr: `unknown sandbox mode ""; use auto, bwrap or off`},
		{in: "on", wantErr: `unknown sandbox mode "on"; use auto, bwrap or off`},
		{in: "BWRAP", wantErr: "unknown sandbox mode"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseMode(tt.in)
			var m Mode
			setErr := m.Set(tt.in)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				assert.ErrorContains(t, setErr, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.NoError(t, setErr)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.want, m)
			assert.Equal(t, tt.in, got.String())
		})
	}
	assert.Equal(t, "auto", Mode("").String())
}
