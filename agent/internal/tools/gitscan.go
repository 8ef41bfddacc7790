package tools

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// scanner records the git repositories of a workspace: with keep, the
// content of their files too, to put them back.
type scanner struct {
	ws   *Workspace
	keep bool
}

// scan records the git repositories of the workspace. It reads each
// directory through a descriptor opened from its parent's without
// following links, so that a directory costs one open, one read and one
// close whatever its depth.
func (sc scanner) scan(ctx context.Context) (gitSnapshot, error) {
	s := gitSnapshot{dotGits: map[string]dotGitState{}, gitDirs: map[string]gitDirState{}, marks: map[string]uint8{}, dirs: map[string]struct{}{}}
	root, err := sc.ws.openDir(".", false)
	if err != nil {
		return s, reason(err)
	}
	f := os.NewFile(uintptr(root.fd), ".") // f closes it
	return s, sc.walk(ctx, f, ".", &s)
}

// walk records the git repositories in the directory dir, open as f,
// which it closes.
func (sc scanner) walk(ctx context.Context, f *os.File, dir string, s *gitSnapshot) error {
	entries, err := f.ReadDir(-1)
	if err != nil {
		_ = f.Close()
		if dir == "." {
			return err
		}
		return nil // unreadable, or gone since: nothing git reads either
	}
	defer f.Close()
	if err := ctx.Err(); err != nil {
		return err
	}
	s.dirs[dir] = struct{}{}
	var marks uint8
	var subdirs []string
	for _, e := range entries {
		name := e.Name()
		marks |= markOf(name, e.IsDir())
		if name == ".git" {
			st, err := sc.dotGit(path.Join(dir, name), e)
			if err != nil {
				return err
			}
			s.dotGits[path.Join(dir, name)] = st
			continue
		}
		if e.IsDir() {
			subdirs = append(subdirs, name)
		}
	}
	if marks != 0 {
		s.marks[dir] = marks
	}
	if gitDirMarks(marks) {
		st, err := sc.gitDir(dir)
		if err != nil {
			return err
		}
		s.gitDirs[dir] = st
		return nil // its objects are not looked through
	}
	for _, name := range subdirs {
		fd, err := openat(int(f.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
		if err != nil {
			continue // gone, or replaced by a link, since it was listed
		}
		if err := sc.walk(ctx, os.NewFile(uintptr(fd), name), path.Join(dir, name), s); err != nil {
			return err
		}
	}
	return nil
}

// dotGit records the .git entry p.
func (sc scanner) dotGit(p string, e fs.DirEntry) (dotGitState, error) {
	if !e.IsDir() {
		f, err := sc.record(p)
		if err != nil {
			return dotGitState{}, err
		}
		return dotGitState{file: &f}, nil
	}
	if p == ".git" {
		return dotGitState{skipped: true}, nil // the workspace's own repository
	}
	st, err := sc.gitDir(p)
	if err != nil {
		return dotGitState{}, err
	}
	return dotGitState{dir: &st}, nil
}

// gitDir records the git directory p: its identity and its files that
// can make git run a program or look elsewhere.
func (sc scanner) gitDir(p string) (gitDirState, error) {
	st := gitDirState{files: map[string]gitFile{}}
	fi, err := sc.ws.root.Lstat(p)
	if err != nil {
		return st, nil // gone since it was listed
	}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.dev, st.ino = uint64(sys.Dev), sys.Ino
	}
	return st, sc.sensitive(p, "", st.files, 0)
}

// maxNesting bounds how deep modules and worktrees are looked through.
const maxNesting = 16

// sensitive adds to files the files of the git directory dir (the part
// of it below prefix) that can make git run a program or look
// elsewhere: config, config.worktree, commondir, gitdir, everything under
// hooks, and the same in each git directory under modules and worktrees
// (a submodule's name may hold slashes).
func (sc scanner) sensitive(dir, prefix string, files map[string]gitFile, depth int) error {
	if depth > maxNesting {
		return nil
	}
	entries, err := fs.ReadDir(sc.ws.root.FS(), path.Join(dir, prefix))
	if err != nil {
		return nil // unreadable, or gone since it was listed
	}
	for _, e := range entries {
		name := e.Name()
		rel := path.Join(prefix, name)
		switch {
		case !e.IsDir() && (name == "config" || name == "config.worktree" || name == "commondir" || name == "gitdir"):
			f, err := sc.record(path.Join(dir, rel))
			if err != nil {
				return err
			}
			files[rel] = f
		case e.IsDir() && name == "hooks":
			err := fs.WalkDir(sc.ws.root.FS(), path.Join(dir, rel), func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return nil
				}
				f, err := sc.record(p)
				if err != nil {
					return err
				}
				files[strings.TrimPrefix(p, dir+"/")] = f
				return nil
			})
			if err != nil {
				return err
			}
		case e.IsDir() && (name == "modules" || name == "worktrees"):
			if err := sc.nested(dir, rel, files, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// nested adds the sensitive files of the git directories below
// dir/prefix, a modules or worktrees directory.
func (sc scanner) nested(dir, prefix string, files map[string]gitFile, depth int) error {
	if depth > maxNesting {
		return nil
	}
	entries, err := fs.ReadDir(sc.ws.root.FS(), path.Join(dir, prefix))
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := path.Join(prefix, e.Name())
		if _, err := sc.ws.root.Lstat(path.Join(dir, sub, "HEAD")); err == nil {
			err = sc.sensitive(dir, sub, files, depth+1)
			if err != nil {
				return err
			}
			continue
		}
		if err := sc.nested(dir, sub, files, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// record returns what the file p is: its type and permissions, size,
// inode and change time (which every write, chmod and replacement
// changes, and which no command can set back), and, with keep, its
// content (a link's target), when it is at most maxRecorded bytes.
func (sc scanner) record(p string) (gitFile, error) {
	fi, err := sc.ws.root.Lstat(p)
	if err != nil {
		return gitFile{mode: fs.ModeIrregular}, nil // gone since it was listed: some state that differs
	}
	f := gitFile{mode: fi.Mode(), size: fi.Size()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		f.ino, f.ctime = st.Ino, st.Ctim.Nano()
	}
	if !sc.keep {
		return f, nil
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := sc.ws.root.Readlink(p)
		if err != nil {
			return f, fmt.Errorf("read %s: %w", p, reason(err))
		}
		f.content, f.kept = []byte(target), true
	case fi.Mode().IsRegular() && fi.Size() <= maxRecorded:
		b, err := sc.ws.root.ReadFile(p)
		if err != nil {
			return f, fmt.Errorf("read %s: %w", p, reason(err))
		}
		f.content, f.kept = b, true
	}
	return f, nil
}
