package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/eventlog"
	"github.com/fsmgen/fsmgen/agent/internal/instructions"
	"github.com/fsmgen/fsmgen/agent/internal/ledger"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/agent/internal/query"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// The steps of a session's setup (see agentMain) that build the agent on
// what setup.go settled: its tools, its machine's configuration, its
// records, its terminal, its commits and sync, and the executor that runs
// it all.

// openTools makes the tools the mode offers: the built-in ones, guarded
// against changes to git's own files, and those of the MCP servers of the
// config file, started for the session. It refuses, as a usage error, a
// tool that asks before every call when there is no terminal to ask on.
func (s *agentSession) openTools(ctx context.Context) error {
	o := s.o
	guard, err := tools.NewGitGuard(ctx, s.ws)
	if err != nil {
		return err
	}
	s.guard = guard
	noteUnusualRepositories(guard, s.stderr)
	s.toolOpt = tools.Options{Timeout: o.toolTimeout, Logger: s.logger,
		MaxArgBytes: int(o.maxToolArgs), MaxEditBytes: int64(o.maxEditSize), Sandbox: s.sandbox, GitGuard: guard,
		Search: !o.toolCalls}
	set := tools.Default(s.ws, s.toolOpt)
	servers, err := startMCP(ctx, o, s.ws, s.sandboxOpt, s.secrets, s.logger, s.stderr)
	if err != nil {
		return err
	}
	s.onClose(func() { _ = servers.Close() })
	if set, err = set.With(servers.Tools()...); err != nil {
		return fmt.Errorf("the MCP servers' tools: %w", err)
	}
	s.toolSet = modeTools(o.mode, s.sandbox, set)
	// Without tool calls no tool is offered, so none is asked about.
	if asked := alwaysAsked(s.toolSet); o.toolCalls && len(asked) > 0 && !canAsk(s.in.stdin, s.stderr) {
		s.notef("%s ask before every call (approve: always in the config file's mcp_servers) and need a terminal to ask; run interactively, or set their approve to policy or never", strings.Join(asked, ", "))
		return exitCode(exitUsage)
	}
	return nil
}

// loadInstructions reads the workspace's instructions files (AGENTS.md
// and the like) unless the config file turns them off, and says which.
func (s *agentSession) loadInstructions(context.Context) error {
	if s.o.config.instructions.disabled {
		return nil
	}
	opt := s.o.config.instructionsOptions()
	opt.Redactor = s.secrets
	s.instructions = instructions.Load(s.ws, opt)
	noteInstructions(s.instructions, s.stderr)
	return nil
}

// buildBehavior makes the machine's configuration from the options, the
// tools (as the approval policy offers them) and the instructions, and
// records on the thread what it runs with.
func (s *agentSession) buildBehavior(context.Context) error {
	o := s.o
	specs := offerApproval(o.approve, s.toolSet, s.stderr)
	bc := behaviorConfig(o, o.model, specs)
	if s.instructions != nil {
		bc.System += s.instructions.System()
	}
	bc.MutatingTools = s.toolSet.MutatingNames()
	b, err := behavior.New(bc)
	if err != nil {
		return fmt.Errorf("the agent's configuration: %w", err)
	}
	s.behavior = b
	t := s.thread
	t.Provider, t.Model, t.Workspace = s.provider.Name(), o.model, s.ws.Root()
	t.NoToolCalls = !o.toolCalls
	return nil
}

// openEventLog opens the event log, repairing a line a crash cut short.
// The thread's own log, when an older agent wrote it, is moved aside and
// a new one started. A log the session made is removed when the session
// ends with no message (and so no journal; see agentexec.Agent.save).
func (s *agentSession) openEventLog(context.Context) error {
	path, own := s.logPath, s.o.logFile == ""
	_, statErr := os.Stat(path)
	if own && errors.Is(statErr, fs.ErrNotExist) {
		s.onClose(func() {
			if s.saved() == nil {
				_ = os.Remove(path)
			}
		})
	}
	elog, err := eventlog.Open(path)
	if errors.Is(err, eventlog.ErrFormat) && own {
		old := path + "." + s.now.Format("20060102-150405") + ".old"
		if rerr := os.Rename(path, old); rerr != nil {
			return fmt.Errorf("%w; moving it aside failed: %w", err, rerr)
		}
		s.notef("the thread's event log is of an older format; it was moved to %s and a new one started", old)
		elog, err = eventlog.Open(path)
	}
	if err != nil {
		return err
	}
	s.elog = elog
	s.onClose(func() { _ = s.closeEventLog() })
	if r := elog.Repaired(); r.Line != 0 {
		s.notef("the last line of the event log (line %d, %d bytes) was cut short by a crash and was removed", r.Line, r.Bytes)
	}
	return nil
}

// openTerminal opens the input of an interactive session (once for the
// run) and the display on the terminal, removes the temporary files of
// edits a crash cut short (which the display tells), and sets up the
// slash commands.
func (s *agentSession) openTerminal(ctx context.Context) error {
	o, in, t := s.o, s.in, s.thread
	if s.interactive {
		if err := in.open(s.stderr, int(o.maxInputLine)); err != nil {
			return err
		}
	}
	display := &terminal{out: s.stdout, diag: s.stderr, stream: s.interactive, prompt: in.prompt}
	if in.editor != nil {
		display.useEditor(in.editor, s.stdout)
		in.editor.SetComplete(func(word string) []string { return completePaths(ctx, s.ws, word) })
	}
	display.model = o.model
	for m, given := range o.earlierPrices {
		if p, err := ledger.ParsePrice(given); err == nil { // checked when given
			if display.earlier == nil {
				display.earlier = map[string]ledger.Price{}
			}
			display.earlier[m] = p
		}
	}
	if p, err := priceOf(o); err == nil {
		display.price = &p
	} else {
		display.noPrice = priceNote(err)
	}
	display.verbose, display.color = o.verbose, colorOf(s.stderr)
	if o.json {
		display.events = &jsonEvents{out: s.stdout, red: s.secrets}
		display.events.emit(startEvent{Type: evStart, Session: t.ID, Provider: t.Provider, Model: t.Model, Workspace: t.Workspace, Mode: o.mode})
	}
	if o.mode == modePlan {
		display.planned = fmt.Sprintf("plan mode: nothing was changed; to carry the plan out: agent -resume %s -mode auto", t.ID)
	}
	display.editLine = func(call chat.ToolCall) (int, int) {
		return tools.EditLine(ctx, s.ws, call.Arguments, int64(o.maxEditSize))
	}
	s.display = display

	if removed, err := tools.CleanTemp(ctx, s.ws); err != nil {
		display.Notice(fmt.Sprintf("could not remove the temporary files of edits cut short: %v", err))
	} else if len(removed) > 0 {
		display.Notice(fmt.Sprintf("removed %d temporary files of edits cut short: %s", len(removed), strings.Join(removed, ", ")))
	}
	commands := slashCommands()
	dir, label := userCommandsDir()
	custom, notes := loadCustomCommands(ctx, s.ws, dir, label, commands)
	for _, c := range custom {
		commands = append(commands, c.slash())
	}
	for _, n := range notes {
		if in.once(n) { // not again on /fork, /resume, /model
			display.Notice(n)
		}
	}
	s.custom = custom
	s.slash = &slashSession{display: display, commands: commands, store: s.store, thread: t.ID, opts: o,
		lineage: lineage(s.store, t), workspace: s.ws.Root(), instructions: s.instructions,
		hasKey: func(p string) bool { return in.keys[llm.KeyVar(p)] != "" }}
	if o.price != "" {
		s.slash.price = display.price
	}
	return nil
}

// openCommits opens the auto-commit as -commit asks (it says where the
// commits go, or why there are none), and gives it to the slash commands
// (/diff, /undo) with the HEAD the session starts from.
func (s *agentSession) openCommits(ctx context.Context) error {
	committer, c := openCommitter(ctx, s.o, s.ws.Root(), s.thread.ID, s.llmCfg.APIKey, s.programs, s.guard, s.stderr)
	s.committer = committer
	if c == nil {
		return nil
	}
	var err error
	s.slash.committer, s.slash.branchCommits = c, s.o.commit == commitBranch
	if s.slash.base, err = c.Head(ctx); err != nil {
		s.display.Notice(fmt.Sprintf("/diff will show the whole repository: reading its HEAD failed: %v", err))
	}
	return nil
}

// startSync starts the thread's push, in the background and redacted, to
// the -sync server; the session's end stops it (see finish and close).
func (s *agentSession) startSync(ctx context.Context) error {
	pusher, err := startSync(ctx, s.o.sync, s.o.syncAllowHTTP, s.syncToken, []string{s.llmCfg.APIKey}, s.display.diag)
	if err != nil {
		return err
	}
	s.pusher = pusher
	s.onClose(func() { s.stopSync(ctx) })
	return nil
}

// buildExecutor makes the executor that runs the machine: it performs
// the machine's actions with the LLM, the tools, the display and the
// records, and reads the user's messages and slash commands.
func (s *agentSession) buildExecutor(ctx context.Context) error {
	o := s.o
	var saved func(*threadwire.Thread)
	if s.pusher != nil {
		saved = s.pusher.Saved
	}
	prompt := s.expandCustom(o.prompt + o.first)
	var promptImages []chat.Image
	if prompt != "" {
		msg, notes := mentions(ctx, s.ws, prompt, textOnly(o.model))
		prompt, promptImages = msg.Content, msg.Images
		for _, n := range notes {
			s.display.Notice(n)
		}
	}
	a, err := agentexec.New(agentexec.Config{
		Behavior:     s.behavior,
		Provider:     s.provider,
		Tools:        toolRunner(s.toolSet, s.instructions),
		Workspace:    s.ws.Root(),
		Committer:    s.committer,
		Display:      s.display,
		Hooks:        s.hooks,
		Logger:       s.logger,
		Thread:       s.thread,
		Store:        s.store,
		Journal:      s.journal,
		EventLog:     s.elog,
		Secrets:      []string{s.llmCfg.APIKey, s.syncToken},
		Prompt:       prompt,
		PromptImages: promptImages,
		// One-shot, a script resumes a thread to have its turn finished.
		ContinueTurn: !s.interactive,
		Editor:       s.in.messages,
		Commands:     s.slash.run,
		Prepare: func(ctx context.Context, msg string) (chat.Message, []string) {
			return mentions(ctx, s.ws, msg, textOnly(o.model))
		},
		Signals:    []os.Signal{syscall.SIGTERM},
		Interrupts: []os.Signal{os.Interrupt},
		Limits: agentexec.Limits{ToolCalls: o.maxToolCalls, ParallelTools: o.parallelTools,
			InputLine: int(o.maxInputLine), RoundOutput: int(o.maxRoundOutput)},
		Saved:    saved,
		Approval: o.approve,
		Queries:  queryStrategy(o),
		// The environment query's version commands run as bash's do.
		Facts: query.Facts{Sandbox: s.sandbox},
	})
	if err != nil {
		return err
	}
	s.agent, s.slash.agent = a, a
	return nil
}
