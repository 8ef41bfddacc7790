package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// replay runs "agent replay LOG"; verbose also says how many sessions the
// log holds.
func replay(args []string, verbose bool, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agent replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, "usage: agent [-v] replay [-v] LOG") }
	fs.BoolVar(&verbose, "v", verbose, "also say how many sessions the log holds")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "agent replay: %v\n", err)
		return exitError
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		fmt.Fprintf(stderr, "agent replay: %s is not a file; give an event log, such as <threads>/<ID>.events.jsonl\n", fs.Arg(0))
		return exitError
	}
	noted, threadFile := notedChain(fs.Arg(0))
	rep, err := agentexec.ReplayAgentAgainst(f, noted)
	if err != nil {
		fmt.Fprintf(stderr, "agent replay: %s: %v\n", fs.Arg(0), err)
		return exitError
	}
	if rep.Diff != nil {
		fmt.Fprintf(stdout, "replay differs after %d identical events: %s\n", rep.Events, rep.Diff)
		return exitError
	}
	if rep.Torn != 0 {
		fmt.Fprintf(stderr, "agent replay: %s: line %d was cut short (the agent stopped while writing it) and was not replayed\n", fs.Arg(0), rep.Torn)
	}
	if verbose {
		fmt.Fprintf(stderr, "agent replay: %s: %d sessions\n", fs.Arg(0), rep.Sessions)
		if noted != "" {
			fmt.Fprintf(stderr, "agent replay: %s: line %d is the last one %s noted\n", fs.Arg(0), rep.Noted, threadFile)
		}
	}
	fmt.Fprintf(stdout, "replay ok: %d events\n", rep.Events)
	return exitOK
}

// notedChain returns the chain value of the event log's last line that
// the log's thread noted when it was last saved, and the thread's file,
// when the log is a thread's own (<threads>/<ID>.events.jsonl beside
// <threads>/<ID>.journal); "" otherwise.
func notedChain(logPath string) (chain, threadFile string) {
	base, ok := strings.CutSuffix(filepath.Base(logPath), ".events.jsonl")
	if !ok || threadwire.CheckID(base) != nil {
		return "", ""
	}
	store, err := thread.NewStore(filepath.Dir(logPath)) // the log's directory exists
	if err != nil {
		return "", ""
	}
	t, err := store.Load(base)
	if err != nil {
		return "", ""
	}
	return t.LogChain, store.Path(base)
}
