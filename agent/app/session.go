package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/eventlog"
	"github.com/fsmgen/fsmgen/agent/internal/hooks"
	"github.com/fsmgen/fsmgen/agent/internal/instructions"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/agent/internal/progpath"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/agent/internal/threadsync"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// agentMain runs one session of the agent on one thread: it sets the
// session up from the options, a step at a time, runs the agent until the
// user quits (or the one-shot turn ends), and closes what the steps opened.
// It returns a switchThread when the terminal goes on with another thread,
// and an exitCode when it has shown the error already.
func agentMain(ctx context.Context, o options, in *sessionInput, stdout, stderr io.Writer) error {
	s, err := newSession(o, in, stdout, stderr)
	if err != nil {
		return err
	}
	defer s.close()
	for _, step := range []func(context.Context) error{
		s.openThreads,      // the threads directory, and the thread -resume last names
		s.openThread,       // the resumed thread, locked, or a new one
		s.settleModel,      // the model and the limits of its replies
		s.openWorkspace,    // the workspace, checked
		s.takeKeys,         // the API keys, out of the environment; the LLM
		s.lockThread,       // a new thread, locked
		s.hideOwnFiles,     // the event logs and threads of this and earlier sessions
		s.openSandbox,      // bash's sandbox; the workspace's secrets masked
		s.openTools,        // the tools, the MCP servers' among them
		s.loadInstructions, // the workspace's instructions files
		s.loadHooks,        // the user's and the project's hooks
		s.addSubagents,     // the task tool, which runs read-only subagents
		s.buildBehavior,    // the machine's configuration
		s.openEventLog,     // the event log
		s.openTerminal,     // the input, the display, the slash commands
		s.openCommits,      // the auto-commit
		s.startSync,        // the thread's push to the -sync server
		s.buildExecutor,    // what runs the machine's actions
	} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	s.greet()
	res, err := s.agent.Run(ctx)
	return s.finish(ctx, res, err)
}

// agentSession is what one session of the agent works with: the options as
// the session settles them, and what its steps open, closed in one place
// (close).
type agentSession struct {
	// o are the options; the steps settle what was left open (the
	// threads directory, the resumed thread's workspace and model...).
	o              options
	in             *sessionInput
	stdout, stderr io.Writer
	logger         *slog.Logger
	// now is when the session started.
	now time.Time
	// interactive is false for a one-shot session (-p).
	interactive bool

	// store is the threads directory and thread the session's thread;
	// journal is the resumed thread's journal, nil for a new thread (the
	// executor makes one when it first saves it; see saved).
	store   *thread.Store
	thread  *threadwire.Thread
	journal *thread.Journal
	ws      *tools.Workspace

	// llmCfg is the LLM's configuration, its API key included, and
	// provider the LLM; syncToken is the -sync server's token, and
	// secrets all the secrets of the session.
	llmCfg    llm.Config
	provider  llm.Provider
	syncToken string
	secrets   *redact.Redactor

	// logPath is the event log's file, and elog the log open on it.
	logPath string
	elog    *eventlog.Writer

	sandboxOpt   sandbox.Options
	programs     *progpath.Resolver
	sandbox      *sandbox.Sandbox
	guard        *tools.GitGuard
	toolSet      *tools.Set
	toolOpt      tools.Options     // the options of the built-in tools
	instructions *instructions.Set // nil when they are off
	hooks        *hooks.Runner     // nil when there are none
	behavior     *behavior.Agent

	display   *terminal
	custom    []customCommand // the custom slash commands
	slash     *slashSession
	committer agentexec.Committer // nil when nothing is committed
	pusher    *threadsync.Pusher  // nil without -sync
	subSync   subagentSync        // the pushers of the subagents' threads
	agent     *agentexec.Agent

	// cleanups undo what the steps did, in the reverse order; see close.
	cleanups []func()
}

// newSession starts a session on the options, after checking that it can
// ask for approvals where the policy says it will.
func newSession(o options, in *sessionInput, stdout, stderr io.Writer) (*agentSession, error) {
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelDebug
	}
	if o.approve.Asks() && !canAsk(in.stdin, stderr) {
		fmt.Fprintf(stderr, "agent: %v\n", needsTerminal(o.approve))
		return nil, exitCode(exitUsage)
	}
	if o.config == nil {
		o.config = &configFile{}
	}
	return &agentSession{
		o: o, in: in, stdout: stdout, stderr: stderr,
		logger:      slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
		now:         time.Now().UTC(),
		interactive: o.prompt == "",
	}, nil
}

// onClose adds f to what close does: the steps' cleanups run in the
// reverse of the order they were added in.
func (s *agentSession) onClose(f func()) { s.cleanups = append(s.cleanups, f) }

// close undoes what the steps did, last first: it closes what they opened
// and unlocks the thread. A step that the session's end (finish) already
// undid has nothing left to do.
func (s *agentSession) close() {
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		s.cleanups[i]()
	}
}

// saved returns the thread's journal: the resumed one, or the one the
// executor made when it first saved the thread; nil while a new thread
// is unsaved.
func (s *agentSession) saved() *thread.Journal {
	if s.agent != nil {
		return s.agent.Journal()
	}
	return s.journal
}

// notef shows a line of the agent's on standard error.
func (s *agentSession) notef(format string, args ...any) {
	fmt.Fprintf(s.stderr, "agent: "+format+"\n", args...)
}

// greet says which thread the session works on and where, and in an
// interactive session shows the end of a resumed conversation and how to
// type.
func (s *agentSession) greet() {
	t := s.thread
	verb := "started"
	if s.o.resume != "" {
		verb = "resumed"
	}
	s.notef("thread %s %s (%s %s in %s)", t.ID, verb, t.Provider, t.Model, t.Workspace)
	if s.pusher != nil {
		s.notef("thread syncs to %s (in the background, redacted)", s.pusher.URL())
	}
	if !s.interactive {
		return
	}
	if s.o.resume != "" && !s.o.switchedModel {
		if conv, ok := agent.ConversationOf(s.agent.Machine().State()); ok {
			showEarlier(s.stderr, conv.Messages(), earlierExchanges)
		}
	}
	fmt.Fprintln(s.stderr, "agent: type a message and press Enter; Ctrl-D to quit, Ctrl-C to stop at once")
	if s.agent.Machine().Kind() == agent.StateWaitingForUserInput {
		s.display.showPrompt()
	}
}

// finish ends the session once the agent has run (with res and runErr):
// it shows a one-shot result, closes the records, pushes the thread's
// last version, reports what changed in git behind the agent's back, and
// says how to continue the thread. It returns the session's outcome:
// runErr, a switchThread for /resume and /fork, or an exitCode for a
// one-shot turn that failed.
func (s *agentSession) finish(ctx context.Context, res agentexec.Result, runErr error) error {
	if !s.interactive {
		s.display.finishOneShot(s.thread.ID, res, s.o.json)
	}
	closeErr := s.closeRecords()
	s.display.endLine()
	s.stopSync(ctx)
	reportGitChanges(context.WithoutCancel(ctx), s.guard, s.stderr)
	id := s.thread.ID
	if s.slash.next != "" && runErr == nil && s.saved() != nil {
		s.notef("thread %s saved; continue it with: agent -resume %s", id, id)
		return errors.Join(closeErr, switchThread{id: s.slash.next, model: s.slash.nextModel, provider: s.slash.nextProvider, baseURLFor: s.o.baseURLFor,
			subagentProvider: s.o.subagentProvider})
	}
	if s.saved() != nil {
		s.notef("thread %s saved; continue it with: agent -resume %s", id, id)
	} else {
		s.notef("thread %s had no message; nothing was saved", id)
	}
	if err := errors.Join(runErr, closeErr); err != nil {
		return err
	}
	if !s.interactive {
		switch {
		case !res.Idle:
			fmt.Fprintln(s.stderr, "agent: the turn was interrupted before it ended")
			return exitCode(exitError)
		case res.LastError != "":
			return exitCode(exitError)
		}
	}
	return nil
}

// closeRecords closes the event log and the thread's journal, and
// returns what failed.
func (s *agentSession) closeRecords() error {
	err := s.closeEventLog()
	if j := s.saved(); j != nil {
		err = errors.Join(err, j.Close())
	}
	return err
}

// closeEventLog closes the event log, once.
func (s *agentSession) closeEventLog() error {
	if s.elog == nil {
		return nil
	}
	err := s.elog.Close()
	s.elog = nil
	return err
}

// stopSync pushes the thread's last version to the -sync server, once,
// and its subagents' threads', and stops the pushers.
func (s *agentSession) stopSync(ctx context.Context) {
	stopSync(ctx, s.pusher, s.thread.ID, s.stderr)
	s.pusher = nil
	s.stopSubagentSync(ctx)
}
