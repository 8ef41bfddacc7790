package agentexec

import (
	"context"
	"fmt"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/approval"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// asRun returns call as it runs under Config.Approval: without the
// on-request arguments (see approval.Split) when the policy is on-request
// and the call may change anything, with whether the model asked for
// approval and its reason. The pre_tool hooks read the call as it runs.
func (a *Agent) asRun(call chat.ToolCall) (run chat.ToolCall, requested bool, reason string) {
	if a.cfg.Approval == approval.OnRequest && a.mutating(call.Name) {
		call.Arguments, requested, reason = approval.Split(call.Arguments)
	}
	return call, requested, reason
}

// approve settles whether call, as it runs (see asRun), runs under
// Config.Approval: it returns the verdict to record with its outcome (""
// when nobody was asked). A call the user refuses comes back with
// refusal set: its outcome, which the model reads. ok is false when ctx
// ended while the user was asked: the turn was stopped (Ctrl-C), or the
// agent is stopping, and the call neither ran nor completes. It runs on
// the call's task, in the order of the calls that may change anything,
// so questions come one at a time, and after the call's pre_tool hooks,
// so that a call a hook refuses is never asked about.
func (a *Agent) approve(ctx context.Context, call chat.ToolCall, requested bool, reason string) (verdict string, refusal *chat.ToolOutcome, ok bool) {
	policy := a.cfg.Approval
	mutating := a.mutating(call.Name)
	always := false
	switch a.toolApproval(call.Name) {
	case tools.ApprovalNever:
		return "", nil, true
	case tools.ApprovalAlways:
		always = true // asked whatever the policy, every call
	default:
		if !policy.ShouldAsk(mutating, requested) {
			return "", nil, true
		}
	}
	var asker Asker = a
	if a.cfg.Ask != nil {
		asker = a.cfg.Ask
	}
	if !always && asker.Granted(call.Name) {
		return approval.Always, nil, true
	}
	l := a.loop
	q := approval.Question{Call: call, Reason: a.secrets.String(reason)}
	key := call.Name // what an "a" answer grants
	if always {
		key += "\x00" + call.ID // nothing: the next call is asked again
	}
	answer, err := asker.AskUser(ctx, key, q)
	if err != nil {
		return "", nil, false
	}
	var note string
	switch answer.Verdict {
	case approval.Refused:
		out := approval.Refusal(a.secrets.String(answer.Reason))
		refusal = &out
		note = fmt.Sprintf("refused: %s is not run; the model is told", call.Name)
	case approval.Always:
		note = fmt.Sprintf("approved: %s, and every %s call for the rest of the session", call.Name, call.Name)
		if always {
			note = fmt.Sprintf("approved: %s (this call only: its setting, approve: always, asks before every call)", call.Name)
		}
	default:
		note = fmt.Sprintf("approved: %s", call.Name)
	}
	if l.Call(ctx, func() { a.display.Notice(note) }) != nil {
		return "", nil, false
	}
	return answer.Verdict, refusal, true
}

// Asker asks the user about tool calls: an Agent asks through its own
// gate and display; a subagent, which has no input of its own, through
// its parent's (Config.Ask).
type Asker interface {
	// Granted reports whether the user granted every call of tool for
	// the session (answered "always").
	Granted(tool string) bool
	// AskUser shows q and waits for the user's answer, or for ctx to
	// end; an "always" answer grants key (a tool's name) for the
	// session. Questions come one at a time.
	AskUser(ctx context.Context, key string, q approval.Question) (approval.Answer, error)
}

var _ Asker = (*Agent)(nil)

// Granted implements Asker: the tools granted on a's gate.
func (a *Agent) Granted(tool string) bool { return a.gate.Granted(tool) }

// AskUser implements Asker: q is shown on a's display, from a's loop,
// and answered by the next line the user types to a. It may be called
// from any goroutine, while a runs; a's own questions and those it asks
// for others come one at a time.
func (a *Agent) AskUser(ctx context.Context, key string, q approval.Question) (approval.Answer, error) {
	l := a.loop
	return a.gate.Ask(ctx, key, func(onScreen func()) {
		_ = l.Call(ctx, func() {
			onScreen()
			a.display.Ask(q)
		})
	})
}
