package app

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/ledger"
)

// oneShotResult is the last line "agent -p PROMPT -json" prints (see
// jsonEvents), after its type.
type oneShotResult struct {
	// Session is the thread's ID, for -resume.
	Session string `json:"session"`
	// Answer is the assistant's last text.
	Answer string `json:"answer"`
	// Error is what the turn failed with, "" when it did not.
	Error string `json:"error,omitempty"`
	// Usage is the tokens the run used.
	Usage chat.Usage `json:"usage"`
	// Cost is their cost in US dollars; null when no price is known.
	Cost *float64 `json:"cost"`
}

// finishOneShot prints the end of a one-shot run: the answer on out and
// the tokens on diag, or with asJSON the result event, the last line of
// the JSON events on out.
func (t *terminal) finishOneShot(id string, res agentexec.Result, asJSON bool) {
	if !asJSON {
		t.Usage(res.Ledger)
		if t.final != "" {
			_, _ = io.WriteString(t.out, strings.TrimSuffix(t.final, "\n")+"\n")
		}
		return
	}
	r := oneShotResult{Session: id, Answer: t.final, Error: res.LastError, Usage: res.Ledger.Total}
	if !res.Idle && r.Error == "" {
		r.Error = "the turn was interrupted before it ended"
	}
	if c, err := ledger.ThreadCost(res.Ledger, t.model, t.priceOfModel); err == nil && t.price != nil {
		r.Cost = &c
	}
	t.events.emit(resultEvent{Type: evResult, oneShotResult: r})
}

// version is the agent's version: its module's, and the commit it was
// built from when known.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "agent (fsmgen), version unknown"
	}
	v := info.Main.Version
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	out := "agent (fsmgen) " + v
	if rev != "" {
		out += fmt.Sprintf(" (commit %.12s%s)", rev, dirty)
	}
	return out + ", " + info.GoVersion
}

// priceNote says why no cost is shown, when no price is known.
func priceNote(err error) string {
	return fmt.Sprintf("%v (list prices are known for %d models: claude-sonnet-4-5, gpt-4.1, …)", err, len(ledger.KnownPrices))
}

// colorOf reports whether w, where the display writes, takes colour.
func colorOf(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && useColor(f)
}
