package agentexec

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"unicode/utf8"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/autocommit"
	"github.com/fsmgen/fsmgen/agent/internal/hooks"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/gen/agent"
)

// ToolRunner runs one tool call to completion; *tools.Set is one. Run must
// never panic, must return promptly once ctx is done, and may call
// progress from any goroutine until it returns.
type ToolRunner interface {
	Run(ctx context.Context, call chat.ToolCall, progress func(chat.ToolProgress)) chat.ToolOutcome
}

// ApprovalSetter is implemented by a ToolRunner whose tools may carry an
// approval setting of their own (tools.Set, an MCP server's tools): a
// tool's setting overrides Config.Approval for its calls (see
// tools.Approval).
type ApprovalSetter interface {
	Approval(name string) tools.Approval
}

// ResultNoter is implemented by a ToolRunner that adds to a call's result
// a note of its own which depends on what the conversation holds, and
// which the round's output budget (Limits.RoundOutput) must not cut: the
// instructions of the directories a call leads into, say (see cmd/agent
// and agent/internal/instructions). Before each round of tool calls and each
// query the agent calls NoteConversation, on the loop goroutine, with the
// conversation's messages as they stand then (an undo or a compaction may
// have cut what an earlier note brought); once a call has run, not
// cancelled, and its result was redacted and cut to the budget, it
// appends what Note returns for the call, redacted. Note gets the call's
// context: it must return promptly once ctx is done, as a tool must. The
// calls of a round run in parallel: Note must be safe for concurrent use.
type ResultNoter interface {
	NoteConversation(messages []chat.Message)
	Note(ctx context.Context, call chat.ToolCall) string
}

// noteConversation tells Config.Tools, when it is a ResultNoter, the
// conversation as it stands.
func (a *Agent) noteConversation() {
	if n, ok := a.cfg.Tools.(ResultNoter); ok {
		n.NoteConversation(a.conversation().Messages())
	}
}

// note returns what Config.Tools, when it is a ResultNoter, appends to
// the result of call, redacted; "" when ctx is done.
func (a *Agent) note(ctx context.Context, call chat.ToolCall) string {
	n, ok := a.cfg.Tools.(ResultNoter)
	if !ok || ctx.Err() != nil {
		return ""
	}
	return a.secrets.String(n.Note(ctx, call))
}

// toolApproval returns the approval setting of the tool name: its own, or
// tools.ApprovalPolicy.
func (a *Agent) toolApproval(name string) tools.Approval {
	if s, ok := a.cfg.Tools.(ApprovalSetter); ok {
		return s.Approval(name)
	}
	return tools.ApprovalPolicy
}

// InterruptedPrefix starts the outcome given on resume to a tool call that
// was still running when the agent stopped.
const InterruptedPrefix = "interrupted: the agent stopped before this tool finished"

// interruptedOutcome is the outcome of a call the agent stopped before it
// finished.
var interruptedOutcome = chat.ToolOutcome{
	Content: InterruptedPrefix + "; it may or may not have taken effect, so check before running it again",
	IsError: true,
}

// TooManyCallsPrefix starts the outcome of a tool call beyond
// Limits.ToolCalls, which is not run.
const TooManyCallsPrefix = "not run: too many tool calls in one reply"

// MalformedPrefix starts the outcome of a tool call whose arguments
// could not be used (see chat.ToolCall.Malformed), which is not run.
const MalformedPrefix = "not run: the arguments of this call"

// startTools runs the calls, at most Limits.ParallelTools at once, one
// task each, and sends one ToolCompleted for each, with ToolProgress
// reports while they run. Calls that may change anything (the mutating
// tools of the behaviour's configuration) run in the order the LLM gave
// them, each once the one before it has ended; read-only calls run in
// parallel beside them (see [callOrder]). The calls beyond Limits.ToolCalls
// are not run: each completes at once with an error telling the model the
// limit; nor are malformed calls, whose error names the call and says
// what was wrong with it. It cancels the tools of an earlier round still
// running, whose events are then dropped.
//
// Calls that share an ID complete in the LLM's order, whichever finishes
// first: the machine gives each completion to the first still-pending
// call with its ID, so that each call gets its own result.
func (a *Agent) startTools(calls []chat.ToolCall) {
	tctx, valid := a.tools.restart(a.ctx)
	clear(a.calls)
	for _, c := range calls {
		if _, ok := a.calls[c.ID]; !ok {
			a.calls[c.ID] = c
		}
		a.display.ToolCall(c)
	}
	l := a.loop
	clear(a.refused)
	a.noteConversation()
	a.later(func() {
		slots := make(chan struct{}, a.limits.ParallelTools)
		budget := newOutputBudget(a.limits.RoundOutput)
		turns := completionOrder(calls)
		running := newTaskCount()
		a.toolsStopped = running.done
		defer running.close()
		order := callOrder(calls, a.mutating)
		if slices.ContainsFunc(calls, func(c chat.ToolCall) bool { return a.mutating(c.Name) }) {
			// The calls start once the workspace is noted, so that the
			// turn's commit holds what they change and nothing else.
			noted := make(chan struct{})
			l.Go(tctx, "snapshot", func(ctx context.Context) {
				defer close(noted)
				if err := a.commits.Snapshot(ctx); err != nil && ctx.Err() == nil {
					_ = l.Call(ctx, func() { a.display.Hook(autocommit.Result{}, err) })
				}
			})
			for i := range order {
				order[i].after = append(order[i].after, noted)
			}
		}
		for i, c := range calls {
			var refusal *chat.ToolOutcome
			switch {
			case i >= a.limits.ToolCalls:
				refusal = &chat.ToolOutcome{IsError: true, Content: fmt.Sprintf(
					"%s: the reply asked for %d and at most %d are run per reply; ask for the rest after seeing these results",
					TooManyCallsPrefix, len(calls), a.limits.ToolCalls)}
			case c.Malformed != "":
				refusal = &chat.ToolOutcome{IsError: true, Content: malformedOutcome(c)}
			}
			turn := turns[i]
			if refusal != nil && turn.after == nil {
				ev := &agent.ToolCompleted{CallID: c.ID, Outcome: *refusal}
				a.refused[ev] = true
				l.Next(ev)
				turn.done()
				order[i].end()
				continue
			}
			running.add()
			started := l.Go(tctx, "tool "+c.Name, func(ctx context.Context) {
				defer running.end()
				var out chat.ToolOutcome
				if refusal != nil {
					out = *refusal
					order[i].end()
				} else {
					if !order[i].wait(ctx) {
						return
					}
					var ok bool
					if out, ok = a.runCall(ctx, c, slots, budget, valid); !ok {
						return
					}
					order[i].end()
				}
				if !turn.wait(ctx) {
					return
				}
				_ = l.SendIf(ctx, &agent.ToolCompleted{CallID: c.ID, Outcome: out}, valid)
				turn.done()
			})
			if !started {
				running.end()
			}
		}
	})
}

// runCall runs a call of a round, whose turn to start came: its
// pre_tool hooks, then the user's approval (Config.Approval), then the
// tool and its post_tool hooks, the hooks and the tool each holding one
// of slots while they run. A call a hook refuses is never asked about;
// one the user or a hook refused is not run, its refusal the outcome.
// ok is false when ctx ended first: the call neither ran nor completes.
func (a *Agent) runCall(ctx context.Context, c chat.ToolCall, slots chan struct{}, budget *outputBudget, valid func() bool) (out chat.ToolOutcome, ok bool) {
	l := a.loop
	progress := func(p chat.ToolProgress) {
		p.Message, p.Output = a.secrets.String(p.Message), a.secrets.String(p.Output)
		_ = l.SendIf(ctx, &agent.ToolProgress{CallID: c.ID, Progress: p}, valid)
	}
	take := func() bool {
		select {
		case slots <- struct{}{}:
			return true
		case <-ctx.Done():
			return false
		}
	}
	run, requested, reason := a.asRun(c)
	var pre []hooks.Report
	if len(a.cfg.Hooks.Of(hooks.PreTool, run.Name)) > 0 {
		if !take() {
			return out, false
		}
		var refusal *chat.ToolOutcome
		pre, refusal = a.preToolHooks(ctx, run, progress)
		<-slots
		switch {
		case ctx.Err() != nil:
			return out, false
		case refusal != nil:
			refusal.Content = budget.take(refusal.Content)
			return *refusal, true
		}
	}
	verdict, refusal, ok := a.approve(ctx, run, requested, reason)
	switch {
	case !ok:
		return out, false
	case refusal != nil:
		return *refusal, true
	}
	if !take() {
		return out, false
	}
	if a.cfg.Hooks != nil {
		out = a.hookedRun(ctx, run, pre, progress)
	} else {
		out = a.cfg.Tools.Run(ctx, run, progress)
	}
	<-slots
	out.Content = budget.take(a.secrets.String(out.Content)) + a.note(ctx, run)
	out.Approval = verdict
	return out, true
}

// runTool runs one query's call through Config.Tools between its
// pre_tool and post_tool hooks, which nobody is asked to approve: the
// path of every query (see startQuery).
func (a *Agent) runTool(ctx context.Context, call chat.ToolCall, progress func(chat.ToolProgress)) chat.ToolOutcome {
	if a.cfg.Hooks == nil {
		return a.cfg.Tools.Run(ctx, call, progress)
	}
	pre, refusal := a.preToolHooks(ctx, call, progress)
	if refusal != nil {
		return *refusal
	}
	return a.hookedRun(ctx, call, pre, progress)
}

// toolPath is the agent's runTool as a query.ToolRunner.
type toolPath struct{ a *Agent }

// Run implements query.ToolRunner.
func (p toolPath) Run(ctx context.Context, call chat.ToolCall, progress func(chat.ToolProgress)) chat.ToolOutcome {
	return p.a.runTool(ctx, call, progress)
}

// malformedOutcome is the result of a malformed call, which names the
// call, says what is wrong and shows the start of what the model wrote.
func malformedOutcome(c chat.ToolCall) string {
	var raw string
	if json.Unmarshal(c.Arguments, &raw) != nil {
		raw = string(c.Arguments)
	}
	const show = 200
	if len(raw) > show {
		cut := show
		for cut > 0 && !utf8.RuneStart(raw[cut]) {
			cut--
		}
		raw = raw[:cut] + fmt.Sprintf("… (%d bytes in all)", len(raw))
	}
	return fmt.Sprintf("%s to %s (id %s) %s (the reply's other calls were run); call it again with its arguments as one complete JSON object. What arrived: %s",
		MalformedPrefix, c.Name, c.ID, c.Malformed, raw)
}

// turn is when a call may send its completion: after the call before it
// with the same ID (after) has sent its own; done says so to the next.
type turn struct {
	after <-chan struct{} // nil: at once
	next  chan struct{}   // nil: no later call shares the ID
}

// wait waits for the call's turn; false when ctx ended first.
func (t turn) wait(ctx context.Context) bool {
	if t.after == nil {
		return true
	}
	select {
	case <-t.after:
		return true
	case <-ctx.Done():
		return false
	}
}

// done lets the next call with the same ID send its completion: the
// completion just sent is queued before it.
func (t turn) done() {
	if t.next != nil {
		close(t.next)
	}
}

// completionOrder returns each call's turn: calls whose ID no other call
// repeats complete when they finish; the others one after another, in
// the LLM's order.
func completionOrder(calls []chat.ToolCall) []turn {
	turns := make([]turn, len(calls))
	last := make(map[string]int, len(calls))
	for i, c := range calls {
		if j, ok := last[c.ID]; ok {
			turns[j].next = make(chan struct{})
			turns[i].after = turns[j].next
		}
		last[c.ID] = i
	}
	return turns
}

// step is when a call of a round may start: once every call it waits for
// has ended; end says it has ended.
type step struct {
	after []<-chan struct{}
	ended chan struct{}
}

// wait waits until the calls the step waits for have ended; false when
// ctx ended first.
func (s step) wait(ctx context.Context) bool {
	for _, ch := range s.after {
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// end says the call has ended.
func (s step) end() { close(s.ended) }

// callOrder returns when each call of a round may start: a mutating
// call (mutating reports which are) once the mutating call before it has
// ended, so that the calls that change anything run one after another in
// the LLM's order; a read-only call at once, beside them. A reply that
// writes a file with bash and then edits it works; a reply that reads
// five files reads them at once.
func callOrder(calls []chat.ToolCall, mutating func(name string) bool) []step {
	steps := make([]step, len(calls))
	var lastWrite <-chan struct{} // the last mutating call so far
	for i, c := range calls {
		steps[i].ended = make(chan struct{})
		if !mutating(c.Name) {
			continue
		}
		if lastWrite != nil {
			steps[i].after = []<-chan struct{}{lastWrite}
		}
		lastWrite = steps[i].ended
	}
	return steps
}

// mutating reports whether the tool name may change anything: whether it
// is among the behaviour's mutating tools, whose calls run the
// post-tools hook.
func (a *Agent) mutating(name string) bool {
	return slices.Contains(a.mutatingTools, name)
}

// outputBudget is what is left of the bytes a round's tool results may
// take (Limits.RoundOutput). It is safe for concurrent use: the round's
// calls complete in parallel.
type outputBudget struct {
	limit int
	left  atomic.Int64
}

// newOutputBudget returns a budget of limit bytes.
func newOutputBudget(limit int) *outputBudget {
	b := &outputBudget{limit: limit}
	b.left.Store(int64(limit))
	return b
}

// minCut is how much of a result is kept when the budget is spent, so
// that the model still sees how the call went.
const minCut = 2 << 10

// take returns content whole when the budget holds it, and takes it from
// the budget; otherwise it returns the beginning that fits (at least
// minCut bytes, ending on a whole character) with a note saying what was
// cut and why.
func (b *outputBudget) take(content string) string {
	n := int64(len(content))
	for {
		left := b.left.Load()
		if n <= left {
			if b.left.CompareAndSwap(left, left-n) {
				return content
			}
			continue
		}
		keep := max(left, minCut)
		if keep >= n {
			keep = n
		}
		if b.left.CompareAndSwap(left, max(left-keep, 0)) {
			if keep == n {
				return content
			}
			for keep > 0 && !utf8.RuneStart(content[keep]) {
				keep-- // end on a whole character
			}
			return fmt.Sprintf("%s\n[... cut: this result is %d bytes, and the results of this round passed the limit of %d bytes in all; ask for less at once (a part of a file, the end of a log) ...]",
				content[:keep], n, b.limit)
		}
	}
}

// taskCount closes done once every task counted has ended and close was
// called (no more tasks will be counted).
type taskCount struct {
	n    atomic.Int64 // the tasks running, plus one until close
	done chan struct{}
}

// newTaskCount returns a count of no tasks, open.
func newTaskCount() *taskCount {
	c := &taskCount{done: make(chan struct{})}
	c.n.Store(1)
	return c
}

// add counts a task.
func (c *taskCount) add() { c.n.Add(1) }

// end counts a task's end.
func (c *taskCount) end() {
	if c.n.Add(-1) == 0 {
		close(c.done)
	}
}

// close says no more tasks will be counted.
func (c *taskCount) close() { c.end() }
