package autocommit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// maxDotGitFile is how much of a ".git" file is recorded: it holds one
// "gitdir: …" line.
const maxDotGitFile = 4 << 10

// maxNamedKeys is how many changed configuration keys a refusal names.
const maxNamedKeys = 10

// entry is what one path was when it was looked at.
type entry struct {
	path     string
	kind     string // "nothing", "directory", "file", "link", "other"
	dev, ino uint64 // of a directory
	content  string // a file's first bytes, a link's target
	// config is, for the .git of a repository inside the workspace, a
	// digest of its configuration (see Committer.dotGit); else "".
	config string
}

// stateOf looks at the path p without following a final link.
func stateOf(p string) (entry, error) {
	e := entry{path: p}
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		e.kind = "nothing"
		return e, nil
	case err != nil:
		return e, err
	}
	switch {
	case fi.IsDir():
		e.kind = "directory"
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			e.dev, e.ino = uint64(st.Dev), st.Ino
		}
	case fi.Mode().IsRegular():
		e.kind = "file"
		f, err := os.Open(p)
		if err != nil {
			return e, err
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, maxDotGitFile))
		if err != nil {
			return e, err
		}
		e.content = string(data)
	case fi.Mode()&fs.ModeSymlink != 0:
		e.kind = "link"
		if e.content, err = os.Readlink(p); err != nil {
			return e, err
		}
	default:
		e.kind = "other"
	}
	return e, nil
}

// describe says what the entry is, for messages.
func (e entry) describe() string {
	switch e.kind {
	case "nothing":
		return "absent"
	case "directory":
		return "a directory"
	case "file":
		return fmt.Sprintf("a file saying %q", strings.TrimSpace(e.content))
	case "link":
		return fmt.Sprintf("a symbolic link to %s", e.content)
	}
	return "a special file"
}

// recordLayout looks at the ".git" entry of dir and of each of its parents
// up to top, or up to the file system's root when top is "": the places
// where git looks for a repository.
func recordLayout(dir, top string) ([]entry, error) {
	var layout []entry
	for d := dir; ; {
		e, err := stateOf(filepath.Join(d, ".git"))
		if err != nil {
			return nil, fmt.Errorf("auto-commit in %s: %w", dir, err)
		}
		layout = append(layout, e)
		parent := filepath.Dir(d)
		if d == top || parent == d {
			return layout, nil
		}
		d = parent
	}
}

// checkLayout refuses, with ErrRepositoryChanged, when a ".git" entry or
// the git directory is not what it was at Open.
func (c *Committer) checkLayout() error {
	for _, was := range c.layout {
		now, err := stateOf(was.path)
		if err != nil {
			return fmt.Errorf("auto-commit in %s: %w", c.dir, err)
		}
		if now == was {
			continue
		}
		if !c.repo {
			return fmt.Errorf("auto-commit refused: %s was %s when the agent started, when %s was in no git repository, and is %s now; "+
				"the agent commits only into the repository it started in, so that a .git written by a tool cannot make it run git; "+
				"if the repository is yours, review its configuration and restart the agent to auto-commit into it: %w",
				was.path, was.describe(), c.dir, now.describe(), ErrRepositoryChanged)
		}
		return fmt.Errorf("auto-commit refused: %s %s; the agent commits only into the repository it started in (%s); review what changed and restart the agent: %w",
			was.path, change(was, now), c.gitDir, ErrRepositoryChanged)
	}
	if !c.repo {
		return nil
	}
	now, err := stateOf(c.gitDir)
	if err != nil {
		return fmt.Errorf("auto-commit in %s: %w", c.dir, err)
	}
	if now != c.gitDirID {
		return fmt.Errorf("auto-commit refused: the git directory %s %s; review it and restart the agent: %w",
			c.gitDir, change(c.gitDirID, now), ErrRepositoryChanged)
	}
	return nil
}

// change says how an entry changed, for messages.
func change(was, now entry) string {
	if was.kind == now.kind && was.kind == "directory" {
		return "was moved or replaced by another directory since the agent started"
	}
	return fmt.Sprintf("was %s when the agent started and is %s now", was.describe(), now.describe())
}

// setting is one line of the effective git configuration.
type setting struct {
	scope    string // "global", "local", "worktree", …
	origin   string // e.g. "file:/home/u/.gitconfig"
	key      string // section.[subsection.]name; section and name lower case
	value    string
	hasValue bool // false for a bare "key" line (boolean true)
}

// config returns the effective configuration of the repository, every file
// git reads and includes, but for the command line's settings (ours).
func (g git) config(ctx context.Context) ([]setting, error) {
	out, err := g.run(ctx, "config", "--list", "--show-scope", "--show-origin", "-z")
	if err != nil {
		return nil, err
	}
	fields := bytes.Split(out, []byte{0})
	if len(fields)%3 != 1 || len(fields[len(fields)-1]) != 0 {
		return nil, fmt.Errorf("auto-commit in %s: git config --list gave output it cannot read; check the configuration with git config --list", g.dir)
	}
	var settings []setting
	for i := 0; i+2 < len(fields); i += 3 {
		s := setting{scope: string(fields[i]), origin: string(fields[i+1])}
		if s.scope == "command" {
			continue
		}
		var kv string
		kv, s.value, s.hasValue = strings.Cut(string(fields[i+2]), "\n")
		s.key = kv
		settings = append(settings, s)
	}
	return settings, nil
}

// lookup returns the last value of key in config, as git would use it.
func lookup(config []setting, key string) string {
	for _, s := range slices.Backward(config) {
		if s.key == key {
			return s.value
		}
	}
	return ""
}

// checkConfig reads the configuration and refuses, with ErrConfigChanged,
// when it is not what it was at Open; it returns the configuration.
func (c *Committer) checkConfig(ctx context.Context, g git) ([]setting, error) {
	now, err := g.config(ctx)
	if err != nil {
		return nil, err
	}
	if changed := changedKeys(c.config, now); len(changed) > 0 {
		return nil, fmt.Errorf("auto-commit refused: %w: %s; settings like these can make git run commands, so the agent does not commit. "+
			"Review .git/config and the files it includes (git config --list --show-origin shows every setting and where it is), "+
			"then restart the agent to auto-commit again", ErrConfigChanged, strings.Join(changed, "; "))
	}
	return now, nil
}

// changedKeys describes the keys whose settings differ between was and
// now, sorted, e.g. "core.fsmonitor (added in /r/.git/config; runs a
// command)"; at most maxNamedKeys, then how many more.
func changedKeys(was, now []setting) []string {
	type place struct {
		scope, origin, value string
		hasValue             bool
	}
	group := func(settings []setting) map[string][]place {
		m := map[string][]place{}
		for _, s := range settings {
			m[s.key] = append(m[s.key], place{s.scope, s.origin, s.value, s.hasValue})
		}
		return m
	}
	before, after := group(was), group(now)
	var keys []string
	for k, p := range after {
		if !slices.Equal(p, before[k]) {
			keys = append(keys, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		if len(out) == maxNamedKeys {
			out = append(out, fmt.Sprintf("and %d more", len(keys)-maxNamedKeys))
			break
		}
		how, where := "changed in", after[k]
		switch {
		case len(before[k]) == 0:
			how = "added in"
		case len(after[k]) == 0:
			how, where = "removed from", before[k]
		}
		origins := []string{}
		for _, p := range where {
			if o := strings.TrimPrefix(p.origin, "file:"); !slices.Contains(origins, o) {
				origins = append(origins, o)
			}
		}
		note := ""
		if runsCommand(k) {
			note = "; runs a command"
		}
		out = append(out, fmt.Sprintf("%s (%s %s%s)", k, how, strings.Join(origins, ", "), note))
	}
	return out
}

// commandKeys are, per section, the variables whose value is a command git
// may run ("*" for every variable of the section).
var commandKeys = map[string][]string{
	"core":       {"fsmonitor", "hookspath", "sshcommand", "askpass", "editor", "pager", "gitproxy", "alternaterefscommand"},
	"filter":     {"clean", "smudge", "process"},
	"diff":       {"textconv", "command", "external"},
	"merge":      {"driver"},
	"credential": {"helper"},
	"gpg":        {"program"},
	"sequence":   {"editor"},
	"uploadpack": {"packobjectshook"},
	"remote":     {"uploadpack", "receivepack", "proxy"},
	"pager":      {"*"},
	"alias":      {"*"},
}

// runsCommand reports whether a configuration key names a command git may
// run, e.g. core.fsmonitor or filter.<driver>.clean. It only adds a note
// to a refusal: every change of the configuration is refused.
func runsCommand(key string) bool {
	section, rest, _ := strings.Cut(strings.ToLower(key), ".")
	name := rest[strings.LastIndexByte(rest, '.')+1:]
	vars := commandKeys[section]
	return slices.Contains(vars, "*") || slices.Contains(vars, name)
}
