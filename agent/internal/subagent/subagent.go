// Package subagent runs the task tool's sub-tasks (see tools.Task): each
// call starts a child agent, the same generated machine (gen/agent) driven
// by the same executor (agent/internal/agentexec) as the agent that calls
// it, on a conversation and a thread of its own, with read-only tools and
// no tool of its own to start subagents. Its last reply is the call's
// result.
//
// A call with "write": true, when the session allows it (Config.Writer),
// starts a writing child instead: it has the parent's tools as the parent
// has them (edit_file, bash in the parent's sandbox, the workspace
// writable), the parent's hooks as they run for the parent, and the
// parent's approval policy, its questions asked through the parent's gate
// and shown on the parent's display, labelled as its own
// (approval.Question.By). It has no commits of its own: it runs inside
// the parent's task call, within the parent's round of tools, so what it
// changes is what that round changed, which the parent's post-tools hook
// notes for the parent's turn's commit (and /undo) as the parent's own
// tools' changes, a file the user had changed too left out.
//
// The child works under the parent's rules: its tools are the parent's
// read-only ones, bash's sandbox keeping the workspace read-only; the
// parent's secrets are redacted from everything it sees and says; the
// parent's pre_tool and post_tool hooks run around its calls. It is
// bounded by the call: the parent's tool timeout, the parent's Ctrl-C
// (which cancels the call) and a number of tool calls (Config.MaxCalls).
// Its thread, saved in the parent's store with an event log beside it,
// names the parent's thread and the call (threadwire.Thread.SubagentOf,
// SubagentCall), and is pushed to the parent's -sync server when the
// parent's is (Config.Sync); what its replies used is added to the
// parent's ledger (Config.Usage).
//
// What it does is shown as the call's progress (see display.go): one line
// for each of its steps, marked "subagent", which the parent's display
// shows under the call and -json writes as tool_progress events.
package subagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/approval"
	"github.com/fsmgen/fsmgen/agent/internal/eventlog"
	"github.com/fsmgen/fsmgen/agent/internal/hooks"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// DefaultMaxCalls is the default of Config.MaxCalls.
const DefaultMaxCalls = 40

// Config is what the subagents of one session work with.
type Config struct {
	// Behavior is the child's configuration: its system prompt (see
	// Prompt), its model and its tools' specs. Required.
	Behavior *behavior.Agent
	// Provider streams the child's replies: the parent's. Required.
	Provider llm.Provider
	// Tools runs the child's calls: read-only tools only, without the
	// task tool. Required.
	Tools agentexec.ToolRunner
	// Workspace is the workspace's root. Required.
	Workspace string
	// Store saves the child's thread, and beside it the child's event
	// log, <ID>.events.jsonl, as a session's own (agent replay checks
	// it); nil saves and records nothing.
	Store *thread.Store
	// Sync, when set, returns the hook that gets each save of the
	// child's thread (agentexec.Config.Saved), given the thread's ID:
	// the session's push of it to its -sync server. nil, or a nil hook,
	// pushes nothing.
	Sync func(id string) func(t *threadwire.Thread)
	// Parent is the parent's thread ID, recorded on the child's.
	Parent string
	// Hooks are the parent's hooks; the child runs its pre_tool and
	// post_tool hooks (never turn_end), read-only. nil runs none.
	Hooks *hooks.Runner
	// Secrets are redacted from all the child sees and says.
	Secrets []string
	// Limits bounds each of the child's replies, as the parent's.
	Limits agentexec.Limits
	// MaxCalls is how many tool calls a child runs; the calls beyond it
	// are refused, telling the model to answer, and a child that goes on
	// calling is stopped (see limit.go). 0 means DefaultMaxCalls.
	MaxCalls int
	// Summary shows a call on one line, as the parent's display does;
	// nil shows its name alone.
	Summary func(chat.ToolCall) string
	// Writer, when set, lets a call ask for a writing child ("write":
	// true); nil refuses such calls with NoWrite.
	Writer *Writer
	// NoWrite is the error of a call that asks for a writing child when
	// Writer is nil: why not, and what would allow it.
	NoWrite string
	// Usage, when set, adds what the child's replies used to the
	// parent's ledger, once the child has stopped. It runs on the task's
	// goroutine and must do its own synchronisation.
	Usage func(ctx context.Context, l chat.Ledger)
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Writer is what a writing child works with: the parent's tools and
// rules.
type Writer struct {
	// Behavior is the writing child's configuration (its system prompt,
	// WritePrompt, and its tools' specs). Required.
	Behavior *behavior.Agent
	// Tools runs its calls: the parent's tools, without the task tool.
	// Required.
	Tools agentexec.ToolRunner
	// Hooks are the parent's hooks, run as for the parent's calls (never
	// turn_end). nil runs none.
	Hooks *hooks.Runner
	// Approval is the parent's approval policy.
	Approval approval.Policy
	// Ask asks the user through the parent (its gate, its display);
	// required when Approval asks or a tool asks before every call.
	Ask agentexec.Asker
}

// WritePrompt is the writing child's system prompt, before the
// workspace's instructions.
const WritePrompt = `You are a subagent of a coding agent, working in a software project (the workspace). The agent gave you one focused task, the message below; this conversation is your own, and only your last reply goes back to the agent.
You may change the workspace: edit_file edits and creates files, bash runs commands (when it is offered), under the same rules and approvals as the agent's own calls; what you change is the agent's work, committed with its turn. Change only what the task needs. You cannot start subagents.
Paths are relative to the workspace root. Nobody will answer questions: when you are done, write your final answer as your last reply, complete and self-contained (what you changed, with file paths, what you checked, and what is left), and stop.`

// Prompt is the child's system prompt, before the workspace's
// instructions.
const Prompt = `You are a subagent of a coding agent, working in a software project (the workspace). The agent gave you one focused task, the message below; this conversation is your own, and only your last reply goes back to the agent.
You are read-only: you cannot edit files or change anything, and you cannot start subagents. Investigate with the tools: list_files to find your way, read_file to read the code, and bash (when it is offered) to search and run read-only commands; its writes to the workspace fail.
Paths are relative to the workspace root. Nobody will answer questions: when you know enough, write your final answer as your last reply, complete and self-contained (what you found, with file paths and line numbers, and what you could not settle), and stop.`

// Runner runs the sub-tasks of a session's task calls; its Run is the
// task tool's runner (see tools.Task).
type Runner struct {
	cfg Config
}

// New returns a runner for cfg.
func New(cfg Config) (*Runner, error) {
	switch {
	case cfg.Behavior == nil:
		return nil, errors.New("subagent: Config.Behavior is nil; build the child's with behavior.New")
	case cfg.Provider == nil:
		return nil, errors.New("subagent: Config.Provider is nil; give the parent's")
	case cfg.Tools == nil:
		return nil, errors.New("subagent: Config.Tools is nil; give the parent's read-only tools")
	}
	if cfg.MaxCalls <= 0 {
		cfg.MaxCalls = DefaultMaxCalls
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if w := cfg.Writer; w != nil {
		switch {
		case w.Behavior == nil:
			return nil, errors.New("subagent: Config.Writer.Behavior is nil; build the writing child's with behavior.New")
		case w.Tools == nil:
			return nil, errors.New("subagent: Config.Writer.Tools is nil; give the parent's tools")
		}
		c := *w
		c.Hooks = withoutTurnEnd(w.Hooks)
		cfg.Writer = &c
	}
	if cfg.Hooks = withoutTurnEnd(cfg.Hooks); cfg.Hooks != nil {
		// Every call of the read-only child only reads: its hooks run
		// read-only.
		cfg.Hooks.Sandbox = cfg.Hooks.ReadOnly
	}
	return &Runner{cfg: cfg}, nil
}

// withoutTurnEnd returns a copy of r without its turn_end hooks, which
// never run for a child; nil for nil.
func withoutTurnEnd(r *hooks.Runner) *hooks.Runner {
	if r == nil {
		return nil
	}
	h := *r
	h.Hooks = nil
	for _, hk := range r.Hooks {
		if hk.Event != hooks.TurnEnd {
			h.Hooks = append(h.Hooks, hk)
		}
	}
	return &h
}

// Tool returns the task tool that runs r.
func (r *Runner) Tool() tools.Tool { return tools.Task(r.Run) }

// Run runs one sub-task: a child agent on a new thread, whose one turn
// is args.Prompt; its last reply is the answer. It returns once the child
// has stopped: at the end of its turn, or when ctx ends (the parent's
// Ctrl-C, the tool timeout), which stops it.
func (r *Runner) Run(ctx context.Context, args tools.TaskArgs, progress func(chat.ToolProgress)) (string, error) {
	cfg := r.cfg
	if args.Write && cfg.Writer == nil {
		return "", errors.New(cfg.NoWrite)
	}
	now := cfg.Now()
	t := &threadwire.Thread{Version: threadwire.Version, ID: thread.NewID(now), Created: now, Updated: now,
		Provider: cfg.Provider.Name(), Model: cfg.Behavior.Config().Model, Workspace: cfg.Workspace,
		SubagentOf: cfg.Parent, SubagentCall: tools.CallID(ctx)}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	show := newDisplay(t.ID, args.Description, cfg.Summary, progress)
	beh, runner, hooked := cfg.Behavior, cfg.Tools, cfg.Hooks
	policy, ask := approval.Never, agentexec.Asker(nil)
	if args.Write {
		w := cfg.Writer
		beh, runner, hooked, policy = w.Behavior, w.Tools, w.Hooks, w.Approval
		if w.Ask != nil {
			ask = labelled{next: w.Ask, by: strings.TrimSpace(Mark + " " + t.ID + ": " + strings.Join(strings.Fields(args.Description), " "))}
		}
	}
	lim := &limited{next: runner, max: cfg.MaxCalls, stop: stop, approvals: args.Write}
	var elog *eventlog.Writer
	if cfg.Store != nil {
		var err error
		if elog, err = eventlog.Open(filepath.Join(cfg.Store.Dir(), t.ID+".events.jsonl")); err != nil {
			return "", fmt.Errorf("start the subagent: %w", err)
		}
	}
	var saved func(*threadwire.Thread)
	if cfg.Sync != nil {
		saved = cfg.Sync(t.ID)
	}
	child, err := agentexec.New(agentexec.Config{
		Behavior:  beh,
		Provider:  cfg.Provider,
		Tools:     lim,
		Workspace: cfg.Workspace,
		Display:   show,
		Hooks:     hooked,
		Approval:  policy,
		Ask:       ask,
		Logger:    cfg.Logger.With("subagent", t.ID),
		Thread:    t,
		Store:     cfg.Store,
		Saved:     saved,
		EventLog:  elog,
		Secrets:   cfg.Secrets,
		Limits:    cfg.Limits,
		// Its one message; with no Input, it stops once its turn ends.
		Prompt: args.Prompt,
		Now:    cfg.Now,
	})
	if err != nil {
		if elog != nil {
			_ = elog.Close()
		}
		return "", fmt.Errorf("start the subagent: %w", err)
	}
	res, runErr := child.Run(ctx)
	if j := child.Journal(); j != nil {
		if err := j.Close(); err != nil && runErr == nil {
			runErr = fmt.Errorf("save the subagent's thread %s: %w", t.ID, err)
		}
	}
	if elog != nil {
		if err := elog.Close(); err != nil && runErr == nil {
			runErr = fmt.Errorf("close the subagent's event log: %w", err)
		}
	}
	if cfg.Usage != nil && res.Ledger.Replies > 0 {
		cfg.Usage(context.WithoutCancel(ctx), res.Ledger)
	}
	answer := strings.TrimSpace(show.answer())
	switch {
	case lim.stopped():
		return answer, fmt.Errorf("the subagent (thread %s) was stopped: it went on calling tools after its limit of %d calls; "+
			"give it a narrower task, or do the rest yourself", t.ID, cfg.MaxCalls)
	case ctx.Err() != nil:
		return answer, ctx.Err()
	case runErr != nil:
		return answer, fmt.Errorf("the subagent (thread %s) failed: %w", t.ID, runErr)
	case res.LastError != "":
		return answer, fmt.Errorf("the subagent (thread %s) ended with an error: %s", t.ID, res.LastError)
	case answer == "":
		return "(the subagent gave no answer)", nil
	}
	return answer, nil
}

// labelled asks through next, each question labelled by the child that
// asks (approval.Question.By).
type labelled struct {
	next agentexec.Asker
	by   string
}

// Granted implements agentexec.Asker: what the user granted the parent
// for the session, the child is granted too (and no more).
func (l labelled) Granted(tool string) bool { return l.next.Granted(tool) }

// AskUser implements agentexec.Asker.
func (l labelled) AskUser(ctx context.Context, key string, q approval.Question) (approval.Answer, error) {
	q.By = l.by
	return l.next.AskUser(ctx, key, q)
}
