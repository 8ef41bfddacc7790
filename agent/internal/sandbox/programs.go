package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/agent/internal/progpath"
)

// Writable returns the directories, besides each command's workspace,
// that commands confined as opt says can write: the cache directory
// (every workspace's cache lies in it, and a command writes its own) and
// the paths exposed writable. Programs the agent runs on the host must
// not be found there (see [progpath]); neither in the workspace, nor in
// any directory at all when commands run unconfined (mode off), which no
// list can say.
func (opt Options) Writable() []progpath.Place {
	var out []progpath.Place
	if opt.CacheDir != "" {
		if abs, err := filepath.Abs(opt.CacheDir); err == nil {
			out = append(out, progpath.Place{Path: abs, What: "the sandbox's build caches"})
		}
	}
	home, _ := os.UserHomeDir()
	for _, e := range opt.Expose {
		if !e.Writable {
			continue
		}
		if abs, ok := expandHome(e.Path, home); ok && filepath.IsAbs(abs) {
			out = append(out, progpath.Place{Path: abs, What: "exposed writable to sandboxed commands (-" + FlagExpose + " " + e.String() + ")"})
		}
	}
	return out
}

// HiddenPATH returns the directories of the commands' PATH that they
// cannot see, as the agent's environment gives it (a toolchain in the
// home directory, say, which must be exposed to be of use): none when
// commands are not confined.
func (s *Sandbox) HiddenPATH() []string {
	if !s.Confined() {
		return nil
	}
	return s.hiddenPATH()
}

// hiddenPATH is HiddenPATH, whether commands are confined or not.
func (s *Sandbox) hiddenPATH() []string {
	path := pathOf(curate(s.environ(), s.env))
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

// pathOf returns the value of PATH in environ ("" without one).
func pathOf(environ []string) string {
	var path string
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	return path
}

// Programs returns what finds the programs the sandbox runs on the host
// ([Options.Programs], or the one New made).
func (s *Sandbox) Programs() *progpath.Resolver { return s.programs }

// Look returns the program name as a command of this sandbox runs it
// (see [Command].Args): found by [Sandbox.Programs], skipping, when
// commands are confined, the directories of PATH hidden from them.
func (s *Sandbox) Look(name string) (string, error) { return s.inside.Look(name) }

// HiddenBy returns what hides path (a file or directory of the host) from
// the commands of this sandbox: the most specific hidden directory or
// file that holds it (an empty home directory, say), or the host's /tmp,
// which commands see as a fresh one; "" when they see it, when it does
// not exist, or when commands are not confined.
func (s *Sandbox) HiddenBy(path string) string {
	if !s.Confined() || !filepath.IsAbs(path) {
		return ""
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	var last *mount // the most specific mount that holds it
	ms := s.lay.mounts()
	for i := range ms {
		if within(real, ms[i].path) {
			last = &ms[i]
		}
	}
	for _, p := range private {
		if within(real, p) && (last == nil || !within(last.path, p)) {
			return p
		}
	}
	if last != nil && (last.kind == hideDir || last.kind == hideFile) {
		return last.path
	}
	return ""
}
