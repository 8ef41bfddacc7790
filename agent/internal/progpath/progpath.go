// Package progpath finds the programs the coding agent runs on the host —
// git, bubblewrap, bash, the MCP servers' commands, the toolchains the
// environment query asks for their versions — in the directories of PATH
// that nothing the model runs can write.
//
// The model's commands write the workspace, and whatever else the sandbox
// lets them write (its build caches, the paths exposed writable). A
// directory of PATH inside one of them — an activated virtualenv's
// .venv/bin, direnv's PATH_add bin, ./node_modules/.bin — would let the
// model plant a program there (a git, a bwrap) that the agent then runs on
// the host, unconfined, as the user. A [Resolver] is made once, when the
// agent starts, from PATH, the workspace and those directories, and skips:
//
//   - a directory inside the workspace or one the model's commands can
//     write, or that lies there once its links are followed (a link into
//     the workspace), or that is reached through a link lying there;
//   - a relative entry ("", ".", "bin"), which names a directory relative
//     to the current one, whatever it is (the workspace, mostly).
//
// A program found through a link is refused in the same way when a link
// on its way lies in such a directory (/usr/local/bin/tool pointing into
// the workspace). What was skipped, and why, is kept for the agent to say
// ([Resolver.Skipped]); a program not found names the skipped directories
// that hold one of its name. Each name is looked up once and the answer
// kept, so a program is the same for the whole session.
//
// With the sandbox off the model's commands can write wherever the user
// can; the resolver still keeps the workspace out, but cannot make the
// programs the agent runs safe from them.
package progpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// maxLinks bounds the links followed to resolve one path, as the kernel
// does (ELOOP).
const maxLinks = 40

// Place is a directory the model's commands can write, and what it is
// for the user ("the workspace", "the sandbox's build caches").
type Place struct {
	Path string
	What string
}

// Options are what a [Resolver] is made from.
type Options struct {
	// PATH is the search path, as the environment's PATH gives it.
	PATH string
	// Workspace is the workspace's root; "" for none.
	Workspace string
	// Writable are the other directories the model's commands can write
	// (see sandbox.Options.Writable). They need not exist.
	Writable []Place
}

// Skip is a directory of PATH the resolver does not look in.
type Skip struct {
	// Dir is the entry of PATH, as PATH gives it.
	Dir string
	// Why says why, e.g. "inside the workspace /w, which the model's
	// commands write".
	Why string
}

// String returns "DIR (WHY)".
func (s Skip) String() string { return fmt.Sprintf("%s (%s)", s.Dir, s.Why) }

// Resolver finds programs in the directories of PATH that the model's
// commands cannot write. It is safe for concurrent use.
type Resolver struct {
	dirs    []string // the entries of PATH looked in, cleaned, in order
	skipped []Skip
	places  []Place // the directories commands write: as given (cleaned) and with links resolved

	mu    sync.Mutex
	found map[string]answer // what each name resolved to, the first time
}

// answer is what Look said for a name.
type answer struct {
	path string
	err  error
}

// New returns the resolver of opt's PATH.
func New(opt Options) *Resolver {
	r := &Resolver{found: map[string]answer{}}
	add := func(p Place) {
		if p.Path == "" || !filepath.IsAbs(p.Path) {
			return
		}
		p.Path = filepath.Clean(p.Path)
		if p.Path == "/" {
			// Commands that can write everywhere (/ exposed writable) are
			// as unconfined as with the sandbox off: no directory of PATH
			// would be left, and none is safe from them.
			return
		}
		r.places = append(r.places, p)
		if real, err := filepath.EvalSymlinks(p.Path); err == nil && real != p.Path {
			r.places = append(r.places, Place{Path: real, What: p.What})
		}
	}
	if opt.Workspace != "" {
		ws := opt.Workspace
		if abs, err := filepath.Abs(ws); err == nil {
			ws = abs
		}
		add(Place{Path: ws, What: "the workspace"})
	}
	for _, p := range opt.Writable {
		add(p)
	}
	for _, dir := range filepath.SplitList(opt.PATH) {
		why := r.check(dir)
		switch {
		case why == "" && !slices.Contains(r.dirs, filepath.Clean(dir)):
			r.dirs = append(r.dirs, filepath.Clean(dir))
		case why != "" && why != whyMissing && !slices.ContainsFunc(r.skipped, func(s Skip) bool { return s.Dir == dir }):
			r.skipped = append(r.skipped, Skip{Dir: dir, Why: why})
		}
	}
	return r
}

// whyMissing is check's answer for a directory that does not exist
// outside the places commands write: nothing to look in, nothing to say.
const whyMissing = "missing"

// check says why the entry dir of PATH is not looked in, or "".
func (r *Resolver) check(dir string) string {
	switch {
	case dir == "":
		return "an empty entry, which stands for the current directory (the workspace, mostly)"
	case !filepath.IsAbs(dir):
		return "a relative entry, which names a directory of whatever the current directory is (the workspace, mostly)"
	}
	real, bad, err := r.walk(dir)
	switch {
	case bad != nil:
		return bad.why()
	case errors.Is(err, fs.ErrNotExist):
		return whyMissing
	case err != nil:
		return "it cannot be resolved: " + err.Error()
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return whyMissing
	}
	return ""
}

// reached is a place a path leads into: the place, and the link on the
// way that led there ("" when the path itself lies there).
type reached struct {
	place Place
	link  string
}

// why says why a path that reaches the place is refused.
func (b *reached) why() string {
	where := "inside"
	if b.link != "" {
		where = "reached through the link " + b.link + " into"
	}
	if b.place.What == "the workspace" {
		return fmt.Sprintf("%s the workspace %s, which the model's commands write", where, b.place.Path)
	}
	return fmt.Sprintf("%s %s, %s, which the model's commands can write", where, b.place.Path, b.place.What)
}

// placeOf returns the place p (absolute, clean) lies in, or nil.
func (r *Resolver) placeOf(p string) *Place {
	for i := range r.places {
		root := r.places[i].Path
		if p == root || strings.HasPrefix(p, root+string(filepath.Separator)) {
			return &r.places[i]
		}
	}
	return nil
}

// walk resolves the absolute path p as the kernel would, component by
// component, following links, and returns it with every link resolved.
// It stops with bad set as soon as it reaches a place commands write:
// a component there, or a link there, could be changed by them. A
// missing component ends the walk with fs.ErrNotExist (the rest of the
// path is checked as written).
func (r *Resolver) walk(p string) (real string, bad *reached, err error) {
	cur := "/"
	rest := filepath.Clean(p)
	lastLink := ""
	for links := 0; ; {
		rest = strings.TrimLeft(rest, "/")
		if rest == "" {
			return cur, nil, nil
		}
		name, tail, _ := strings.Cut(rest, "/")
		rest = tail
		switch name {
		case ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		if pl := r.placeOf(next); pl != nil {
			return "", &reached{place: *pl, link: lastLink}, nil
		}
		fi, err := os.Lstat(next)
		if err != nil {
			if pl := r.placeOf(filepath.Join(next, rest)); pl != nil {
				return "", &reached{place: *pl, link: lastLink}, nil
			}
			return "", nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", nil, fmt.Errorf("%s: too many links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", nil, err
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		lastLink = next
		rest = target + "/" + rest
	}
}

// Look returns the absolute path of the program name: found in the
// directories of PATH the resolver looks in when name has no slash,
// else name itself, which must then be absolute. Either way the program,
// and every link on its way, lies outside the places the model's
// commands write. The answer is the same for the resolver's life. A
// program not found is an error that [errors.Is] exec.ErrNotFound and
// names the skipped directories that hold one of its name.
func (r *Resolver) Look(name string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.found[name]; ok {
		return a.path, a.err
	}
	path, err := r.look(name)
	r.found[name] = answer{path, err}
	return path, err
}

// look is Look without its memory.
func (r *Resolver) look(name string) (string, error) {
	switch {
	case name == "":
		return "", errors.New("no program named; give its name or absolute path")
	case strings.Contains(name, "/") && !filepath.IsAbs(name):
		return "", fmt.Errorf("program %s: a relative path is looked up from the current directory (the workspace, mostly), which the model's commands write; give an absolute path outside the workspace", name)
	case strings.Contains(name, "/"):
		p := filepath.Clean(name)
		switch why := r.usable(p); why {
		case "":
		case whyMissing:
			return "", &NotFoundError{Name: p}
		default:
			return "", fmt.Errorf("program %s: %s; install it outside the workspace and the directories the sandbox lets commands write", name, why)
		}
		return p, nil
	}
	var refused []string
	for _, dir := range r.dirs {
		p := filepath.Join(dir, name)
		switch why := r.usable(p); why {
		case "":
			return p, nil
		case whyMissing:
		default:
			refused = append(refused, p+" ("+why+")")
		}
	}
	for _, s := range r.skipped {
		if fi, err := os.Lstat(filepath.Join(s.Dir, name)); err == nil && !fi.IsDir() {
			refused = append(refused, fmt.Sprintf("%s (%s: %s)", filepath.Join(s.Dir, name), s.Dir, s.Why))
		}
	}
	return "", &NotFoundError{Name: name, Skipped: refused}
}

// usable says why the program at p (absolute, clean) cannot be run, or
// "": whyMissing when there is none there.
func (r *Resolver) usable(p string) string {
	real, bad, err := r.walk(p)
	switch {
	case bad != nil:
		return bad.why()
	case errors.Is(err, fs.ErrNotExist):
		return whyMissing
	case err != nil:
		return "it cannot be resolved: " + err.Error()
	}
	fi, err := os.Stat(real)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return whyMissing // as exec.LookPath, go on to the next directory
	}
	return ""
}

// NotFoundError is Look's error for a program it found nowhere it may
// run one from. errors.Is(err, exec.ErrNotFound) holds.
type NotFoundError struct {
	// Name is the program's name, or its path when it was named by one.
	Name string
	// Skipped are the programs of that name that were skipped, each as
	// "PATH (why)".
	Skipped []string
}

// Error implements error.
func (e *NotFoundError) Error() string {
	if strings.Contains(e.Name, "/") {
		return fmt.Sprintf("program %s is not installed (no executable file there); give the path of an installed program", e.Name)
	}
	msg := fmt.Sprintf("%s is not installed in the directories of PATH the agent runs programs from", e.Name)
	if len(e.Skipped) > 0 {
		msg += "; skipped: " + strings.Join(e.Skipped, "; ")
	}
	return msg + fmt.Sprintf("; install %s outside the workspace and put its directory on PATH", e.Name)
}

// Is makes errors.Is(err, exec.ErrNotFound) hold.
func (e *NotFoundError) Is(target error) bool { return target == exec.ErrNotFound }

// Skipped returns the entries of PATH the resolver does not look in,
// with why, in PATH's order (an entry given twice once).
func (r *Resolver) Skipped() []Skip { return slices.Clone(r.skipped) }

// PATH returns the directories the resolver looks in, as a search path:
// the PATH to give a program the agent runs on the host (git starts
// filters and helpers through it).
func (r *Resolver) PATH() string { return strings.Join(r.dirs, string(filepath.ListSeparator)) }

// Without returns a resolver that also skips dirs (entries of PATH, as
// PATH gives them), saying why: the directories the sandbox hides from
// its commands, for a program that runs inside it.
func (r *Resolver) Without(why string, dirs ...string) *Resolver {
	out := &Resolver{places: r.places, skipped: slices.Clone(r.skipped), found: map[string]answer{}}
	for _, d := range r.dirs {
		if slices.ContainsFunc(dirs, func(x string) bool { return filepath.Clean(x) == d }) {
			out.skipped = append(out.skipped, Skip{Dir: d, Why: why})
			continue
		}
		out.dirs = append(out.dirs, d)
	}
	return out
}
