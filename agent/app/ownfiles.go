package app

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/agent/internal/eventlog"
	"github.com/fsmgen/fsmgen/agent/internal/mask"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// The agent's own files — its event logs (-log), its threads' journals
// and their lock files (-threads) — hold whole conversations: what the
// model read, what the user typed. No session's model may read an earlier
// session's (or its own) through a tool or a command. The agent hides
// them from bash's sandbox, each session those of every session before
// it, wherever they lie (an earlier -log next to the workspace, say), and
// masks those it finds in the workspace from its tools and from bash.
//
// What sessions wrote where is kept in a list of paths, one a line, in
// the user's state directory ($XDG_STATE_HOME/fsmgen-agent/own-files, or
// ~/.local/state/...: under the home directory, hidden from commands),
// to which each session adds its event log and threads directory.

// ownFilesName is the list's file name in the state directory.
const ownFilesName = "own-files"

// maxOwnFiles bounds how many paths the list keeps: the latest.
const maxOwnFiles = 1000

// stateDir returns the agent's state directory, "" when there is none.
func stateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, configDirName)
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", configDirName)
	}
	return ""
}

// recordOwnFiles adds paths (the session's event log and threads
// directory) to the list in dir, and returns every path the list holds
// that still exists, absolute with its links resolved: those to hide from
// commands. A
// list that cannot be written is no reason to stop: the paths of this
// session are hidden all the same; the error says why.
func recordOwnFiles(dir string, paths ...string) ([]string, error) {
	var clean []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			clean = append(clean, abs)
		}
	}
	if dir == "" {
		return clean, errors.New("no state directory (set XDG_STATE_HOME or HOME)")
	}
	list := filepath.Join(dir, ownFilesName)
	known, err := readOwnFiles(list)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return clean, fmt.Errorf("read %s: %w", list, err)
	}
	var added []string
	for _, p := range clean {
		if !slices.Contains(known, p) {
			known = append(known, p)
			added = append(added, p)
		}
	}
	var werr error
	switch {
	case len(known) > maxOwnFiles:
		known = known[len(known)-maxOwnFiles:]
		werr = writeOwnFiles(list, known)
	case len(added) > 0:
		werr = appendOwnFiles(list, added)
	}
	var out []string
	for _, p := range known {
		if real, err := filepath.EvalSymlinks(p); err == nil && !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	if werr != nil {
		werr = fmt.Errorf("note the session's own files in %s: %w", list, werr)
	}
	return out, werr
}

// readOwnFiles reads the list at path.
func readOwnFiles(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if p := strings.TrimSpace(sc.Text()); filepath.IsAbs(p) && !slices.Contains(out, p) {
			out = append(out, filepath.Clean(p))
		}
	}
	return out, sc.Err()
}

// appendOwnFiles adds paths to the list at path, one line each, in one
// append: two sessions that start at once lose neither's.
func appendOwnFiles(path string, paths []string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(strings.Join(paths, "\n") + "\n")
	return errors.Join(err, f.Close())
}

// writeOwnFiles replaces the list at path with paths.
func writeOwnFiles(path string, paths []string) error {
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(strings.Join(paths, "\n")+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// isOwnFile tells the agent's own files by their first bytes (see
// mask.Options.Own): an event log, a thread's journal.
func isOwnFile(head []byte) bool { return eventlog.IsLog(head) || thread.IsJournal(head) }

// maskOwnLocks adds to set the lock file of each thread whose journal or
// event log it masks as the agent's own: <id>.lock beside <id>.journal or
// <id>.events.jsonl, which is empty and so told by nothing it holds.
func maskOwnLocks(set *mask.Set) {
	for _, p := range set.Paths() {
		if !set.Own(p) {
			continue
		}
		base := filepath.Base(p)
		for _, ext := range []string{".journal", ".events.jsonl"} {
			if id, ok := strings.CutSuffix(base, ext); ok && threadwire.CheckID(id) == nil {
				lock := filepath.Join(filepath.Dir(p), id+".lock")
				if fi, err := os.Lstat(lock); err == nil && fi.Mode().IsRegular() {
					set.AddOwn(lock)
				}
			}
		}
	}
}
