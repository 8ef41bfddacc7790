// Package app is the coding agent's program: its flags, sessions, terminal
// and subcommands, run by cmd/agent (whose package doc is its manual).
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"

	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// Main runs the agent (cmd/agent) on the process's arguments, standard
// streams and environment, and returns its exit code.
func Main() int {
	// No descriptor the agent inherited reaches a command it runs.
	if err := errors.Join(hideKeys(), sandbox.CloseInheritedFDs()); err != nil {
		fmt.Fprintf(os.Stderr, "agent: %v\n", err)
		return exitError
	}
	return run(context.Background(), os.Args[1:], nil, os.Stdout, os.Stderr)
}

// run is the program; stdin nil means the process's standard input.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opt, code := parseFlags(args, stderr)
	if code >= 0 {
		return code
	}
	switch {
	case opt.version:
		fmt.Fprintln(stdout, version())
		return exitOK
	case opt.command == "replay":
		return replay(opt.commandArgs, opt.verbose, stdout, stderr)
	case opt.command == "sessions":
		return listSessions(opt, stdout, stderr)
	case opt.set["model"] && opt.model == modelList:
		if err := listModels(stdout); err != nil {
			fmt.Fprintf(stderr, "agent: %v\n", err)
			return exitError
		}
		return exitOK
	}
	in := &sessionInput{stdin: stdin}
	defer in.close()
	return exitStatus(runSessions(ctx, opt, in, stdout, stderr), stderr)
}

// runSessions runs the agent's sessions on one input: the first, with the
// thread the options name, then each that /resume or /fork goes on with.
func runSessions(ctx context.Context, o options, in *sessionInput, stdout, stderr io.Writer) error {
	for {
		err := agentMain(ctx, o, in, stdout, stderr)
		var next switchThread
		if !errors.As(err, &next) {
			return err
		}
		// The same terminal goes on with another thread, or the same on
		// another model (whose price and limits are its own).
		o.resume, o.first, o.switchedModel = next.id, "", next.model != ""
		o.baseURLFor, o.subagentProvider = next.baseURLFor, next.subagentProvider
		if next.model != "" {
			if o.price != "" {
				o.earlierPrices = maps.Clone(o.earlierPrices)
				if o.earlierPrices == nil {
					o.earlierPrices = map[string]string{}
				}
				o.earlierPrices[o.model] = o.price
			}
			o.model, o.price = next.model, ""
			o.set = maps.Clone(o.set)
			o.set["model"], o.set["price"] = true, false
		}
		if next.provider != "" {
			o.provider = next.provider
			o.set["provider"] = true
		}
	}
}

// exitStatus returns the exit status of the sessions' outcome, err, and
// shows err unless it was shown already (an exitCode).
func exitStatus(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ex exitCode
	if errors.As(err, &ex) {
		return int(ex)
	}
	fmt.Fprintf(stderr, "agent: %v\n", err)
	return exitError
}

// switchThread is what agentMain returns when the session goes on with
// another thread (/resume, /fork), or the same on another model (/model):
// its ID, the model ("" for the thread's) and its provider ("" for the
// session's), the provider -base-url applies to (see
// options.baseURLFor), and the one -subagent-model's is (see
// options.subagentProvider).
type switchThread struct{ id, model, provider, baseURLFor, subagentProvider string }

// Error implements error.
func (s switchThread) Error() string { return "continue with thread " + s.id }

// exitCode is an error that only sets the exit status; its message was
// already shown.
type exitCode int

// Error implements error.
func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
