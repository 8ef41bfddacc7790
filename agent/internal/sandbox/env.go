package sandbox

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/agent/internal/redact"
)

// defaultEnv is the allow-list of variables a command inherits from the
// agent: exact names, or prefixes ending in "*". Go's own variables
// (GOPATH, GOFLAGS, GO111MODULE, ...) are matched by goVar instead, so that
// GOOGLE_... variables are not let through.
var defaultEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL",
	"LANG", "LANGUAGE", "LC_*", "TERM", "COLORTERM", "NO_COLOR", "TZ", "TMPDIR",
	"CGO_*", "CC", "CXX", "AR", "PKG_CONFIG_PATH",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO",
}

// proxyEnv is let through only when the network is allowed.
var proxyEnv = []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy"}

// DefaultEnv returns the names of the variables a command inherits from the
// agent's environment by default, a trailing "*" standing for any suffix.
// "GO[A-Z0-9]*" stands for Go's own variables (GOPATH, GOFLAGS,
// GO111MODULE, ...). The proxy variables are added when the network is
// allowed. Whatever the list, a variable is dropped when its name looks
// secret (see [SecretName]), when its value holds a configured secret, or
// when its value holds a URL with a password.
func DefaultEnv() []string {
	return append(slices.Clone(defaultEnv), "GO[A-Z0-9]*")
}

// forcedEnv is set for every command, whatever the agent's environment:
// git never prompts and nothing pages.
var forcedEnv = []string{"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat"}

// goVar matches the names of Go's own variables.
var goVar = regexp.MustCompile(`^GO[A-Z0-9]*$`)

// urlPassword matches a URL carrying a password (scheme://user:pass@host).
var urlPassword = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^/\s@:]*:[^/\s@]*@`)

// SecretName reports whether an environment variable's name looks like it
// holds a secret: it ends in _KEY or _TOKEN, contains SECRET, PASSWORD,
// PASSWD or CREDENTIAL, or starts with ANTHROPIC_ or OPENAI_ (compared
// without regard to case). Such a variable never reaches a command.
func SecretName(name string) bool {
	n := strings.ToUpper(name)
	switch {
	case strings.HasSuffix(n, "_KEY"), strings.HasSuffix(n, "_TOKEN"),
		strings.Contains(n, "SECRET"), strings.Contains(n, "PASSWORD"), strings.Contains(n, "PASSWD"),
		strings.Contains(n, "CREDENTIAL"),
		strings.HasPrefix(n, "ANTHROPIC_"), strings.HasPrefix(n, "OPENAI_"):
		return true
	}
	return false
}

// allowed reports whether name is on the allow-list (defaultEnv, Go's
// variables, the proxies when network is set, and extra).
func allowed(name string, network bool, extra []string) bool {
	if goVar.MatchString(name) {
		return true
	}
	match := func(pats []string) bool {
		for _, p := range pats {
			if prefix, ok := strings.CutSuffix(p, "*"); ok {
				if strings.HasPrefix(name, prefix) {
					return true
				}
			} else if name == p {
				return true
			}
		}
		return false
	}
	return match(defaultEnv) || match(extra) || (network && match(proxyEnv))
}

// envSpec is what curate needs to build a command's environment.
type envSpec struct {
	network  bool
	extra    []string          // extra allowed names
	redactor *redact.Redactor  // values holding a secret are dropped
	set      map[string]string // set last, overriding the environment; "" removes
}

// curate returns the environment a command gets from environ: the allowed
// variables that neither look nor hold secret, in environ's order, then the
// forced and the set ones (sorted), which override any of the same name.
func curate(environ []string, spec envSpec) []string {
	override := map[string]bool{}
	var tail []string
	for _, kv := range forcedEnv {
		name, _, _ := strings.Cut(kv, "=")
		override[name] = true
		tail = append(tail, kv)
	}
	for _, name := range slices.Sorted(maps.Keys(spec.set)) {
		override[name] = true
		if v := spec.set[name]; v != "" {
			tail = append(tail, name+"="+v)
		}
	}
	out := make([]string, 0, len(environ)/2+len(tail))
	seen := map[string]bool{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || seen[name] || override[name] {
			continue
		}
		if !allowed(name, spec.network, spec.extra) || SecretName(name) ||
			urlPassword.MatchString(value) || spec.redactor.Contains([]byte(kv)) {
			continue
		}
		seen[name] = true
		out = append(out, kv)
	}
	return append(out, tail...)
}
