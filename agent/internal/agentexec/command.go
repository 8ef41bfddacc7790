package agentexec

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/gen/agent"
)

// Commands runs a slash command the user typed (see [IsCommand]) instead
// of sending it to the model. It runs on the input task, so no input is
// read until it returns; it may block (run git, say) and must return soon
// after ctx is done. It reaches the agent only through the methods that
// say they may be called while Run runs ([Agent.Do], [Agent.ShowUsage],
// [Agent.Quit], [Agent.LastTurn], [Agent.UndoTurn], [Agent.Fork]).
type Commands func(ctx context.Context, line string)

// command is a slash command: a slash, a name of lower-case letters,
// digits and dashes, then the end or white space. "/home/me/x.go:3: ..."
// (a pasted path) is no command.
var command = regexp.MustCompile(`^/[a-z][a-z0-9-]*(\s|$)`)

// IsCommand reports whether a message the user typed is a slash command:
// "/name" alone or followed by white space and arguments.
func IsCommand(msg string) bool { return command.MatchString(msg) }

// Literal returns what of a message that starts with "//" is sent to the
// model: the message less its first slash, so "//help" sends "/help".
// Other messages are returned as they are.
func Literal(msg string) string {
	if strings.HasPrefix(msg, "//") {
		return msg[1:]
	}
	return msg
}

// waitIdle waits until the agent waits for input (or has stopped), so that a command read from a script runs after the
// turns of the messages before it.
func (a *Agent) waitIdle(ctx context.Context) error { return a.WaitIdle(ctx, "") }

// WaitIdle waits until the agent waits for input, with no message held
// for a next turn (or has stopped): a command that needs the turn in flight to have ended
// (/fork, /undo) runs after it rather than being refused, since the
// turn's reply may be on the screen while its work (a commit) goes on.
// When the agent is not idle at once, notice (if any) is shown first,
// so that the user knows what waits. Call it only while Run runs, from
// another goroutine (a command).
func (a *Agent) WaitIdle(ctx context.Context, notice string) error {
	idle := make(chan struct{})
	if err := a.loop.Call(ctx, func() {
		a.idleWaiters = append(a.idleWaiters, idle)
		a.settle()
		select {
		case <-idle:
		default:
			if notice != "" {
				a.display.Notice(notice)
			}
		}
	}); err != nil {
		return err
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Do runs fn on the loop goroutine, between two events, and waits until
// it has run. fn may read the machine and the thread and use the display.
// It returns ErrStopped (see runtime/loop) once the agent has stopped, or
// ctx's error; fn then does not run. Call it only while Run runs, from
// another goroutine (a command, say).
func (a *Agent) Do(ctx context.Context, fn func()) error {
	done := make(chan struct{})
	if err := a.loop.Call(ctx, func() { defer close(done); fn() }); err != nil {
		return err
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ShowUsage shows the thread's account of tokens on the display (see
// Display.Usage). Call it only while Run runs, from another goroutine.
func (a *Agent) ShowUsage(ctx context.Context) error {
	return a.Do(ctx, func() { a.display.Usage(a.cfg.Thread.Ledger) })
}

// Quit asks the agent to shut down at once, the turn in flight included:
// what is in flight is cancelled and the thread saved, as on SIGTERM.
// Call it only while Run runs, from another goroutine.
func (a *Agent) Quit(ctx context.Context) error {
	return a.loop.Send(ctx, &agent.ShutdownRequested{})
}

// ErrBusy is returned by LastTurn while a turn runs.
var ErrBusy = errors.New("a turn is running: wait for it to end, or stop it with Ctrl-C, then try again")

// Turn is the last turn of the conversation, as /undo takes it back.
type Turn struct {
	// Start is the index of the user's message that started it (see
	// behavior.TurnStart), Prompt that message, Key what the turn is known
	// by (behavior.TurnKey; its commit's Agent-Turn trailer), and
	// Summarized whether the message before it is a compaction's summary,
	// which may tell of the turn's earlier work.
	Start      int
	Prompt     string
	Key        string
	Summarized bool
}

// LastTurn returns the conversation's last turn, false when it has none.
// It returns ErrBusy unless the agent waits for input. Call it only while Run runs, from another goroutine (a
// command).
func (a *Agent) LastTurn(ctx context.Context) (turn Turn, ok bool, err error) {
	busy := false
	err = a.Do(ctx, func() {
		if busy = a.isBusy() || a.m.Kind() != agent.StateWaitingForUserInput; busy {
			return
		}
		msgs := a.conversation().Messages()
		if turn.Start, ok = behavior.TurnStart(msgs); ok {
			turn.Prompt = msgs[turn.Start].Content
			turn.Key, _ = behavior.TurnKey(msgs)
			turn.Summarized = turn.Start > 0 && msgs[turn.Start-1].Summary
		}
	})
	if err == nil && busy {
		err = ErrBusy
	}
	return turn, ok, err
}

// UndoTurn takes the last turn back: the machine cuts the conversation
// back to before the turn's message (its UndoTurn event), and the thread
// is saved — a record appended that drops the turn's messages. It returns
// once that is done. The caller has reverted the turn's commit first (see
// autocommit.Committer.Undo). Call it only while Run runs, from another
// goroutine (a command), after LastTurn.
func (a *Agent) UndoTurn(ctx context.Context) error {
	if err := a.loop.Send(ctx, &agent.UndoTurn{}); err != nil {
		return err
	}
	return a.Do(ctx, func() {})
}
