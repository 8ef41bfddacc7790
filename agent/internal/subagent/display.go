package subagent

import (
	"fmt"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// Mark starts every line that shows a child's step.
const Mark = "subagent"

// display is a child's agentexec.Display: each step of the child that the
// user follows (its start, its tool calls, the failed ones, its retries
// and errors) is one line, reported as the progress of the parent's call:
// Message is the step's line, Output the last lines (tools.OutputLines of
// them, each ending in a newline) and UnitsProcessed counts the lines, as
// a running command's output is reported, so that the parent's display
// shows each line once, under the call. The child's replies are kept,
// not shown: the last is the call's result (see answer).
//
// The child calls its methods on its loop goroutine, one at a time.
type display struct {
	agentexec.NopDisplay
	summary  func(chat.ToolCall) string
	progress func(chat.ToolProgress)
	lines    []string // the last tools.OutputLines lines
	count    int64
	partial  strings.Builder // a reply cut at its token limit, continued
	last     string          // the last reply, whole
}

var _ agentexec.ContinueDisplay = (*display)(nil)

// newDisplay returns the display of the child of thread id, which reports
// through progress, and reports its start.
func newDisplay(id, description string, summary func(chat.ToolCall) string, progress func(chat.ToolProgress)) *display {
	d := &display{summary: summary, progress: progress}
	if d.progress == nil {
		d.progress = func(chat.ToolProgress) {}
	}
	what := strings.Join(strings.Fields(description), " ")
	if what == "" {
		what = "started"
	}
	d.show(fmt.Sprintf("%s %s: %s", Mark, id, what))
	return d
}

// show reports line as the child's next step.
func (d *display) show(line string) {
	line = strings.Join(strings.Fields(line), " ")
	if r := []rune(line); len(r) > 200 {
		line = string(r[:199]) + "…"
	}
	d.count++
	d.lines = append(d.lines, line)
	if len(d.lines) > tools.OutputLines {
		d.lines = d.lines[len(d.lines)-tools.OutputLines:]
	}
	d.progress(chat.ToolProgress{Message: line, Output: strings.Join(d.lines, "\n") + "\n", UnitsProcessed: d.count})
}

// answer is the child's last reply: its answer.
func (d *display) answer() string { return d.last }

// Reply implements agentexec.Display: the reply is kept (see answer).
func (d *display) Reply(msg chat.Message) {
	d.last = d.partial.String() + msg.Content
	d.partial.Reset()
}

// Continued implements agentexec.ContinueDisplay: the part is kept for
// the reply that continues it.
func (d *display) Continued(partial chat.Message, _, _ int) {
	d.partial.WriteString(partial.Content)
}

// ToolCall implements agentexec.Display.
func (d *display) ToolCall(call chat.ToolCall) {
	s := ""
	if d.summary != nil {
		s = d.summary(call)
	}
	d.show(strings.TrimSpace(fmt.Sprintf("%s → %s %s", Mark, call.Name, s)))
}

// ToolResult implements agentexec.Display: a failed call is shown.
func (d *display) ToolResult(call chat.ToolCall, out chat.ToolOutcome) {
	if out.IsError {
		first, _, _ := strings.Cut(strings.TrimSpace(out.Content), "\n")
		d.show(fmt.Sprintf("%s ✗ %s: %s", Mark, call.Name, first))
	}
}

// Retry implements agentexec.Display.
func (d *display) Retry(attempt int, delay time.Duration, err chat.LLMError) {
	d.show(fmt.Sprintf("%s: the LLM request failed (%v); retry %d in %s", Mark, err, attempt, delay))
}

// Notice implements agentexec.Display: a writing child's notices (the
// user's verdicts on its calls, say) are its steps.
func (d *display) Notice(msg string) {
	d.show(fmt.Sprintf("%s: %s", Mark, msg))
}

// Error implements agentexec.Display.
func (d *display) Error(msg string) {
	d.show(fmt.Sprintf("%s ✗ %s", Mark, msg))
}
