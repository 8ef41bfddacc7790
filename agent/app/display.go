package app

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/autocommit"
	"github.com/fsmgen/fsmgen/agent/internal/ledger"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/term"
	"github.com/fsmgen/fsmgen/agent/internal/termtext"
)

// terminal shows the agent's work: the assistant's text on out, everything
// else (tools, retries, errors, notices) on diag. Everything it writes goes
// through termtext.Sanitize first.
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
	model     string        // the session's model, whose price is price
	// earlier are the prices -price gave the models that served the
	// thread before /model switched (see options.earlierPrices).
	earlier map[string]ledger.Price
	color   bool // diag takes colour (see useColor)
	// streamEditor writes the streamed reply through the editor (see
	// writeText).
	streamEditor bool
	// verbose shows tool calls and results whole (-v).
	verbose bool
	// leftSaid holds the files the commits of this turn left out that
	// were named, with the reason (see Hook); cleared when a turn ends.
	leftSaid map[string]bool
	// printed counts the lines of a running command's output printed as
	// plain lines, by call ID (see ToolProgress).
	printed map[string]int64
	// noPrice says why costs are not shown, once (see Usage); "" once
	// said, or when the price is known.
	noPrice string
	// final is the last assistant text of a one-shot run, its answer;
	// cut is the text of the replies cut at their token limit that the
	// next one continues.
	final, cut string
	// outputs are the results of the last round of tools, whole, for
	// /expand; resultsShown says a new round starts with the next result.
	outputs      []toolOutput
	resultsShown bool
	// editLine tells where an edit_file call would change its file, and
	// how often its old_str occurs (see tools.EditLine), for the diff
	// shown when the user is asked to approve it; nil when unknown.
	editLine func(chat.ToolCall) (line, found int)
	// editor is the terminal's line editor, when the input is typed in
	// one; asking says its prompt asks for an answer (see Ask).
	editor *term.Editor
	asking bool
	// planned, in plan mode, is said when a turn ends: how to carry the
	// plan out; "" in auto mode.
	planned string
	// events, in a one-shot run with -json, gets every event as a JSON
	// line as it happens (see jsonEvents); nil otherwise.
	events *jsonEvents
}

// toolOutput is a tool call's result, kept for /expand.
type toolOutput struct {
	call    chat.ToolCall
	content string
}

var _ agentexec.ContinueDisplay = (*terminal)(nil)

// Text implements agentexec.Display.
func (t *terminal) Text(delta string) {
	t.events.text(delta)
	if !t.stream || delta == "" {
		return
	}
	delta = termtext.Sanitize(delta)
	t.writeText(delta)
	t.midLine = !strings.HasSuffix(delta, "\n")
}

// Reply implements agentexec.Display.
func (t *terminal) Reply(msg chat.Message) {
	t.events.reply(msg, false)
	t.thinking(msg)
	if t.stream {
		t.endLine()
		return
	}
	if content := termtext.Sanitize(msg.Content); content != "" || t.cut != "" {
		t.final = t.cut + content // written at the end (see answerOnly)
	}
	t.cut = ""
}

// Continued implements agentexec.ContinueDisplay: the reply reached its
// token limit, and the model is asked to continue it. Streamed, its text
// goes on where it stopped; one-shot, the answer is the pieces joined.
func (t *terminal) Continued(partial chat.Message, n, limit int) {
	t.events.reply(partial, true)
	t.thinking(partial)
	if !t.stream {
		t.cut += termtext.Sanitize(partial.Content)
	}
	if t.verbose || !t.stream {
		t.diagf("agent: the reply reached its token limit; the model is asked to continue it (%d of %d)", n, limit)
	}
}

// thinking shows the model's thinking blocks of a reply on diag, dimmed:
// the start of each and its length, or whole with -v. They are not the
// answer.
func (t *terminal) thinking(msg chat.Message) {
	for _, th := range msg.Thinking {
		var line string
		switch {
		case th.Redacted != "":
			line = "thinking: (encrypted by the provider)"
		case t.verbose:
			line = "thinking: " + strings.TrimSpace(th.Text)
		default:
			first, _, _ := strings.Cut(strings.TrimSpace(th.Text), "\n")
			line = fmt.Sprintf("thinking: %s (%s; -v shows it whole)", short(first, 100), plural(len(strings.Fields(th.Text)), "word"))
		}
		t.endLine()
		_, _ = io.WriteString(t.diag, t.paint(sgrDim, termtext.Sanitize(line))+"\n")
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
	_, _ = io.WriteString(t.diag, termtext.Sanitize(fmt.Sprintf(format, args...))+"\n")
}

// ToolCall implements agentexec.Display.
func (t *terminal) ToolCall(call chat.ToolCall) {
	t.events.toolCall(call)
	if t.verbose {
		t.diagf("→ %s %s", short(call.Name, 64), string(call.Arguments))
		t.resultsShown = len(t.outputs) > 0
		return
	}
	t.diagf("%s", strings.TrimSpace("→ "+short(call.Name, 64)+" "+callSummary(call)))
	t.resultsShown = len(t.outputs) > 0
}

// ToolProgress implements agentexec.Display. A running command's output
// (chat.ToolProgress.Output) is shown as it comes: in the line editor,
// its last lines under the progress line, drawn again in place as they
// change (the result takes their place); otherwise, as plain lines, each
// new line once.
func (t *terminal) ToolProgress(call chat.ToolCall, p chat.ToolProgress) {
	t.events.toolProgress(call, p)
	msg := p.Message
	if msg == "" && p.Fraction > 0 {
		msg = fmt.Sprintf("%.0f%%", 100*p.Fraction)
	}
	head := termtext.Sanitize(fmt.Sprintf("  … %s: %s", short(call.Name, 64), short(msg, 100)))
	out := lines(termtext.Sanitize(p.Output))
	if t.editor != nil {
		t.endLine()
		width := t.editor.Width()
		block := []string{fitRow(head, width)}
		for _, l := range out {
			block = append(block, "    "+t.paint(sgrDim, fitRow(l, width-4)))
		}
		_ = t.editor.SetLive(block)
		return
	}
	// Plain lines: those not printed yet (UnitsProcessed counts the
	// complete ones), the progress line when there are none.
	if !strings.HasSuffix(p.Output, "\n") && len(out) > 0 {
		out = out[:len(out)-1] // a line still being written
	}
	fresh := p.UnitsProcessed - t.printed[call.ID]
	if p.Output == "" || fresh <= 0 {
		t.line(head)
		return
	}
	if t.printed == nil {
		t.printed = map[string]int64{}
	}
	t.printed[call.ID] = p.UnitsProcessed
	if skipped := fresh - int64(len(out)); skipped > 0 {
		t.line(fmt.Sprintf("    … %s", plural(int(skipped), "line")))
	}
	out = out[max(0, int64(len(out))-fresh):]
	t.line("    " + t.paint(sgrDim, indent(strings.Join(out, "\n"))))
}

// fitRow cuts s to what a row of width columns shows.
func fitRow(s string, width int) string {
	s = strings.ReplaceAll(s, "\t", "    ")
	if rows := term.Rows(s, max(width, 8)); len(rows) > 1 {
		r := []rune(rows[0])
		return string(r[:len(r)-1]) + "…"
	}
	return s
}

// ToolResult implements agentexec.Display: an error whole; an edit with
// its diff; a command with the last lines of its output; another tool
// with its first line. -v shows every result whole; /expand shows the
// last round's.
func (t *terminal) ToolResult(call chat.ToolCall, out chat.ToolOutcome) {
	t.events.toolResult(call, out)
	if t.resultsShown {
		t.outputs, t.resultsShown = t.outputs[:0], false
	}
	t.outputs = append(t.outputs, toolOutput{call: call, content: out.Content})
	name := termtext.Sanitize(short(call.Name, 64))
	content, hooked := termtext.Sanitize(out.Content), ""
	if !out.IsError && !t.verbose {
		content, hooked = splitHookReports(content)
		defer t.hookReports(hooked)
	}
	all := lines(content)
	ok := t.paint(sgrGreen, "✓")
	switch {
	case out.IsError:
		t.whole(t.paint(sgrRed, "✗"), name, all)
	case call.Name == "edit_file":
		t.line(fmt.Sprintf("  %s %s: %s", ok, name, content))
		if d := lines(editDiff(call, out.Content)); len(d) > 0 {
			shown := d[:min(len(d), diffLines)]
			t.diff(strings.Join(shown, "\n"), "    ")
			if len(d) > len(shown) {
				t.line(fmt.Sprintf("    … %d more lines of the diff; /diff shows every change", len(d)-len(shown)))
			}
		}
	case t.verbose:
		t.whole(ok, name, all)
	case call.Name == "bash" && content == "(no output)":
		t.line(fmt.Sprintf("  %s %s: no output", ok, name))
	case call.Name == "bash":
		head := fmt.Sprintf("  %s %s: %s of output", ok, name, plural(len(all), "line"))
		if len(all) > 0 && strings.Contains(all[0], sandbox.LimitNote) {
			head += ", " + all[0] // the limit reached, and its flag
		}
		t.line(head)
		// Plain lines printed as the command ran are not shown again.
		rest := all
		if n, ok := t.printed[call.ID]; ok {
			rest = all[min(int(n), len(all)):]
			delete(t.printed, call.ID)
		}
		shown := rest[max(0, len(rest)-tailLines):]
		if hidden := len(rest) - len(shown); hidden > 0 {
			t.line(fmt.Sprintf("    … %d earlier lines hidden; /expand shows the whole output", hidden))
		}
		if len(shown) > 0 {
			t.line("    " + t.paint(sgrDim, indent(strings.Join(shown, "\n"))))
		}
	default:
		first, more := "", ""
		if len(all) > 0 {
			first = all[0]
		}
		if len(all) > 1 {
			more = fmt.Sprintf(" (%d lines; /expand shows them)", len(all))
		}
		t.line(fmt.Sprintf("  %s %s: %s%s", ok, name, short(first, 100), more))
	}
}

// whole shows a tool's result whole: its first line on the tool's line,
// the others below it.
func (t *terminal) whole(mark, name string, all []string) {
	t.line(fmt.Sprintf("  %s %s: %s", mark, name, strings.Join(all, "\n    ")))
}

// plural is "1 line" or "n lines".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// line writes one line of diagnostics as it is: its parts were made safe
// for a terminal (see termtext.Sanitize) by the caller.
func (t *terminal) line(s string) {
	t.endLine()
	_, _ = io.WriteString(t.diag, s+"\n")
}

// expand shows the results of the last round of tools whole.
func (t *terminal) expand() {
	if len(t.outputs) == 0 {
		t.answer("no tool has run yet")
		return
	}
	for _, o := range t.outputs {
		t.answer(fmt.Sprintf("── %s %s\n%s", o.call.Name, callSummary(o.call), o.content))
	}
}

// indent indents the lines after the first of s by four spaces.
func indent(s string) string {
	return strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ")
}

// Hook implements agentexec.Display.
func (t *terminal) Hook(res autocommit.Result, err error) {
	t.events.hook(res, err)
	for _, left := range []struct {
		paths  []string
		reason string
	}{
		{res.Withheld, autocommit.SecretReason},
		{res.Repositories, autocommit.RepositoryReason},
		{res.TooLarge, autocommit.TooLargeReason + " (-commit-max-new-file)"},
		{res.Mixed, autocommit.MixedReason},
	} {
		// A round names what it leaves out, and so does the turn's
		// commit: each file is said once a turn.
		var fresh []string
		for _, p := range left.paths {
			if key := left.reason + "\x00" + p; !t.leftSaid[key] {
				if t.leftSaid == nil {
					t.leftSaid = map[string]bool{}
				}
				t.leftSaid[key] = true
				fresh = append(fresh, p)
			}
		}
		if len(fresh) > 0 {
			t.diagf("  ! not committed: %s — %s", short(strings.Join(fresh, ", "), 200), left.reason)
		}
	}
	switch {
	case err != nil:
		t.diagf("  auto-commit failed: %v", err)
	case res.Committed:
		subject, _, _ := strings.Cut(res.Message, "\n")
		t.diagf("  committed %s on %s: %s", short(res.Commit, 12), res.Branch, subject)
	case res.Skipped == autocommit.SkippedRecorded:
		// A round's changes, committed when the turn ends.
	default:
		t.diagf("  auto-commit skipped: %s", res.Skipped)
	}
}

// Retry implements agentexec.Display.
func (t *terminal) Retry(attempt int, delay time.Duration, err chat.LLMError) {
	t.events.retry(attempt, delay, err)
	// One short line a retry; the server's whole message the first time.
	what := string(err.Kind)
	if err.StatusCode != 0 {
		what += fmt.Sprintf(" (HTTP %d)", err.StatusCode)
	}
	if attempt == 1 || t.verbose {
		what = err.Error()
	}
	t.diagf("! %s; retry %d in %s", what, attempt, delay)
}

// Error implements agentexec.Display.
func (t *terminal) Error(msg string) {
	t.events.message(evError, msg)
	t.diagf("error: %s", msg)
}

// Notice implements agentexec.Display.
func (t *terminal) Notice(msg string) {
	t.events.message(evNotice, msg)
	t.diagf("agent: %s", msg)
}

// Usage implements agentexec.Display. A turn's tokens and the thread's
// are each priced at the price of the model that used them (see
// ledger.LastCost, ThreadCost): a thread may have gone on with another
// model (/model), and a turn's subagents may run on another
// (-subagent-model).
func (t *terminal) Usage(l chat.Ledger) {
	what, u := "this turn", l.Turn
	if last, ok := l.LastTurn(); ok && l.Turn == (chat.Usage{}) {
		what, u = "last turn", last
	}
	line := ledger.Format(u, nil)
	if c, err := ledger.LastCost(l, u, t.model, t.priceOfModel); err == nil {
		line += fmt.Sprintf(", $%.4f", c)
	}
	t.diagf("agent: %s: %s", what, line)
	replies := "replies"
	if l.Replies == 1 {
		replies = "reply"
	}
	total := ledger.Format(l.Total, nil)
	if c, err := ledger.ThreadCost(l, t.model, t.priceOfModel); err == nil && t.price != nil {
		total += fmt.Sprintf(", $%.4f", c)
	}
	t.diagf("agent: thread: %s, over %d %s", total, l.Replies, replies)
	if t.noPrice != "" {
		t.diagf("agent: no cost shown: %s", t.noPrice)
		t.noPrice = ""
	}
}

// priceOfModel returns the price of model: the session's price (-price,
// or the list price) for the session's model; for another, the -price it
// was given in this run before /model left it, else its list price.
func (t *terminal) priceOfModel(model string) (ledger.Price, error) {
	if model == t.model && t.price != nil {
		return *t.price, nil
	}
	if p, ok := t.earlier[model]; ok {
		return p, nil
	}
	return ledger.PriceOf(model)
}

// TurnEnd implements agentexec.Display.
func (t *terminal) TurnEnd() {
	clear(t.leftSaid)
	t.unask()
	t.endLine()
	if t.planned != "" {
		t.diagf("agent: %s", t.planned)
	}
	t.showPrompt()
}

// showPrompt shows that the agent waits for input, on a terminal.
func (t *terminal) showPrompt() {
	if t.prompt {
		_, _ = io.WriteString(t.diag, "> ")
	}
}

// short cuts s to about n characters on one line, at a space when there
// is one in its second half, marking the cut.
func short(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := string([]rune(s)[:n])
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = cut[:i]
	}
	return cut + "…"
}

// isTerminal reports whether f is a terminal (not merely a character
// device such as /dev/null).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
