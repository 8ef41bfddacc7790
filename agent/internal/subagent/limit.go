package subagent

import (
	"context"
	"fmt"
	"sync"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// LimitPrefix starts the result of a child's call beyond its limit, which
// is not run.
const LimitPrefix = "not run: this subagent's limit of tool calls is reached"

// graceCalls is how many calls past its limit a child may still ask for,
// each refused, before it is stopped: a model that reads the refusal
// answers at the next reply.
const graceCalls = 8

// limited runs a child's calls with next until max of them have run; it
// refuses the later ones, telling the model to answer, and stops the
// child (stop) once it has asked for graceCalls more. It passes the
// instructions notes of next (agentexec.ResultNoter) through, and, for a
// writing child (approvals), the approval settings of next's tools
// (agentexec.ApprovalSetter): a tool that asks before every call asks for
// the child too. A read-only child asks nobody.
type limited struct {
	next      agentexec.ToolRunner
	max       int
	stop      context.CancelFunc
	approvals bool

	mu      sync.Mutex
	calls   int
	refused int
}

var (
	_ agentexec.ResultNoter    = (*limited)(nil)
	_ agentexec.ApprovalSetter = (*limited)(nil)
)

// Approval implements agentexec.ApprovalSetter: next's setting for a
// writing child, ApprovalNever for a read-only one (whose tools only
// read, those that ask before every call refused).
func (l *limited) Approval(name string) tools.Approval {
	if s, ok := l.next.(agentexec.ApprovalSetter); ok && l.approvals {
		return s.Approval(name)
	}
	if l.approvals {
		return tools.ApprovalPolicy
	}
	return tools.ApprovalNever
}

// Run implements agentexec.ToolRunner.
func (l *limited) Run(ctx context.Context, call chat.ToolCall, progress func(chat.ToolProgress)) chat.ToolOutcome {
	l.mu.Lock()
	l.calls++
	over := l.calls > l.max
	if over {
		l.refused++
		if l.refused > graceCalls {
			l.stop()
		}
	}
	l.mu.Unlock()
	if over {
		return chat.ToolOutcome{IsError: true, Content: fmt.Sprintf("%s (%d); no more tools will run: answer now with what you found, and say what is left to find out", LimitPrefix, l.max)}
	}
	return l.next.Run(ctx, call, progress)
}

// stopped reports whether the child was stopped for going past its limit.
func (l *limited) stopped() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refused > graceCalls
}

// NoteConversation implements agentexec.ResultNoter.
func (l *limited) NoteConversation(messages []chat.Message) {
	if n, ok := l.next.(agentexec.ResultNoter); ok {
		n.NoteConversation(messages)
	}
}

// Note implements agentexec.ResultNoter.
func (l *limited) Note(ctx context.Context, call chat.ToolCall) string {
	if n, ok := l.next.(agentexec.ResultNoter); ok {
		return n.Note(ctx, call)
	}
	return ""
}
