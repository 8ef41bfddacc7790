package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fsmgen/fsmgen/internal/atomicfile"
)

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

// defaultGOPROXY is Go's GOPROXY when the environment sets none.
const defaultGOPROXY = "https://proxy.golang.org,direct"

// toolchainEnv returns the variables that keep the toolchains' caches in
// cache, a workspace's cache directory, so that they stay warm from one
// session to the next and are the workspace's alone, never the user's
// own (a sandboxed build must not poison what the user's builds trust):
// Go's build cache (GOCACHE) and module cache (GOMODCACHE), npm's, pip's
// and cargo's (CARGO_HOME: its registry and downloads). Go's module cache
// is filled through GOPROXY: first from the user's module cache (its
// download directory, read-only), when commands see it (see
// DefaultExpose), so that what the user downloaded builds without the
// network, then from the proxies of environ (the curated environment).
func toolchainEnv(cache string, environ []string, visible func(string) bool) map[string]string {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	out := map[string]string{
		"XDG_CACHE_HOME":   cache,
		"GOCACHE":          filepath.Join(cache, "go-build"),
		"GOMODCACHE":       filepath.Join(cache, "go-mod"),
		"npm_config_cache": filepath.Join(cache, "npm"),
		"PIP_CACHE_DIR":    filepath.Join(cache, "pip"),
		"CARGO_HOME":       filepath.Join(cache, "cargo"),
	}
	proxy := env["GOPROXY"]
	if proxy == "" {
		proxy = defaultGOPROXY
	}
	if mc := userModCache(env); mc != "" {
		if dl := filepath.Join(mc, "cache", "download"); visible(dl) {
			proxy = "file://" + dl + "," + proxy
		}
	}
	out["GOPROXY"] = proxy
	return out
}
