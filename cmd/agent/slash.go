package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fsmgen/fsmgen/internal/suggest"
	"github.com/fsmgen/fsmgen/runtime/agentexec"
	"github.com/fsmgen/fsmgen/runtime/autocommit"
	"github.com/fsmgen/fsmgen/runtime/instructions"
	"github.com/fsmgen/fsmgen/runtime/ledger"
	"github.com/fsmgen/fsmgen/runtime/thread"
)

// slashCommand is a command the user types at the prompt, "/name args",
// which the agent answers itself instead of sending it to the model.
type slashCommand struct {
	// name is the command without its slash: lower-case letters, digits
	// and dashes.
	name string
	// args shows its arguments in /help ("" for none), e.g. "[ID]".
	args string
	// help is its line in /help.
	help string
	// run runs it with the words after the name. It runs on the input
	// task (see agentexec.Commands): it may block, and reaches the agent
	// through s.agent; what it shows goes through s.say. An error is shown
	// as the command's error.
	run func(ctx context.Context, s *slashSession, args string) error
}

// slashCommands returns every slash command, in the order /help lists
// them. A new command is one line here and a slashCommand of its own.
func slashCommands() []slashCommand {
	return []slashCommand{
		helpCommand,
		diffCommand,
		expandCommand,
		usageCommand,
		sessionsCommand,
		instructionsCommand,
		quitCommand,
	}
}

// slashSession is what a slash command works with.
type slashSession struct {
	agent    *agentexec.Agent
	display  *terminal
	commands []slashCommand
	// committer is the workspace's auto-commit, nil when changes are not
	// committed; base is the commit HEAD named when the session started.
	committer *autocommit.Committer
	base      string
	// store is the threads folder; price the model's price given with
	// -price, nil for the list prices.
	store *thread.Store
	price *ledger.Price
	// instructions are the session's instructions files; nil when they
	// are off.
	instructions *instructions.Set
}

// say shows text to the user as the answer of a command: on the display,
// between two of the agent's events.
func (s *slashSession) say(ctx context.Context, text string) error {
	return s.agent.Do(ctx, func() { s.display.answer(text) })
}

// run runs the command line (see agentexec.IsCommand): the command it
// names, or an error that names the commands it may have meant.
func (s *slashSession) run(ctx context.Context, line string) {
	name, args, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	name = strings.TrimSpace(name)
	args = strings.TrimSpace(args)
	for _, c := range s.commands {
		if c.name == name {
			if err := c.run(ctx, s, args); err != nil && ctx.Err() == nil {
				_ = s.agent.Do(ctx, func() { s.display.Error(fmt.Sprintf("/%s: %v", name, err)) })
			}
			return
		}
	}
	_ = s.agent.Do(ctx, func() { s.display.Error(unknownCommand(name, s.commands)) })
}

// unknownCommand is the error for "/name", which is no command.
func unknownCommand(name string, commands []slashCommand) string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	msg := fmt.Sprintf("unknown command /%s", name)
	if m := suggest.Closest(name, names); m != "" {
		msg += fmt.Sprintf("; did you mean /%s?", m)
	}
	return msg + " (/help lists the commands; start a message with // to send it to the model as it is, one slash less)"
}

// helpCommand lists the commands.
var helpCommand = slashCommand{
	name: "help",
	help: "list the commands and the keys",
	run: func(ctx context.Context, s *slashSession, _ string) error {
		var b strings.Builder
		writeHelp(&b, s.commands)
		return s.say(ctx, b.String())
	},
}

// writeHelp writes /help's text.
func writeHelp(w io.Writer, commands []slashCommand) {
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name)+len(c.args)+2)
	}
	fmt.Fprintln(w, "commands:")
	for _, c := range commands {
		use := "/" + c.name
		if c.args != "" {
			use += " " + c.args
		}
		fmt.Fprintf(w, "  %-*s  %s\n", width, use, c.help)
	}
	fmt.Fprint(w, keysHelp)
}

// keysHelp is the part of /help about typing messages.
const keysHelp = `keys:
  Enter           send the message
  \ then Enter    go on with the message on a new line
  paste           pasted lines are one message, sent with the next Enter
  Up, Down        the messages sent before
  Ctrl-C          stop the turn (the model's reply and the tools); twice, or at an empty prompt, quit
  Ctrl-D          quit once the turn has ended
  //text          send "/text" to the model
`

// diffCommand shows what changed in the workspace during the session.
var diffCommand = slashCommand{
	name: "diff",
	help: "what changed in the workspace since the session started (the agent's commits and what is not committed)",
	run: func(ctx context.Context, s *slashSession, _ string) error {
		if s.committer == nil {
			return errors.New("the workspace's changes are not tracked: it is not in a git repository the agent can commit to (see the notice at start)")
		}
		d, err := s.committer.Diff(ctx, s.base)
		if err != nil {
			return err
		}
		if d == "" {
			return s.say(ctx, "no changes since the session started")
		}
		return s.agent.Do(ctx, func() { s.display.diff(d, "") })
	},
}

// expandCommand shows the last round's tool results whole.
var expandCommand = slashCommand{
	name: "expand",
	help: "the whole output of the last round of tools",
	run: func(ctx context.Context, s *slashSession, _ string) error {
		return s.agent.Do(ctx, s.display.expand)
	},
}

// usageCommand shows the tokens used.
var usageCommand = slashCommand{
	name: "usage",
	help: "the tokens used and their cost, this turn and in the whole thread",
	run: func(ctx context.Context, s *slashSession, _ string) error {
		return s.agent.ShowUsage(ctx)
	},
}

// sessionsCommand lists the saved threads.
var sessionsCommand = slashCommand{
	name: "sessions",
	help: "the saved threads, the most recently saved first (as agent sessions lists them)",
	run: func(ctx context.Context, s *slashSession, _ string) error {
		list, problems, err := sessions(s.store)
		if err != nil {
			return err
		}
		var b strings.Builder
		if err := writeSessions(&b, list, s.price); err != nil {
			return err
		}
		for _, p := range problems {
			fmt.Fprintf(&b, "%v\n", p)
		}
		return s.say(ctx, b.String())
	},
}

// quitCommand ends the session.
var quitCommand = slashCommand{
	name: "quit",
	help: "stop the turn, if any, save the thread and quit",
	run: func(ctx context.Context, s *slashSession, _ string) error {
		return s.agent.Quit(ctx)
	},
}
