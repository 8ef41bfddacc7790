package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/autocommit"
	"github.com/fsmgen/fsmgen/agent/internal/instructions"
	"github.com/fsmgen/fsmgen/agent/internal/ledger"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/internal/suggest"
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
	// custom marks a command read from a Markdown file (see
	// customCommand), listed apart in /help.
	custom bool
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
		undoCommand,
		expandCommand,
		usageCommand,
		modelCommand,
		compactCommand,
		sessionsCommand,
		resumeCommand,
		forkCommand,
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
	// branchCommits says that the commits go to a branch of the thread's
	// own (-commit branch), which a fork's branch starts from.
	branchCommits bool
	// thread is the thread's ID, and lineage it and the threads it was
	// forked from, newest first (their commits are this thread's past).
	thread  string
	lineage []string
	// workspace is the workspace's absolute directory.
	workspace string
	// next is the thread the session goes on with once this one has
	// ended (/resume, /fork, /model), "" for none; nextModel the model it
	// goes on with, "" for the thread's, and nextProvider its provider,
	// "" for the session's.
	next, nextModel, nextProvider string
	// hasKey reports whether the API key of a provider was in the
	// environment the agent started with (see sessionInput.keys).
	hasKey func(provider string) bool
	// opts are the session's options, its model settled.
	opts options
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

// afterTurn waits until the turn in flight (if any) has ended, saying
// so: a command that needs the agent idle (/undo, /fork) runs then
// rather than being refused, since the reply may be on the screen while
// the turn's work (its commit) goes on. Ctrl-C stops the turn sooner.
func (s *slashSession) afterTurn(ctx context.Context, name string) error {
	return s.agent.WaitIdle(ctx, fmt.Sprintf("/%s runs once this turn has ended (Ctrl-C stops it sooner)", name))
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
	for _, custom := range []bool{false, true} {
		heading := "commands:"
		if custom {
			heading = "custom commands (" + projectCommandsDir + "/*.md, and yours; their text is sent to the model):"
		}
		for i, c := range slices.DeleteFunc(slices.Clone(commands), func(c slashCommand) bool { return c.custom != custom }) {
			if i == 0 {
				fmt.Fprintln(w, heading)
			}
			use := "/" + c.name
			if c.args != "" {
				use += " " + c.args
			}
			fmt.Fprintf(w, "  %-*s  %s\n", width, use, c.help)
		}
	}
	fmt.Fprint(w, keysHelp)
}

// keysHelp is the part of /help about typing messages.
const keysHelp = `keys:
  Enter           send the message
  \ then Enter    go on with the message on a new line
  paste           pasted lines are one message, sent with the next Enter
  Up, Down        the messages sent before
  Left, Right     move; Alt-Left, Alt-Right a word at a time
  Home, End       the start and the end of the line (also Ctrl-A, Ctrl-E)
  Backspace       delete the character before; Delete (or Ctrl-D) the one under the cursor
  Ctrl-W          delete the word before
  Ctrl-U, Ctrl-K  delete to the start, to the end of the line
  Ctrl-T          swap the two characters before
  Tab             after @, complete a path (@path attaches the file, or a folder's listing)
  Ctrl-L          clear the screen
  Ctrl-C          with text typed, clear the line; at an empty prompt, stop the turn
                  (the model's reply and the tools); twice, or with no turn running, quit
  Ctrl-D          at an empty prompt, quit once the turn has ended
  //text          send "/text" to the model
`

// diffCommand shows what changed in the workspace during the session.
var diffCommand = slashCommand{
	name: "diff",
	help: "what changed in the workspace since the session started: what the agent committed, then what is not committed (yours)",
	run: func(ctx context.Context, s *slashSession, _ string) error {
		if s.committer == nil {
			return errors.New("the workspace's changes are not tracked: it is not in a git repository the agent can commit to (see the notice at start)")
		}
		ch, err := s.committer.Changes(ctx, s.base)
		if err != nil {
			return err
		}
		if ch.Committed == "" && ch.Uncommitted == "" {
			return s.say(ctx, "no changes since the session started")
		}
		return s.agent.Do(ctx, func() {
			for _, part := range []struct{ head, diff string }{
				{"── committed by the agent since the session started ──", ch.Committed},
				{"── not committed: your changes (and the agent's of a turn not committed yet, or left out of its commits) ──", ch.Uncommitted},
			} {
				if part.diff != "" {
					s.display.answer(part.head)
					s.display.diff(part.diff, "")
				}
			}
		})
	},
}

// undoCommand takes the last turn back: its commit reverted, the
// conversation cut back to before its message.
var undoCommand = slashCommand{
	name: "undo",
	help: "take the last turn back: revert its commit and cut the conversation back to before your message",
	run: func(ctx context.Context, s *slashSession, _ string) error {
		if err := s.afterTurn(ctx, "undo"); err != nil {
			return err
		}
		turn, ok, err := s.agent.LastTurn(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("nothing to undo: the conversation has no turn yet")
		}
		var res autocommit.UndoResult
		if s.committer != nil {
			if res, err = s.committer.Undo(ctx, s.lineage, turn.Key); err != nil {
				return fmt.Errorf("%w; the conversation was left as it is", err)
			}
		}
		if err := s.agent.UndoTurn(ctx); err != nil {
			if res.Commit != "" {
				return fmt.Errorf("the commit %s reverts the turn, but the conversation could not be cut back: %w", shortCommit(res.Commit), err)
			}
			return err
		}
		return s.say(ctx, undoneText(turn, res, s.committer != nil))
	},
}

// undoneText is what /undo says it did.
func undoneText(turn agentexec.Turn, res autocommit.UndoResult, committing bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "undone: %q; the conversation is back to before it (Up recalls the message)\n", short(turn.Prompt, 60))
	switch {
	case res.Reverted != "":
		fmt.Fprintf(&b, "reverted the turn's commit %s with %s on %s:\n", shortCommit(res.Reverted), shortCommit(res.Commit), res.Branch)
		for _, f := range res.Files {
			fmt.Fprintf(&b, "  %c %s\n", f.Status, f.Path)
		}
	case committing:
		b.WriteString("the turn made no commit: no file to put back\n")
	default:
		b.WriteString("the files the turn changed are left as they are: its changes were not committed (see the notice at start), so there is nothing to revert them from\n")
	}
	if turn.Summarized {
		b.WriteString("note: the conversation was compacted during or after this turn; the summary before it may still tell of the turn's work: tell the model it was undone\n")
	}
	return b.String()
}

// shortCommit returns the first 12 characters of a commit's name.
func shortCommit(commit string) string { return commit[:min(len(commit), 12)] }

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

// resumeCommand goes on with another thread.
var resumeCommand = slashCommand{
	name: "resume",
	args: "ID|last",
	help: "save this thread and continue another: its ID (/sessions lists them), or last, the workspace's newest other one",
	run: func(ctx context.Context, s *slashSession, args string) error {
		id := args
		switch {
		case id == "":
			return errors.New("give the thread to continue: its ID (/sessions lists them), or last")
		case id == resumeLast:
			var err error
			if id, err = newestOther(s.store, s.workspace, s.thread); err != nil {
				return err
			}
		case id == s.thread:
			return fmt.Errorf("this is thread %s already", id)
		}
		if _, err := s.store.Load(id); err != nil {
			return err
		}
		unlock, err := s.store.Lock(id)
		if err != nil {
			return err
		}
		unlock()
		if err := s.afterTurn(ctx, "resume"); err != nil {
			return err
		}
		if _, _, err := s.agent.LastTurn(ctx); err != nil {
			return err
		}
		return s.switchTo(ctx, id)
	},
}

// forkCommand goes on with a copy of the thread.
var forkCommand = slashCommand{
	name: "fork",
	help: "continue in a copy of this thread (a new ID), leaving this one as it is to resume later",
	run: func(ctx context.Context, s *slashSession, _ string) error {
		if err := s.afterTurn(ctx, "fork"); err != nil {
			return err
		}
		fork, err := s.agent.Fork(ctx, thread.NewID(time.Now().UTC()))
		if err != nil {
			return err
		}
		if s.committer != nil && s.branchCommits {
			// The fork's commits follow the thread's on a branch of its own.
			if err := s.committer.ForkBranch(ctx, "agent/"+fork.ID); err != nil {
				return fmt.Errorf("the fork %s was saved, but %w; resume it with agent -resume %s", fork.ID, err, fork.ID)
			}
		}
		if err := s.say(ctx, fmt.Sprintf("forked thread %s into %s; %s is left as it is (agent -resume %s)", s.thread, fork.ID, s.thread, s.thread)); err != nil {
			return err
		}
		return s.switchTo(ctx, fork.ID)
	},
}

// switchTo ends the session, saving its thread, for the session of
// thread id to follow on the same input. It returns once the session has
// ended: no more input is read for it.
func (s *slashSession) switchTo(ctx context.Context, id string) error {
	s.next = id
	if err := s.agent.Quit(ctx); err != nil {
		return err
	}
	<-ctx.Done() // the input task is stopped with the session
	return nil
}

// quitCommand ends the session.
var quitCommand = slashCommand{
	name: "quit",
	help: "stop the turn, if any, save the thread and quit",
	run: func(ctx context.Context, s *slashSession, _ string) error {
		return s.agent.Quit(ctx)
	},
}
