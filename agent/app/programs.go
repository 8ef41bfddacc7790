package app

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fsmgen/fsmgen/agent/internal/progpath"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
)

// hostPrograms returns the resolver of every program the agent runs on
// the host (git, bubblewrap, the MCP servers' commands, the environment
// query's toolchains), made once, from PATH as the agent was started
// with: it never finds one in the workspace or in a directory the model's
// commands can write (bash's sandbox's, and those the MCP servers'
// entries expose writable).
func hostPrograms(o options, ws string, bash sandbox.Options) *progpath.Resolver {
	writable := bash.Writable()
	for _, s := range o.config.servers {
		writable = append(writable, sandbox.Options{Expose: s.Expose}.Writable()...)
	}
	return progpath.New(progpath.Options{PATH: os.Getenv("PATH"), Workspace: ws, Writable: writable})
}

// notePATH says, on one line, which directories of PATH the agent runs no
// program from (skipped) and which bash does not see (hidden): the first
// of each, and how many; verbose, it lists them all on the lines after.
func notePATH(skipped []progpath.Skip, hidden []string, verbose bool, w io.Writer) {
	var parts []string
	switch len(skipped) {
	case 0:
	case 1:
		parts = append(parts, fmt.Sprintf("the agent runs no program from %s", skipped[0]))
	default:
		parts = append(parts, fmt.Sprintf("the agent runs no program from %d of its directories, the first %s", len(skipped), skipped[0]))
	}
	switch len(hidden) {
	case 0:
	case 1:
		parts = append(parts, fmt.Sprintf("bash does not see %s (-%s shows it)", hidden[0], sandbox.FlagExpose))
	default:
		parts = append(parts, fmt.Sprintf("bash does not see %d of them, the first %s (-%s shows one)", len(hidden), hidden[0], sandbox.FlagExpose))
	}
	if len(parts) == 0 {
		return
	}
	if !verbose && (len(skipped) > 1 || len(hidden) > 1) {
		parts = append(parts, "-v lists them")
	}
	fmt.Fprintf(w, "agent: PATH: %s\n", strings.Join(parts, "; "))
	if !verbose {
		return
	}
	for _, s := range skipped {
		fmt.Fprintf(w, "agent:   no program run from %s\n", s)
	}
	for _, d := range hidden {
		fmt.Fprintf(w, "agent:   hidden from bash: %s\n", d)
	}
}
