// Package agentexec makes the coding agent act: it drives the agent
// machine (gen/agent, with its guards and effects from package behavior)
// with a runtime/loop Loop and performs the machine's actions.
//
// An [Agent] is both the machine's agent.Handler and the loop's Executor.
// The machine calls its Handler methods during HandleEvent, on the loop
// goroutine, once per action and in order: they start the work (an LLM
// stream, a round of tools in parallel, the post-tools auto-commit hook, a
// retry timer) in tasks the loop owns, which send their results back as
// events. After each event, Execute records it and its actions in the
// event log (see agent/internal/eventlog), saves the thread (see agent/internal/thread)
// when the event changed it, and ends the turn once the machine waits for
// input. Input the user types during a turn is the machine's to keep: its
// busy states defer UserInput (spec/agent.yaml), hold it in their state,
// which the thread saves, and take it once they wait for input again. A
// session can then be resumed from the saved thread, and replayed from the
// log with [ReplayAgent].
//
// The files split the work by concern: agent.go (configuration, Run,
// Start, Execute), handler.go (the actions), stream.go, tools.go, hook.go
// and retry.go (the tasks the actions start), persist.go (the event log
// and the thread), input.go (standard input, input lines, signals),
// display.go and replay.go.
package agentexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/approval"
	"github.com/fsmgen/fsmgen/agent/internal/eventlog"
	"github.com/fsmgen/fsmgen/agent/internal/hooks"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/agent/internal/query"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/threadwire"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
	"github.com/fsmgen/fsmgen/runtime/loop"
)

// Config is what an [Agent] works with.
type Config struct {
	// Behavior is the machine's guards and effects. Required.
	Behavior *behavior.Agent
	// Provider streams the LLM's replies. Required.
	Provider llm.Provider
	// Tools runs the tool calls. Required.
	Tools ToolRunner
	// Workspace is the directory the hook runs in. Required.
	Workspace string
	// Committer commits the agent's work, e.g. an autocommit.Committer
	// opened on the workspace when the agent starts: it takes a snapshot
	// before each round of tools that may change files, runs as the
	// post-tools hook after it, and commits when a turn ends. nil means
	// none (nothing is committed).
	Committer Committer
	// Display shows the agent's work; nil shows nothing.
	Display Display
	// Hooks runs the user's hooks: pre_tool and post_tool around every
	// tool call and query, turn_end once a turn ended with the model's
	// reply (see hooks.go); nil runs none.
	Hooks *hooks.Runner
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Thread is the thread worked on. Its State is where the machine
	// starts: empty for a new thread (an empty conversation named by
	// Thread.ID), or a saved state to resume. A thread saved while its
	// post-tools hook ran sends, once the hook is done, the request built
	// with Behavior, not the one frozen with the settings of the session
	// that saved it. Required.
	Thread *threadwire.Thread
	// Store saves Thread after every event that changes the conversation
	// or the round of tools, at every turn end and on shutdown, appending
	// what changed to its journal; nil saves nothing.
	Store *thread.Store
	// Saved, when set, is called on the loop goroutine after every
	// successful save of Thread, with Thread as saved (redacted). It must
	// return at once and must not keep t or change it: a copy is what it
	// may keep (see agent/internal/threadsync, which pushes it to a server).
	Saved func(t *threadwire.Thread)
	// Journal is the open journal of a resumed Thread (see
	// thread.Store.Open); nil for a new thread, whose journal the agent
	// starts at its first save that holds a message. The
	// caller closes it, and the one [Agent.Journal] returns, after Run.
	Journal *thread.Journal
	// EventLog records every event handed to the machine, with the
	// actions it caused; nil records nothing. The agent writes a session
	// header to it when it starts.
	EventLog *eventlog.Writer
	// Secrets (an API key, say) are replaced by "[REDACTED]", raw or
	// encoded (see agent/internal/redact), in everything that reaches the agent
	// from outside — input lines, the LLM's replies (streamed deltas,
	// tool names and call IDs included) and errors, tool results and
	// progress — before the machine, the display, the thread, the event
	// log or the next request sees it.
	Secrets []string
	// Limits bounds the work of one reply; its zero fields take the
	// defaults of [DefaultLimits].
	Limits Limits
	// Prompt, when set, is sent as the user's message once the machine
	// waits for input (after the resumed turn, if any, has ended).
	Prompt string
	// PromptImages are the images attached to Prompt (see
	// chat.Message.Images), sent with it.
	PromptImages []chat.Image
	// ContinueTurn makes a thread resumed in the middle of a turn go on
	// with it by itself (an LLM request is sent again, a retry is
	// scheduled again) and then send the input the machine held (deferred)
	// when it stopped, as a script that resumes a thread wants. Without it
	// the agent never acts before the user does: the tool calls that may
	// have run are answered "interrupted" and a round's hook runs, as
	// always, but the turn is then stopped as an Interrupt stops it (the
	// model is told), no LLM request is sent, and the input held is shown,
	// not sent.
	ContinueTurn bool
	// Input supplies the user's messages, one per line; nil means none.
	// When it ends, the agent stops once every turn has ended. Run
	// interrupts a blocked read when it stops: through SetReadDeadline (a
	// pollable file: see [OpenStdin]; a connection) or Close (an
	// io.PipeReader). A reader that allows neither is read through a
	// goroutine of its own that may outlive Run until the read returns.
	Input io.Reader
	// Editor, when set, supplies the user's messages instead of Input: a
	// terminal's line editor, say, where a message may span lines.
	Editor MessageReader
	// Commands runs the slash commands the user types; nil sends them to
	// the model like any message.
	Commands Commands
	// Prepare, when set, makes each message the user types (or a command
	// sends, see [Agent.Send]) into the user message sent to the model,
	// e.g. with the files it mentions attached to its text and the images
	// to its Images, and returns notes to show (what it refused to attach,
	// say). It runs on the input task and may block briefly; the text and
	// notes it returns are redacted like the message.
	Prepare func(ctx context.Context, msg string) (chat.Message, []string)
	// Signals, when received, ask the agent to shut down (e.g.
	// syscall.SIGTERM); nil means none are watched.
	Signals []os.Signal
	// Interrupts, when received, stop the turn in flight (e.g. os.Interrupt:
	// Ctrl-C): the LLM call and the tools are cancelled, the model is told,
	// and the agent waits for input. One received while the agent waits for
	// input, or within InterruptWindow of the one before, asks the agent to
	// shut down instead. nil means none are watched.
	Interrupts []os.Signal
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Approval is when the user is asked before a tool call runs (see
	// agent/internal/approval); "" means approval.Never. The calls of the
	// behaviour's mutating tools are asked about; the question is shown
	// with Display.Ask and the next message read from Input or Editor is
	// the answer, so a policy that asks needs one of them. A refused call
	// is not run: its result, which the model reads, says so with the
	// user's reason, and every answer is recorded with the call's outcome
	// (chat.ToolOutcome.Approval), in the thread and the event log. A call
	// waiting for its answer has not run: stopped (an Interrupt) or cut
	// short by a crash, it never runs.
	Approval approval.Policy
	// Ask, when set, asks the user about this agent's calls through
	// another agent's gate and display (a subagent's, through its
	// parent's: see Agent.Granted and Agent.AskUser) instead of its own
	// Input or Editor, which it then need not have.
	Ask Asker
	// Queries, when set, recognises the queries a model without tool
	// calling asks in its replies (see agent/internal/query): the reply's stream
	// is cut where a query ends, the machine records the text up to there
	// and runs the query (RunQuery), and its result goes back to the
	// model with the next request. nil examines no reply.
	Queries query.Strategy
	// Facts answers the environment and project queries; its zero fields
	// take the workspace (Workspace), the tools (Tools) and the process's
	// environment.
	Facts query.Facts
}

// Limits bounds what one reply of the LLM and one line of input can make
// the agent do.
type Limits struct {
	// ToolCalls is how many tool calls of one reply are run; the calls
	// beyond it are not run and get an error result telling the model the
	// limit.
	ToolCalls int
	// ParallelTools is how many tool calls run at once; the others wait
	// for a free slot.
	ParallelTools int
	// InputLine is the longest line of input, in bytes, sent as a message;
	// a longer line is refused with a notice and the input goes on.
	InputLine int
	// RoundOutput bounds the bytes of the results of one round of tool
	// calls, which all go to the model with the next request: once the
	// round's results reach it, the results that complete after are cut
	// short, with a note telling the model so.
	RoundOutput int
}

// DefaultLimits are the limits a zero field of [Limits] takes. 512 KiB of
// tool output is about 130,000 tokens, most of a model's context window.
var DefaultLimits = Limits{ToolCalls: 64, ParallelTools: 8, InputLine: 1 << 20, RoundOutput: 512 << 10}

// withDefaults returns l with its zero fields set to the defaults.
func (l Limits) withDefaults() Limits {
	if l.ToolCalls <= 0 {
		l.ToolCalls = DefaultLimits.ToolCalls
	}
	if l.ParallelTools <= 0 {
		l.ParallelTools = DefaultLimits.ParallelTools
	}
	if l.InputLine <= 0 {
		l.InputLine = DefaultLimits.InputLine
	}
	if l.RoundOutput <= 0 {
		l.RoundOutput = DefaultLimits.RoundOutput
	}
	return l
}

// Result is how a run of the agent ended.
type Result struct {
	// Turns counts the turns that ended during the run.
	Turns int
	// LastError is the error the last turn ended with ("" when it ended
	// with the assistant's reply).
	LastError string
	// Idle is true when the agent stopped between turns, false when it
	// was stopped in the middle of one (by a signal, say); the thread then
	// resumes that turn.
	Idle bool
	// State is the kind of state the thread was saved in.
	State agent.StateKind
	// Ledger is the thread's account of tokens when the run ended.
	Ledger chat.Ledger
}

// Agent runs the coding agent machine: it is the machine's agent.Handler,
// which performs the actions, and the loop's [loop.Executor], which
// records and saves after every event. Create it with
// [New] and run it once with [Agent.Run].
type Agent struct {
	cfg     Config
	m       *agent.Machine
	log     *slog.Logger
	display Display
	commits Committer
	now     func() time.Time
	secrets *redact.Redactor
	limits  Limits
	// mutatingTools are the behaviour's mutating tools (see callOrder).
	mutatingTools []string
	// gate holds the question a tool call waits on (see approve).
	gate *approval.Gate

	// Set by Start: the loop the Handler methods start their tasks in, and
	// its context.
	loop *loop.Loop[agent.Event]
	ctx  context.Context

	// Loop goroutine only.
	ev           agent.Event                   // the event the machine is handling
	actions      []agent.Action                // the actions performed for ev, for the event log
	starts       []func()                      // the work ev's actions start, once the step is saved
	refused      map[*agent.ToolCompleted]bool // the refusals of calls not run (see startTools) that are not handled yet
	arrived      bool                          // what ev brought was shown (see arrive)
	failed       error                         // a Handler method's failure, returned by Execute
	stream       work                          // the LLM stream in flight
	reply        *replyText                    // the text of the reply in flight (see CancelTurn)
	tools        work                          // the round of tools in flight
	toolsStopped <-chan struct{}               // closed once every task of the last round of tools has ended
	interrupted  time.Time                     // when the user last stopped a turn (see interrupt)
	holding      bool                          // a resumed turn is being stopped, not continued (see Config.ContinueTurn)
	timer        work                          // the retry timer running
	calls        map[string]chat.ToolCall
	queryID      string // the call ID the query running is shown with
	// deferred are the messages the machine holds (deferred), oldest
	// first, as it was handed them: what capture saves with the state
	// (see syncDeferred).
	deferred []*agent.UserInput
	// idle is set by the machine's observer when a step of the event at
	// hand entered WaitingForUserInput, with the conversation then: the
	// turn ended there, even when a message the machine held started the
	// next one in the same step (see Execute).
	idle     bool
	idleConv chat.Conversation
	heldNow  bool // the machine deferred the event at hand
	// held is the work of a turn that waits for the turn_end hooks of the
	// one before it to end (see holdWork).
	held         []func()
	inputClosed  bool
	idleWaiters  []chan struct{} // closed once the agent is idle (see waitIdle)
	shutdownSent bool
	busy         bool
	turnErr      string
	summarizing  bool                 // the LLM request in flight is a summary request (see noteCompaction)
	compactFrom  int                  // the conversation's length when the summary request was sent
	endHooks     context.CancelFunc   // stops the turn_end hooks running; nil when none run
	hooksStopped bool                 // the user stopped the turn_end hooks
	hookNote     string               // what the last turn_end hooks gave, for the next message; saved (Thread.HookNote)
	turnTools    []chat.CompletedTool // the calls of the turn's rounds that ran the post-tools hook
	saved        []byte               // the last state saved that is not ShuttingDown, without its messages
	msgs         []json.RawMessage    // the conversation's messages, encoded, as of the last capture
	conv         chat.Conversation    // the conversation as of the last capture
	journal      *thread.Journal      // the thread's journal; nil until its first save
	savedKind    agent.StateKind
	result       Result
	ran          bool
}

var (
	_ loop.Executor[agent.Event] = (*Agent)(nil)
	_ loop.Starter[agent.Event]  = (*Agent)(nil)
)

// New returns an agent for cfg, its machine in the state cfg.Thread was
// saved in.
func New(cfg Config) (*Agent, error) {
	switch {
	case cfg.Behavior == nil:
		return nil, errors.New("agentexec: Config.Behavior is nil; build one with behavior.New")
	case cfg.Provider == nil:
		return nil, errors.New("agentexec: Config.Provider is nil; build one with llm.New")
	case cfg.Tools == nil:
		return nil, errors.New("agentexec: Config.Tools is nil; use tools.Default")
	case cfg.Thread == nil:
		return nil, errors.New("agentexec: Config.Thread is nil; give a new thread or a loaded one")
	case cfg.Approval.Asks() && cfg.Input == nil && cfg.Editor == nil && cfg.Ask == nil:
		return nil, fmt.Errorf("agentexec: Config.Approval %s asks the user, and there is no Input or Editor to read the answers from; use approval.Never", cfg.Approval)
	}
	if cfg.Approval == "" {
		cfg.Approval = approval.Never
	}
	a := &Agent{
		cfg:     cfg,
		log:     cfg.Logger,
		display: cfg.Display,
		commits: cfg.Committer,
		now:     cfg.Now,
		secrets: redact.New(cfg.Secrets...),
		limits:  cfg.Limits.withDefaults(),
		calls:   map[string]chat.ToolCall{},
		refused: map[*agent.ToolCompleted]bool{},
		gate:    approval.NewGate(),

		mutatingTools: cfg.Behavior.Config().MutatingTools,
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.display == nil {
		a.display = NopDisplay{}
	}
	if a.commits == nil {
		a.commits = noCommits{}
	}
	if a.now == nil {
		a.now = time.Now
	}
	m, held, err := restore(cfg.Behavior, a, cfg.Thread)
	if err != nil {
		return nil, err
	}
	a.setMachine(m)
	a.deferred = held
	a.busy = m.Kind() != agent.StateWaitingForUserInput
	a.saved = cfg.Thread.State
	a.msgs = cfg.Thread.Messages
	a.conv, _ = agent.ConversationOf(m.State())
	a.journal = cfg.Journal
	a.savedKind = m.Kind()
	a.hookNote = cfg.Thread.HookNote
	return a, nil
}

// Machine returns the agent's machine. Read it only when Run is not
// running, and never hand it events: its Handler is the Agent, whose
// methods work only inside Run.
func (a *Agent) Machine() *agent.Machine { return a.m }

// Run runs the agent until it shuts down: when asked to (a signal, the end
// of its input once every turn has ended), when ctx is done (without a
// final save: use a signal or ShutdownRequested for a clean stop), or on a
// failure to save the thread or write the event log.
func (a *Agent) Run(ctx context.Context) (Result, error) {
	if a.ran {
		return Result{}, errors.New("agentexec: Agent.Run called twice; create a new Agent (from the saved thread) for each run")
	}
	a.ran = true
	l := loop.New[agent.Event](stepper{a}, a, loop.Options{Logger: a.log})
	err := l.Run(ctx)
	if err == nil && a.failed != nil {
		err = a.failed // a failure to save outside a step (see takeInput)
	}
	a.result.State = a.savedKind
	a.result.Idle = a.savedKind == agent.StateWaitingForUserInput
	a.result.Ledger = a.cfg.Thread.Ledger
	return a.result, err
}

// stepper is the machine as the loop drives it: it notes the event at
// hand before the machine handles it, so that the Handler methods know
// what their actions answer.
type stepper struct{ a *Agent }

// HandleEvent implements loop.Machine.
func (s stepper) HandleEvent(ev agent.Event) error {
	a := s.a
	a.ev, a.actions, a.arrived, a.idle, a.heldNow = ev, a.actions[:0], false, false, false
	clear(a.starts)
	a.starts = a.starts[:0]
	from := a.m.Kind()
	err := a.m.HandleEvent(ev)
	if serr := a.syncDeferred(ev, from, err); serr != nil {
		return errors.Join(err, serr)
	}
	if _, ok := ev.(*agent.UserInput); ok && err == nil && a.m.Kind() != agent.StateShuttingDown {
		// A message typed is saved — in the conversation, or held by the
		// machine — before the event log records it (see Execute): a
		// kill at any moment after that leaves a thread that has it.
		if err := a.capture(); err != nil {
			a.failed = err
		} else if err := a.save(); err != nil {
			a.failed = err
		}
	}
	return err
}

// Start writes the session header, resumes what the saved state had in
// flight, and starts reading input and watching signals.
func (a *Agent) Start(ctx context.Context, l *loop.Loop[agent.Event]) error {
	a.loop, a.ctx = l, ctx
	if !a.cfg.ContinueTurn {
		a.holding = a.isBusy()
		if err := a.dropDeferred(); err != nil {
			return err
		}
	}
	if err := a.writeHeader(); err != nil {
		return err
	}
	if a.hookNote != "" {
		a.display.Notice("what the end-of-turn hooks gave after the last reply goes to the model with your next message")
	}
	if err := a.save(); err != nil {
		return err
	}
	if len(a.cfg.Signals)+len(a.cfg.Interrupts) > 0 {
		a.watchSignals()
	}
	switch st := a.m.State().(type) {
	case agent.CallingLLM:
		if a.holding {
			l.Next(&agent.Interrupt{})
			break
		}
		a.display.Notice("resuming: sending the LLM request again")
		a.startStream(a.cfg.Behavior.BuildRequest(st.Conversation))
	case agent.Compacting:
		if a.holding {
			l.Next(&agent.Interrupt{})
			break
		}
		a.display.Notice("resuming: asking the model for the summary of the conversation again")
		a.summarizing, a.compactFrom = true, st.Conversation.Len()
		a.startStream(a.cfg.Behavior.SummaryRequest(st.Conversation))
	case agent.ExecutingTools:
		for _, e := range st.Executions.Executions() {
			a.calls[e.Call.ID] = e.Call
			if e.Status != chat.ToolCompleted {
				a.display.Notice(fmt.Sprintf("resuming: tool %s (%s) was interrupted", e.Call.Name, e.Call.ID))
				l.Next(&agent.ToolCompleted{CallID: e.Call.ID, Outcome: interruptedOutcome})
			}
		}
	case agent.PostToolsHook:
		a.display.Notice("resuming: running the post-tools hook")
		a.startHook(st.CompletedTools.Completed())
	case agent.StoppingTurn:
		a.display.Notice("resuming: running the post-tools hook of the round the user stopped")
		a.startHook(st.CompletedTools.Completed())
	case agent.RunningQuery:
		if a.holding {
			l.Next(&agent.Interrupt{})
			break
		}
		// A query only reads: running it again is harmless.
		a.display.Notice("resuming: running the query " + st.Query.String() + " again")
		a.startQuery(st.Query)
	case agent.Error:
		if a.holding {
			l.Next(&agent.Interrupt{})
			break
		}
		d := a.cfg.Behavior.Backoff(st.Retries, st.Error.RetryAfter)
		a.display.Retry(st.Retries, d, st.Error)
		a.startTimer(d)
	}
	if a.cfg.Prompt != "" {
		// After what the resumed turn sends itself: the machine holds it
		// (defers it) until that turn has ended.
		msg := userMessage(a.secrets.String(a.cfg.Prompt))
		msg.Images = a.cfg.PromptImages
		l.Next(&agent.UserInput{Message: a.withHookNote(msg)})
	}
	a.launch()
	if a.cfg.Input != nil || a.cfg.Editor != nil {
		a.readInput()
	} else {
		a.inputClosed = true
	}
	if a.cfg.Prompt == "" {
		a.settle() // else once the prompt's turn has ended
	}
	return nil
}

// Execute records the step and the actions the machine performed for it,
// saves the thread when the step changed it, and ends the turn once the
// machine waits for input (it may have started the next turn in the same
// step, with a message it held).
func (a *Agent) Execute(ctx context.Context, _ *loop.Loop[agent.Event], s loop.Step[agent.Event]) error {
	rejected := errors.Is(s.Err, fsmrt.ErrRejected)
	if err := a.record(s, rejected); err != nil {
		return err
	}
	if a.failed != nil {
		return a.failed
	}
	_, input := s.Event.(*agent.UserInput)
	switch {
	case s.Err == nil:
	case input && errors.Is(s.Err, fsmrt.ErrDeferLimit):
		a.display.Notice(fmt.Sprintf("busy: %d messages already wait for this turn to end, and this one is not sent; type it again once the turn has ended", len(a.deferred)))
		return nil
	case errors.Is(s.Err, fsmrt.ErrRecalled):
		// The event given was taken; a message held was dropped (it
		// cannot be: WaitingForUserInput takes every UserInput).
		a.log.Warn("the machine dropped an event it held", "seq", s.Seq, "error", s.Err)
	default:
		a.log.Warn("the machine refused an event", "seq", s.Seq, "event", s.Event.Kind().String(), "error", s.Err)
		return nil
	}
	if !a.arrived {
		a.arrive()
	}
	busy := a.isBusy()
	turnEnded := a.busy && a.idle
	if turnEnded {
		a.cfg.Thread.Ledger.EndTurn()
	}
	if a.m.Kind() != agent.StateShuttingDown && changesThread(s.Event) && !a.moreRefusals(s.Event) {
		if err := a.capture(); err != nil {
			return err
		}
		if err := a.save(); err != nil {
			return err
		}
	}
	if a.heldNow { // saved: the machine's state holds it
		a.display.Notice("busy: your message is queued and will be sent when this turn ends")
	}
	if turnEnded {
		// Before the work of the next turn, when a message the machine
		// held started it in this step.
		a.commitTurn(ctx, a.idleConv)
		a.result.Turns++
		a.result.LastError = a.turnErr
		a.display.TurnEnd()
		if a.turnErr == "" {
			a.startTurnHooks(a.idleConv)
		}
		if busy {
			a.turnErr = ""
		}
	}
	// Only now, with the state that records it saved, does the work the
	// actions asked for start: a crash before this point leaves a thread
	// that runs it on resume, a crash after it one that knows it may have
	// run (a tool call is then "interrupted", never run twice). The work
	// of a turn that starts while the turn_end hooks of the one before
	// it run waits for them.
	if a.endHooks != nil && busy {
		a.holdWork()
	} else {
		a.launch()
	}
	a.busy = busy
	if a.idle {
		a.holding = false
	}
	a.settle()
	return nil
}
