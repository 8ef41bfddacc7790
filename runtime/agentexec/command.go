package agentexec

import (
	"context"
	"regexp"
	"strings"

	"github.com/fsmgen/fsmgen/gen/agent"
)

// Commands runs a slash command the user typed (see [IsCommand]) instead
// of sending it to the model. It runs on the input task, so no input is
// read until it returns; it may block (run git, say) and must return soon
// after ctx is done. It reaches the agent only through the methods that
// say they may be called while Run runs ([Agent.Do], [Agent.ShowUsage],
// [Agent.Quit]).
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

// waitIdle waits until the agent waits for input with no message queued
// (or has stopped), so that a command read from a script runs after the
// turns of the messages before it.
func (a *Agent) waitIdle(ctx context.Context) error {
	idle := make(chan struct{})
	if err := a.loop.Call(ctx, func() {
		a.idleWaiters = append(a.idleWaiters, idle)
		a.settle()
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
