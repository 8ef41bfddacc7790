package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/fsmgen/fsmgen/chat"
	"github.com/fsmgen/fsmgen/runtime/agentexec"
	"github.com/fsmgen/fsmgen/runtime/autocommit"
	"github.com/fsmgen/fsmgen/runtime/ledger"
)

// terminal shows the agent's work: the assistant's text on out, everything
// else (tools, retries, errors, notices) on diag. Everything it writes goes
// through sanitize first.
//
// Interactive, the reply streams to out as it arrives. One-shot, out gets
// each completed assistant message whole, so that a reply cut off and
// retried is not printed twice.
type terminal struct {
	out, diag io.Writer
	stream    bool
	prompt    bool          // show a prompt when waiting for input
	midLine   bool          // out's last byte was not a newline
	price     *ledger.Price // the model's price, when known
	color     bool          // diag takes colour (see useColor)
	// wholeLines writes the streamed reply a line at a time (see
	// writeText); partial is the end of it not written yet.
	wholeLines bool
	partial    string
}

var _ agentexec.Display = (*terminal)(nil)

// Text implements agentexec.Display.
func (t *terminal) Text(delta string) {
	if !t.stream || delta == "" {
		return
	}
	delta = sanitize(delta)
	t.writeText(delta)
	t.midLine = !strings.HasSuffix(delta, "\n")
}

// Reply implements agentexec.Display.
func (t *terminal) Reply(msg chat.Message) {
	if t.stream {
		t.endLine()
		return
	}
	content := sanitize(msg.Content)
	if content == "" {
		return
	}
	_, _ = io.WriteString(t.out, content)
	if !strings.HasSuffix(content, "\n") {
		_, _ = io.WriteString(t.out, "\n")
	}
}

// endLine finishes a streamed line on out.
func (t *terminal) endLine() {
	if t.midLine {
		t.writeText("\n")
		t.midLine = false
	}
}

// diagf writes one line of diagnostics, with what the model, the tools
// or a server wrote in it made safe for a terminal.
func (t *terminal) diagf(format string, args ...any) {
	t.endLine()
	_, _ = io.WriteString(t.diag, sanitize(fmt.Sprintf(format, args...))+"\n")
}

// ToolCall implements agentexec.Display.
func (t *terminal) ToolCall(call chat.ToolCall) {
	t.diagf("→ %s %s", short(call.Name, 64), short(string(call.Arguments), 100))
}

// ToolProgress implements agentexec.Display.
func (t *terminal) ToolProgress(call chat.ToolCall, p chat.ToolProgress) {
	msg := p.Message
	if msg == "" && p.Fraction > 0 {
		msg = fmt.Sprintf("%.0f%%", 100*p.Fraction)
	}
	t.diagf("  … %s: %s", short(call.Name, 64), short(msg, 100))
}

// ToolResult implements agentexec.Display.
func (t *terminal) ToolResult(call chat.ToolCall, out chat.ToolOutcome) {
	mark := "✓"
	if out.IsError {
		mark = "✗"
	}
	lines := strings.Count(out.Content, "\n")
	if out.Content != "" && !strings.HasSuffix(out.Content, "\n") {
		lines++
	}
	first, _, _ := strings.Cut(out.Content, "\n")
	more := ""
	switch {
	case lines == 2:
		more = " (and 1 more line)"
	case lines > 2:
		more = fmt.Sprintf(" (and %d more lines)", lines-1)
	}
	t.diagf("  %s %s: %s%s", mark, short(call.Name, 64), short(first, 100), more)
}

// Hook implements agentexec.Display.
func (t *terminal) Hook(res autocommit.Result, err error) {
	for _, left := range []struct {
		paths  []string
		reason string
	}{
		{res.Withheld, autocommit.SecretReason},
		{res.Repositories, autocommit.RepositoryReason},
		{res.TooLarge, autocommit.TooLargeReason + " (-commit-max-new-file)"},
	} {
		if len(left.paths) > 0 {
			t.diagf("  ! not committed: %s — %s", short(strings.Join(left.paths, ", "), 200), left.reason)
		}
	}
	switch {
	case err != nil:
		t.diagf("  auto-commit failed: %v", err)
	case res.Committed:
		subject, _, _ := strings.Cut(res.Message, "\n")
		t.diagf("  committed %s: %s", short(res.Commit, 12), subject)
	default:
		t.diagf("  auto-commit skipped: %s", res.Skipped)
	}
}

// Retry implements agentexec.Display.
func (t *terminal) Retry(attempt int, delay time.Duration, err chat.LLMError) {
	t.diagf("! %s; retry %d in %s", err.Error(), attempt, delay)
}

// Error implements agentexec.Display.
func (t *terminal) Error(msg string) { t.diagf("error: %s", msg) }

// Notice implements agentexec.Display.
func (t *terminal) Notice(msg string) { t.diagf("agent: %s", msg) }

// Usage implements agentexec.Display.
func (t *terminal) Usage(l ledger.Ledger) {
	if u, ok := l.LastTurn(); ok && l.Turn == (chat.Usage{}) {
		t.diagf("agent: last turn: %s", ledger.Format(u, t.price))
	} else {
		t.diagf("agent: this turn: %s", ledger.Format(l.Turn, t.price))
	}
	replies := "replies"
	if l.Replies == 1 {
		replies = "reply"
	}
	t.diagf("agent: thread: %s, over %d %s", ledger.Format(l.Total, t.price), l.Replies, replies)
}

// TurnEnd implements agentexec.Display.
func (t *terminal) TurnEnd() {
	t.endLine()
	t.showPrompt()
}

// showPrompt shows that the agent waits for input, on a terminal.
func (t *terminal) showPrompt() {
	if t.prompt {
		_, _ = io.WriteString(t.diag, "> ")
	}
}

// short cuts s to n characters on one line, marking the cut.
func short(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// isTerminal reports whether f is a terminal (not merely a character
// device such as /dev/null).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
