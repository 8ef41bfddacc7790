package agentexec

import (
	"context"
	"fmt"
	"strings"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/hooks"
)

// The user's hooks (Config.Hooks): pre_tool and post_tool hooks run for
// every tool call and query, within the call's context, so that Ctrl-C
// and the end of the round stop them: a round's call runs its pre_tool
// hooks before the user is asked to approve it, then the tool and its
// post_tool hooks (see startTools); a query runs them all on one path
// (runTool). turn_end hooks run once a turn ended with the model's
// reply, in a task of their own that the next message waits for.

// HookRefusedPrefix starts the outcome of a call a pre_tool hook refused,
// which is not run.
const HookRefusedPrefix = "not run: a pre_tool hook refused this call"

// HookDisplay is a Display that shows what a turn_end hook gave apart
// from the agent's notices; a Display without the method is given it as
// a Notice.
type HookDisplay interface {
	Display
	// HookRan shows what a turn_end hook gave.
	HookRan(r hooks.Report)
}

// preToolHooks runs the pre_tool hooks of call, as it runs (see
// asRun): a hook that fails refuses the call, and refusal is then the
// call's outcome, the hook's output the reason; reports are what the
// hooks gave, for hookedRun. A round runs them before the user is asked
// to approve the call (see startTools), so that a call a hook refuses is
// never asked about.
func (a *Agent) preToolHooks(ctx context.Context, call chat.ToolCall, progress func(chat.ToolProgress)) (reports []hooks.Report, refusal *chat.ToolOutcome) {
	pre, refused := a.cfg.Hooks.BeforeTool(ctx, call, a.mutating(call.Name), progress)
	if !refused {
		return pre, nil
	}
	last := pre[len(pre)-1]
	out := strings.TrimSpace(last.Output)
	if out == "" {
		out = "(no output)"
	}
	return pre, &chat.ToolOutcome{IsError: true, Content: fmt.Sprintf("%s: %q (%s) %v; its output:\n%s\nNothing was run. Follow what it says, or ask the user.",
		HookRefusedPrefix, last.Hook.Command, last.Hook.Source, last.Err, out)}
}

// hookedRun runs call, which its pre_tool hooks let through with pre
// (see preToolHooks), through Config.Tools and then its post_tool hooks:
// what the hooks print is appended to the call's result, each under a
// line naming it (the pre_tool hooks' first, so that the result's first
// line stays the tool's). A hook that succeeds without output adds
// nothing.
func (a *Agent) hookedRun(ctx context.Context, call chat.ToolCall, pre []hooks.Report, progress func(chat.ToolProgress)) chat.ToolOutcome {
	out := a.cfg.Tools.Run(ctx, call, progress)
	if ctx.Err() != nil || a.cfg.Hooks == nil {
		return out
	}
	post := a.cfg.Hooks.AfterTool(ctx, call, out, a.mutating(call.Name), progress)
	var b strings.Builder
	b.WriteString(out.Content)
	for _, rep := range append(pre, post...) {
		if !rep.Silent() {
			b.WriteString("\n" + rep.String())
		}
	}
	out.Content = b.String()
	return out
}

// startTurnHooks runs the turn_end hooks of the turn that ended with
// conv, when there are any, in a task: the next turn's work waits for
// them (see holdWork), Ctrl-C stops them (see interrupt), and what they
// give is shown and goes to the model with the next message the user
// types (see turnHooksEnded). Loop goroutine only.
func (a *Agent) startTurnHooks(conv chat.Conversation) {
	r := a.cfg.Hooks
	hs := r.Of(hooks.TurnEnd, "")
	if len(hs) == 0 {
		return
	}
	reply := a.secrets.String(lastReply(conv.Messages()))
	ctx, cancel := context.WithCancel(a.ctx)
	a.endHooks, a.hooksStopped = cancel, false
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = fmt.Sprintf("%q", h.Command)
	}
	a.display.Notice(fmt.Sprintf("end-of-turn hooks: running %s (Ctrl-C stops them)", strings.Join(names, ", ")))
	l := a.loop
	started := l.Go(ctx, "turn_end hooks", func(ctx context.Context) {
		reports := r.TurnEnded(ctx, reply, nil)
		_ = l.Call(a.ctx, func() { a.turnHooksEnded(reports) })
	})
	if !started {
		cancel()
		a.endHooks = nil
	}
}

// turnHooksEnded shows what the turn_end hooks gave and keeps it for the
// model's next message, in the thread (Thread.HookNote), unless the user
// stopped them. Loop goroutine only.
func (a *Agent) turnHooksEnded(reports []hooks.Report) {
	if a.endHooks == nil {
		return
	}
	a.endHooks()
	a.endHooks = nil
	var note []string
	for _, rep := range reports {
		rep.Output = a.secrets.String(rep.Output)
		if hd, ok := a.display.(HookDisplay); ok {
			hd.HookRan(rep)
		} else {
			a.display.Notice(rep.String())
		}
		if !rep.Silent() {
			note = append(note, rep.String())
		}
	}
	switch {
	case a.hooksStopped:
		a.display.Notice("end-of-turn hooks stopped; the model is not told what they gave")
	case len(note) > 0:
		a.hookNote = "[what the end-of-turn hooks gave after your last reply]\n" + strings.Join(note, "\n")
		if !a.inputClosed {
			a.display.Notice("the end-of-turn hooks' output goes to the model with your next message")
		}
		// Saved with the thread, so that a session resumed later sends
		// it with its first message.
		if err := a.save(); err != nil {
			a.failed = err
			a.loop.Stop()
			return
		}
	}
	a.launchHeld()
	a.settle()
}

// withHookNote returns msg with what the last turn_end hooks gave
// appended, once. Loop goroutine only.
func (a *Agent) withHookNote(msg chat.Message) chat.Message {
	if a.hookNote != "" {
		msg.Content += "\n\n" + a.hookNote
		a.hookNote = ""
	}
	return msg
}

// lastReply returns the text of the conversation's last reply.
func lastReply(msgs []chat.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == chat.RoleAssistant && msgs[i].Content != "" {
			return msgs[i].Content
		}
	}
	return ""
}

// noteHooksRunning tells the user, as they type a message while the
// turn_end hooks run, that its turn waits for them. Loop goroutine only.
func (a *Agent) noteHooksRunning() {
	if a.endHooks != nil && !a.isBusy() {
		a.display.Notice("the end-of-turn hooks are running: your message is sent when they end (Ctrl-C stops them)")
	}
}
