package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// diskEvery is how often a command's disk watcher looks at the disks it
// can write. A statfs costs about a microsecond; a command that writes a
// gigabyte a second overshoots its limit by some 50 MiB at most.
const diskEvery = 50 * time.Millisecond

// diskWatch bounds what a confined command writes to the disks of the
// directories it may write (the workspace, its cache, the writable
// exposures): Limits.Disk bytes, measured as the growth of those file
// systems' used space since the command started (statfs, which counts
// data not yet written back on ext4, XFS, btrfs and tmpfs), added up look
// by look and leaving out what they shrank, so that files other processes
// remove meanwhile do not hide what the command writes. Other processes
// write to the same file systems too: when the growth passes the limit,
// the watcher adds up what the command may have written (the space held
// by the files under its writable directories changed since it started)
// and stops the command only when that passes the limit too; otherwise
// it counts again from there.
type diskWatch struct {
	limit int64
	dirs  []string // writable directories, absolute
	every time.Duration
	start time.Time
	last  map[[2]int32]int64 // used bytes of each file system at the last look, by id
	grown int64              // the growth added up since the count began
	// wrote is what the command wrote when it was stopped for it, 0
	// while it was not; ended says it had ended by itself, having written
	// past its limit between two looks (a fast writer, dd into the page
	// cache): found by the last look, when the command ends.
	wrote int64
	ended bool
}

// newDiskWatch returns the watcher of a command that may write dirs, or
// nil without a limit or a directory.
func newDiskWatch(limit int64, dirs []string) *diskWatch {
	if limit <= 0 || len(dirs) == 0 {
		return nil
	}
	// A second's margin: a file system stamps a file's change time from a
	// coarse clock, a little behind time.Now.
	w := &diskWatch{limit: limit, dirs: dirs, every: diskEvery, start: time.Now().Add(-time.Second)}
	w.last = w.used()
	return w
}

// used returns the used bytes of the file systems of w.dirs, each once.
func (w *diskWatch) used() map[[2]int32]int64 {
	out := map[[2]int32]int64{}
	for _, d := range w.dirs {
		var st syscall.Statfs_t
		if syscall.Statfs(d, &st) != nil {
			continue
		}
		id := [2]int32{st.Fsid.X__val[0], st.Fsid.X__val[1]}
		out[id] = (int64(st.Blocks) - int64(st.Bfree)) * int64(st.Bsize)
	}
	return out
}

// growth adds to w.grown what the file systems' used space grew since
// the last look, each that shrank counting nothing, and returns it.
func (w *diskWatch) growth() int64 { return w.add(w.used()) }

// add adds to w.grown what the file systems grew from the last look to
// now, their used bytes by id, and returns it.
func (w *diskWatch) add(now map[[2]int32]int64) int64 {
	for id, n := range now {
		if b, ok := w.last[id]; ok {
			w.grown += max(n-b, 0)
			w.last[id] = n
		}
	}
	return w.grown
}

// run watches until stop is closed, and calls kill when the command wrote
// more than its limit; it returns then, with w.wrote set.
func (w *diskWatch) run(stop <-chan struct{}, kill func()) {
	tick := time.NewTicker(w.every)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			// One last look: a command may write past its limit and end
			// between two looks; it is not stopped then, but said.
			if n := w.over(nil); n > 0 {
				w.wrote, w.ended = n, true
			}
			return
		case <-tick.C:
		}
		if n := w.over(stop); n > 0 {
			w.wrote = n
			kill()
			return
		}
	}
}

// over returns what the command wrote when it is past its limit, 0 when
// it is not. When the disks grew past the limit but the command's files
// do not account for it (others wrote it), it counts again from there.
// The count stops early, with what it has, once stop is closed (nil: it
// never does); a count cut short keeps the growth, so that the last
// look, when the command ends, still sees it all.
func (w *diskWatch) over(stop <-chan struct{}) int64 {
	if w.growth() <= w.limit {
		return 0
	}
	n, whole := w.written(stop)
	if n > w.limit {
		return n
	}
	if whole {
		w.grown = 0
	}
	return 0
}

// written returns the space held by the regular files under w.dirs that
// changed since the command started (each file once, however many names
// it has), which bounds from above what the command added to them. It
// stops early, with what it has, once stop is closed, and then reports
// that the count is not whole.
func (w *diskWatch) written(stop <-chan struct{}) (n int64, whole bool) {
	whole = true
	seen := map[[2]uint64]bool{}
	for _, d := range w.dirs {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			select {
			case <-stop:
				whole = false
				return filepath.SkipAll
			default:
			}
			if err != nil {
				return nil // unreadable: skipped
			}
			if e.IsDir() {
				if e.Name() == ".git" && p != d {
					return filepath.SkipDir // read-only to the command
				}
				return nil
			}
			if !e.Type().IsRegular() {
				return nil
			}
			fi, err := e.Info()
			if err != nil {
				return nil
			}
			st, ok := fi.Sys().(*syscall.Stat_t)
			if !ok || time.Unix(st.Ctim.Unix()).Before(w.start) {
				return nil
			}
			id := [2]uint64{st.Dev, st.Ino}
			if !seen[id] {
				seen[id] = true
				n += st.Blocks * 512
			}
			return nil
		})
	}
	return n, whole
}

// writableDirs returns the directories a command laid out as lay may
// write, which exist: the workspace, its cache and the writable exposures.
func writableDirs(lay layout) []string {
	var out []string
	add := func(p string) {
		if p == "" {
			return
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	for _, w := range lay.writable {
		add(w)
	}
	for _, e := range lay.expose {
		if e.Writable {
			add(e.Path)
		}
	}
	return out
}
