package runtime

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/chat"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/runtime/autocommit"
	"github.com/fsmgen/fsmgen/runtime/eventlog"
	"github.com/fsmgen/fsmgen/runtime/llm"
	"github.com/fsmgen/fsmgen/runtime/thread"
)

// MachineName is the machine name the agent writes in event log headers.
const MachineName = "agent"

// InterruptedPrefix starts the outcome given on resume to a tool call that
// was still running when the agent stopped.
const InterruptedPrefix = "interrupted: the agent stopped before this tool finished"

// interruptedOutcome is the outcome of a call the agent stopped before it
// finished.
var interruptedOutcome = chat.ToolOutcome{
	Content: InterruptedPrefix + "; it may or may not have taken effect, so check before running it again",
	IsError: true,
}

// ToolRunner runs one tool call to completion; *tools.Set is one. Run must
// never panic, must return promptly once ctx is done, and may call
// progress from any goroutine until it returns.
type ToolRunner interface {
	Run(ctx context.Context, call chat.ToolCall, progress func(chat.ToolProgress)) chat.ToolOutcome
}

// Hook is the post-tools hook: it runs after a round of tools that may have
// changed files, in the workspace dir. autocommit.Commit is one.
type Hook func(ctx context.Context, dir string, tools []chat.CompletedTool) (autocommit.Result, error)

// AgentConfig is what an [Agent] works with.
type AgentConfig struct {
	// Behavior is the machine's guards and effects. Required.
	Behavior *agent.Agent
	// Provider streams the LLM's replies. Required.
	Provider llm.Provider
	// Tools runs the tool calls. Required.
	Tools ToolRunner
	// Workspace is the directory the hook runs in. Required.
	Workspace string
	// Hook is the post-tools hook; nil means autocommit.Commit.
	Hook Hook
	// Display shows the agent's work; nil shows nothing.
	Display Display
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Thread is the thread worked on. Its State is where the machine
	// starts: empty for a new thread (an empty conversation named by
	// Thread.ID), or a saved state to resume. Required.
	Thread *thread.Thread
	// Store saves Thread after every event that changes the conversation
	// or the round of tools, at every turn end and on shutdown; nil saves
	// nothing.
	Store *thread.Store
	// EventLog records every event handed to the machine; nil records
	// nothing. The agent writes a session header to it when it starts.
	EventLog *eventlog.Writer
	// Secrets are replaced by "[REDACTED]" in everything the agent writes
	// to the thread and the event log (an API key, say, that a tool
	// printed).
	Secrets []string
	// Prompt, when set, is sent as the user's message once the machine
	// waits for input (after finishing a resumed turn, if any).
	Prompt string
	// Input supplies the user's messages, one per line; nil means none.
	// When it ends, the agent stops once every turn has ended. Run
	// interrupts a blocked read when it stops: through SetReadDeadline (a
	// pollable file: see [OpenStdin]; a connection) or Close (an
	// io.PipeReader). A reader that allows neither is read through a
	// goroutine of its own that may outlive Run until the read returns.
	Input io.Reader
	// Signals, when received, ask the agent to shut down (e.g. os.Interrupt
	// and syscall.SIGTERM); nil means none are watched.
	Signals []os.Signal
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
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
}

// Agent runs the coding agent machine: it is the [Executor] that performs
// the machine's actions. Create it with [NewAgent] and run it once with
// [Agent.Run].
type Agent struct {
	cfg     AgentConfig
	m       *agent.Machine
	log     *slog.Logger
	display Display
	hook    Hook
	now     func() time.Time
	start   agent.StateKind

	// Loop goroutine only.
	streamGen    uint64
	streamCancel context.CancelFunc
	toolsGen     uint64
	toolsCancel  context.CancelFunc
	timerGen     uint64
	timerCancel  context.CancelFunc
	calls        map[string]chat.ToolCall
	queue        []string
	inputClosed  bool
	shutdownSent bool
	busy         bool
	turnErr      string
	saved        json.RawMessage // the last state saved that is not ShuttingDown
	savedKind    agent.StateKind
	result       Result
	ran          bool
}

var (
	_ Executor[agent.Event, agent.Action] = (*Agent)(nil)
	_ Starter[agent.Event, agent.Action]  = (*Agent)(nil)
)

// NewAgent returns an agent for cfg, its machine in the state cfg.Thread
// was saved in.
func NewAgent(cfg AgentConfig) (*Agent, error) {
	switch {
	case cfg.Behavior == nil:
		return nil, errors.New("runtime: AgentConfig.Behavior is nil; build one with agent.New")
	case cfg.Provider == nil:
		return nil, errors.New("runtime: AgentConfig.Provider is nil; build one with llm.New")
	case cfg.Tools == nil:
		return nil, errors.New("runtime: AgentConfig.Tools is nil; use tools.Default")
	case cfg.Thread == nil:
		return nil, errors.New("runtime: AgentConfig.Thread is nil; give a new thread or a loaded one")
	}
	a := &Agent{
		cfg:     cfg,
		log:     cfg.Logger,
		display: cfg.Display,
		hook:    cfg.Hook,
		now:     cfg.Now,
		calls:   map[string]chat.ToolCall{},
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.display == nil {
		a.display = NopDisplay{}
	}
	if a.hook == nil {
		a.hook = autocommit.Commit
	}
	if a.now == nil {
		a.now = time.Now
	}
	m, err := restore(cfg.Behavior, cfg.Thread)
	if err != nil {
		return nil, err
	}
	a.m = m
	a.start = m.Kind()
	a.busy = m.Kind() != agent.StateWaitingForUserInput
	a.saved = cfg.Thread.State
	a.savedKind = m.Kind()
	a.queue = slices.Clone(cfg.Thread.QueuedInput)
	return a, nil
}

// restore builds the machine for a thread: new, or in its saved state.
func restore(b *agent.Agent, t *thread.Thread) (*agent.Machine, error) {
	if len(t.State) == 0 {
		return agent.New(b, agent.WaitingForUserInput{Conversation: chat.NewConversation(t.ID)}), nil
	}
	st, err := agent.UnmarshalState(t.State)
	if err != nil {
		return nil, fmt.Errorf("resume thread %s: %w; the thread file is damaged", t.ID, err)
	}
	if st.Kind() == agent.StateShuttingDown {
		return nil, fmt.Errorf("resume thread %s: it was saved shutting down, without its conversation; it cannot be resumed", t.ID)
	}
	m, err := agent.Restore(b, st)
	if err != nil {
		return nil, fmt.Errorf("resume thread %s: %w", t.ID, err)
	}
	return m, nil
}

// Machine returns the agent's machine. Read it only when Run is not
// running.
func (a *Agent) Machine() *agent.Machine { return a.m }

// Run runs the agent until it shuts down: when asked to (a signal, the end
// of its input once every turn has ended), when ctx is done (without a
// final save: use a signal or ShutdownRequested for a clean stop), or on a
// failure to save the thread or write the event log.
func (a *Agent) Run(ctx context.Context) (Result, error) {
	if a.ran {
		return Result{}, errors.New("runtime: Agent.Run called twice; create a new Agent (from the saved thread) for each run")
	}
	a.ran = true
	l := NewLoop[agent.Event, agent.Action](a.m, a, Options{Logger: a.log})
	err := l.Run(ctx)
	a.result.State = a.savedKind
	a.result.Idle = a.savedKind == agent.StateWaitingForUserInput && len(a.queue) == 0
	return a.result, err
}

// Start writes the session header, resumes what the saved state had in
// flight, and starts reading input and watching signals.
func (a *Agent) Start(ctx context.Context, l *Loop[agent.Event, agent.Action]) error {
	if err := a.writeHeader(); err != nil {
		return err
	}
	if err := a.save(); err != nil {
		return err
	}
	if len(a.cfg.Signals) > 0 {
		a.watchSignals(ctx, l)
	}
	switch st := a.m.State().(type) {
	case agent.CallingLLM:
		a.display.Notice("resuming: sending the LLM request again")
		a.startStream(ctx, l, a.cfg.Behavior.Request(st.Conversation))
	case agent.ExecutingTools:
		for _, e := range st.Executions {
			a.calls[e.Call.ID] = e.Call
			if e.Status != chat.ToolCompleted {
				a.display.Notice(fmt.Sprintf("resuming: tool %s (%s) was interrupted", e.Call.Name, e.Call.ID))
				l.Next(&agent.ToolCompleted{CallID: e.Call.ID, Outcome: interruptedOutcome})
			}
		}
	case agent.PostToolsHook:
		a.display.Notice("resuming: running the post-tools hook")
		a.startHook(ctx, l, slices.Clone(st.CompletedTools))
	case agent.Error:
		d := a.cfg.Behavior.Backoff(st.Retries, st.Error.RetryAfter)
		a.display.Retry(st.Retries, d, st.Error)
		a.startTimer(ctx, l, d)
	}
	if a.cfg.Prompt != "" {
		a.queue = append(a.queue, a.cfg.Prompt)
	}
	if a.cfg.Input != nil {
		a.readInput(ctx, l)
	} else {
		a.inputClosed = true
	}
	a.settle(l)
	return nil
}

// writeHeader starts the session in the event log.
func (a *Agent) writeHeader() error {
	if a.cfg.EventLog == nil {
		return nil
	}
	cfg := a.cfg.Behavior.Config()
	if cfg.MaxRetries == 0 {
		cfg.NoRetries = true // agent.New reads MaxRetries 0 as "the default"
	}
	conf, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("event log header: encode the behaviour config: %w", err)
	}
	state, err := json.Marshal(a.m.State())
	if err != nil {
		return fmt.Errorf("event log header: encode the state: %w", err)
	}
	t := a.cfg.Thread
	err = a.cfg.EventLog.WriteHeader(eventlog.Header{
		Machine: MachineName,
		Thread:  t.ID,
		Started: a.now().UTC(),
		Config:  a.redact(conf),
		State:   a.redact(state),
		Meta:    map[string]string{"provider": t.Provider, "model": t.Model, "workspace": t.Workspace},
	})
	if err != nil {
		return fmt.Errorf("start the event log: %w", err)
	}
	return nil
}

// Execute records the step, performs its action, saves the thread when
// the step changed it, and sends queued input once the machine waits.
func (a *Agent) Execute(ctx context.Context, l *Loop[agent.Event, agent.Action], s Step[agent.Event, agent.Action]) error {
	rejected := errors.Is(s.Err, agent.ErrRejected)
	if err := a.record(s, rejected); err != nil {
		return err
	}
	if s.Err != nil {
		if ui, ok := s.Event.(*agent.UserInput); ok && rejected {
			a.queue = append(a.queue, ui.Message.Content)
			a.display.Notice("busy: your message is queued and will be sent when this turn ends")
			return a.save()
		}
		a.log.Warn("the machine refused an event", "seq", s.Seq, "event", s.Event.Kind().String(), "error", s.Err)
		return nil
	}

	switch ev := s.Event.(type) {
	case *agent.LLMCompleted:
		a.display.Reply(ev.Response.Message)
	case *agent.ToolProgress:
		if s.Action != nil {
			a.display.ToolProgress(a.call(ev.CallID), ev.Progress)
		}
	case *agent.ToolCompleted:
		a.display.ToolResult(a.call(ev.CallID), ev.Outcome)
	}

	busy := a.m.Kind() != agent.StateWaitingForUserInput && a.m.Kind() != agent.StateShuttingDown
	if busy && !a.busy {
		a.turnErr = ""
	}
	if err := a.perform(ctx, l, s.Action); err != nil {
		return err
	}
	if a.m.Kind() != agent.StateShuttingDown && changesThread(s.Event) {
		if err := a.capture(); err != nil {
			return err
		}
		if err := a.save(); err != nil {
			return err
		}
	}
	if a.busy && !busy && a.m.Kind() == agent.StateWaitingForUserInput {
		a.result.Turns++
		a.result.LastError = a.turnErr
		a.display.TurnEnd()
	}
	a.busy = busy
	a.settle(l)
	return nil
}

// changesThread reports whether an accepted event changes what the thread
// saves: the conversation, the round of tools, the retry count. Deltas and
// progress reports do not.
func changesThread(ev agent.Event) bool {
	switch ev.(type) {
	case *agent.TextDelta, *agent.ToolCallDelta, *agent.ToolProgress:
		return false
	}
	return true
}

// perform carries out one action.
func (a *Agent) perform(ctx context.Context, l *Loop[agent.Event, agent.Action], act agent.Action) error {
	switch act := act.(type) {
	case nil, *agent.WaitForInput:
	case *agent.SendLLMRequest:
		a.startStream(ctx, l, act.Request)
	case *agent.ExecuteTools:
		a.startTools(ctx, l, slices.Clone(act.Calls))
	case *agent.RunPostToolsHook:
		a.startHook(ctx, l, slices.Clone(act.CompletedTools))
	case *agent.ScheduleRetry:
		a.display.Retry(act.Attempt, act.Delay, act.Error)
		a.startTimer(ctx, l, act.Delay)
	case *agent.DisplayMessage:
		a.display.Text(act.Content)
	case *agent.DisplayError:
		a.turnErr = act.Message
		a.display.Error(act.Message)
	case *agent.Shutdown:
		a.cancelAll()
		if err := a.save(); err != nil {
			return err
		}
		l.Stop()
	default:
		a.log.Warn("unknown action; ignored", "action", fmt.Sprintf("%T", act))
	}
	return nil
}

// settle sends the next queued message, or asks to shut down once the
// input has ended, when the machine waits for input.
func (a *Agent) settle(l *Loop[agent.Event, agent.Action]) {
	if a.m.Kind() != agent.StateWaitingForUserInput || a.shutdownSent {
		return
	}
	if len(a.queue) > 0 {
		msg := a.queue[0]
		a.queue = a.queue[1:]
		l.Next(&agent.UserInput{Message: chat.UserMessage(msg)})
		return
	}
	if a.inputClosed {
		a.shutdownSent = true
		l.Next(&agent.ShutdownRequested{})
	}
}

// call returns the tool call with the given ID, as far as it is known.
func (a *Agent) call(id string) chat.ToolCall {
	if c, ok := a.calls[id]; ok {
		return c
	}
	return chat.ToolCall{ID: id, Name: "?"}
}

// record appends the step to the event log.
func (a *Agent) record(s Step[agent.Event, agent.Action], rejected bool) error {
	if a.cfg.EventLog == nil {
		return nil
	}
	ev, err := json.Marshal(s.Event)
	if err != nil {
		return fmt.Errorf("event log: encode event %d: %w", s.Seq, err)
	}
	var act json.RawMessage
	if s.Action != nil {
		if act, err = json.Marshal(s.Action); err != nil {
			return fmt.Errorf("event log: encode the action of event %d: %w", s.Seq, err)
		}
	}
	rec := eventlog.Record{Event: a.redact(ev), Action: a.redact(act), Rejected: rejected}
	if s.Err != nil {
		rec.Error = string(a.redact([]byte(s.Err.Error())))
	}
	if _, err := a.cfg.EventLog.Append(rec); err != nil {
		return fmt.Errorf("record event %d: %w", s.Seq, err)
	}
	return nil
}

// capture keeps the machine's current state for the next save.
func (a *Agent) capture() error {
	st, err := json.Marshal(a.m.State())
	if err != nil {
		return fmt.Errorf("save thread %s: encode the state: %w", a.cfg.Thread.ID, err)
	}
	a.saved = st
	a.savedKind = a.m.Kind()
	return nil
}

// save writes the thread with the last captured state and the queued input.
func (a *Agent) save() error {
	t := a.cfg.Thread
	t.State = a.redact(a.saved)
	t.QueuedInput = slices.Clone(a.queue)
	t.Updated = a.now().UTC()
	if a.cfg.Store == nil {
		return nil
	}
	if err := a.cfg.Store.Save(t); err != nil {
		return err
	}
	return nil
}

// redact replaces every secret in data.
func (a *Agent) redact(data []byte) []byte {
	if data == nil {
		return nil
	}
	out := string(data)
	for _, s := range a.cfg.Secrets {
		if len(s) >= 8 {
			out = strings.ReplaceAll(out, s, "[REDACTED]")
		}
	}
	return []byte(out)
}

// startStream sends req to the LLM in a task and feeds its stream back as
// events, cancelling any stream still running.
func (a *Agent) startStream(ctx context.Context, l *Loop[agent.Event, agent.Action], req chat.Request) {
	if a.streamCancel != nil {
		a.streamCancel()
	}
	a.streamGen++
	gen := a.streamGen
	valid := func() bool { return a.streamGen == gen }
	sctx, cancel := context.WithCancel(ctx)
	a.streamCancel = cancel
	l.Go(sctx, "llm stream", func(ctx context.Context) {
		ended := false
		send := func(ev agent.Event) { _ = l.SendIf(ctx, ev, valid) }
		err := a.cfg.Provider.Stream(ctx, req, func(e llm.Event) {
			switch e := e.(type) {
			case llm.TextDelta:
				send(&agent.TextDelta{Content: e.Text})
			case llm.ToolCallDelta:
				send(&agent.ToolCallDelta{CallID: e.CallID, ToolName: e.ToolName, ArgumentsFragment: e.Fragment})
			case llm.Completed:
				ended = true
				send(&agent.LLMCompleted{Response: e.Response})
			case llm.Failed:
				ended = true
				send(&agent.LLMError{Error: e.Err})
			}
		})
		if ctx.Err() != nil || ended {
			return
		}
		// The provider broke its contract; fail the call so the turn goes on.
		msg := "the LLM stream ended without a reply or an error"
		if err != nil {
			msg = err.Error()
		}
		a.log.Error("llm provider ended a stream without Completed or Failed", "provider", a.cfg.Provider.Name(), "error", err)
		send(&agent.LLMError{Error: chat.LLMError{Kind: chat.ErrNetwork, Message: msg}})
	})
}

// startTools runs the calls in parallel, one task each, and sends one
// ToolCompleted for each, with ToolProgress reports while they run.
func (a *Agent) startTools(ctx context.Context, l *Loop[agent.Event, agent.Action], calls []chat.ToolCall) {
	if a.toolsCancel != nil {
		a.toolsCancel()
	}
	a.toolsGen++
	gen := a.toolsGen
	valid := func() bool { return a.toolsGen == gen }
	tctx, cancel := context.WithCancel(ctx)
	a.toolsCancel = cancel
	clear(a.calls)
	for _, c := range calls {
		a.calls[c.ID] = c
		a.display.ToolCall(c)
	}
	for _, c := range calls {
		l.Go(tctx, "tool "+c.Name, func(ctx context.Context) {
			progress := func(p chat.ToolProgress) {
				_ = l.SendIf(ctx, &agent.ToolProgress{CallID: c.ID, Progress: p}, valid)
			}
			out := a.cfg.Tools.Run(ctx, c, progress)
			_ = l.SendIf(ctx, &agent.ToolCompleted{CallID: c.ID, Outcome: out}, valid)
		})
	}
}

// startHook runs the post-tools hook in a task, then sends
// PostToolsHookCompleted.
func (a *Agent) startHook(ctx context.Context, l *Loop[agent.Event, agent.Action], completed []chat.CompletedTool) {
	l.Go(ctx, "post-tools hook", func(ctx context.Context) {
		res, err := a.hook(ctx, a.cfg.Workspace, completed)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			a.log.Warn("post-tools hook failed", "error", err)
		}
		_ = l.Call(ctx, func() { a.display.Hook(res, err) })
		_ = l.Send(ctx, &agent.PostToolsHookCompleted{ActionTaken: err == nil && res.Committed})
	})
}

// startTimer sends RetryTimeoutFired after d, unless the loop stops first.
func (a *Agent) startTimer(ctx context.Context, l *Loop[agent.Event, agent.Action], d time.Duration) {
	if a.timerCancel != nil {
		a.timerCancel()
	}
	a.timerGen++
	gen := a.timerGen
	valid := func() bool { return a.timerGen == gen }
	tctx, cancel := context.WithCancel(ctx)
	a.timerCancel = cancel
	l.Go(tctx, "retry timer", func(ctx context.Context) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			_ = l.SendIf(ctx, &agent.RetryTimeoutFired{}, valid)
		case <-ctx.Done():
		}
	})
}

// cancelAll cancels the stream, the tools and the timer in flight.
func (a *Agent) cancelAll() {
	for _, c := range []context.CancelFunc{a.streamCancel, a.toolsCancel, a.timerCancel} {
		if c != nil {
			c()
		}
	}
}

// maxInputLine caps one line of input.
const maxInputLine = 4 << 20

// readInput reads the user's messages, one per line, in a task; blank
// lines are skipped. When the input ends the agent stops once every turn
// has ended.
func (a *Agent) readInput(ctx context.Context, l *Loop[agent.Event, agent.Action]) {
	r := a.cfg.Input
	if !interruptible(r) {
		r = detach(r)
	}
	l.Go(ctx, "input", func(ctx context.Context) {
		stop := context.AfterFunc(ctx, func() { interrupt(r) })
		defer stop()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), maxInputLine)
		for sc.Scan() {
			line := strings.TrimRight(sc.Text(), "\r")
			if strings.TrimSpace(line) == "" {
				continue
			}
			if l.Send(ctx, &agent.UserInput{Message: chat.UserMessage(line)}) != nil {
				return
			}
		}
		if err := sc.Err(); err != nil && ctx.Err() == nil {
			a.log.Warn("reading input failed; no more input is read", "error", err)
		}
		if ctx.Err() != nil {
			return
		}
		_ = l.Call(ctx, func() {
			a.inputClosed = true
			a.settle(l)
		})
	})
}

// deadliner is a reader whose blocked reads a deadline can end.
type deadliner interface {
	SetReadDeadline(t time.Time) error
}

// interruptible reports whether a blocked Read on r can be ended: a
// regular file never blocks, a pollable file or connection takes a
// deadline, another io.Closer (an io.PipeReader) ends reads when closed.
func interruptible(r io.Reader) bool {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return true
		}
		return f.SetReadDeadline(time.Time{}) == nil
	}
	if d, ok := r.(deadliner); ok && d.SetReadDeadline(time.Time{}) == nil {
		return true
	}
	_, ok := r.(io.Closer)
	return ok
}

// interrupt makes a blocked Read on r return.
func interrupt(r io.Reader) {
	if d, ok := r.(deadliner); ok && d.SetReadDeadline(time.Now()) == nil {
		return
	}
	if _, isFile := r.(*os.File); isFile {
		return // a regular file: its reads do not block
	}
	if c, ok := r.(io.Closer); ok {
		_ = c.Close()
	}
}

// detach returns a reader of r that can be closed while a read of r
// blocks. It copies r in a goroutine that no one can stop: a read that
// the operating system cannot interrupt ends only with input, the end of
// the input, or the process. It is the fallback for such readers (a
// terminal OpenStdin could not open again); the input task itself stays
// owned by the loop and stops when told to.
func detach(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, r)
		_ = pw.CloseWithError(err)
	}()
	return pr
}

// watchSignals sends ShutdownRequested when one of the configured signals
// arrives.
func (a *Agent) watchSignals(ctx context.Context, l *Loop[agent.Event, agent.Action]) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, a.cfg.Signals...)
	started := l.Go(ctx, "signals", func(ctx context.Context) {
		defer signal.Stop(ch)
		for {
			select {
			case <-ctx.Done():
				return
			case sig := <-ch:
				a.log.Info("signal received; shutting down", "signal", sig.String())
				_ = l.Call(ctx, func() { a.display.Notice(fmt.Sprintf("%s: stopping; the thread is saved", sig)) })
				_ = l.Send(ctx, &agent.ShutdownRequested{})
			}
		}
	})
	if !started {
		signal.Stop(ch)
	}
}
