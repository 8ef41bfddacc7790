// Package looplabagent is the agent machine on github.com/looplab/fsm,
// written as its README shows: a transition table of named events with
// source and destination states, callbacks that take a context and the
// *fsm.Event, the event's payload passed as an argument of FSM.Event.
//
// looplab/fsm has no guards and no eventless transitions, so the machine
// picks the branch of a guarded row itself and names one library event per
// branch; a transient state (ProcessingLlmResponse, PreparingRequest) is a
// state of the library that the machine leaves at once with the library
// event of the branch it picks. The library checks the source state,
// moves, and runs the callback, which calls the same guards and effects as
// the floor (package agentcore).
package looplabagent

import (
	"context"
	"errors"
	"fmt"

	"github.com/looplab/fsm"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/bench/agentcore"
)

// The library's state names are the spec's.
var (
	waiting    = agentcore.WaitingForUserInput.String()
	calling    = agentcore.CallingLLM.String()
	processing = agentcore.ProcessingLLMResponse.String()
	executing  = agentcore.ExecutingTools.String()
	hook       = agentcore.PostToolsHook.String()
	errState   = agentcore.Error.String()
	stopping   = agentcore.StoppingTurn.String()
	preparing  = agentcore.PreparingRequest.String()
	compacting = agentcore.Compacting.String()
	querying   = agentcore.RunningQuery.String()
	shutting   = agentcore.ShuttingDown.String()
)

// states maps the library's state names back.
var states = map[string]agentcore.State{}

func init() {
	for s := agentcore.WaitingForUserInput; s <= agentcore.ShuttingDown; s++ {
		states[s.String()] = s
	}
}

// Library events beyond the spec's, one per guarded branch.
const (
	evReplyCut          = "replyCut"
	evHasToolCalls      = "hasToolCalls"
	evNoToolCalls       = "noToolCalls"
	evCompact           = "needsCompaction"
	evSend              = "send"
	evGiveUp            = "giveUp"
	evLastWithHook      = "lastToolCompletedWithHook"
	evLast              = "lastToolCompleted"
	evRetryCompaction   = "retryCompaction"
	evStopCommand       = "stopCompactCommand"
	evInterruptWithHook = "interruptToolsWithHook"
	evInterruptTools    = "interruptTools"
	evRefuseSummary     = "refuseSummary"
	evCompacted         = "compact"
	evCompactAndResume  = "compactAndResume"
	evCompactionRetry   = "scheduleCompactionRetry"
	evGiveUpCompaction  = "giveUpCompaction"
	evRefuseQuery       = "refuseQuery"
	evIgnore            = "ignore"
)

// Machine is the agent on looplab/fsm.
type Machine struct {
	c   agentcore.Core
	f   *fsm.FSM
	ctx context.Context
}

// New returns a machine waiting for user input with conv, configured as b.
func New(b *behavior.Agent, conv chat.Conversation) *Machine {
	m := &Machine{ctx: context.Background()}
	m.c.Init(b, conv)
	ev := func(e *fsm.Event) *agentcore.Event { return e.Args[0].(*agentcore.Event) }
	idx := func(e *fsm.Event) int { return e.Args[1].(int) }
	c := &m.c
	name := func(k agentcore.EventKind) string { return k.String() }
	events := fsm.Events{
		{Name: name(agentcore.UserInput), Src: []string{waiting}, Dst: preparing},
		{Name: evCompact, Src: []string{preparing}, Dst: compacting},
		{Name: evSend, Src: []string{preparing}, Dst: calling},
		{Name: name(agentcore.TextDelta), Src: []string{calling}, Dst: calling},
		{Name: name(agentcore.ToolCallDelta), Src: []string{calling}, Dst: calling},
		{Name: name(agentcore.LLMCompleted), Src: []string{calling}, Dst: processing},
		{Name: evReplyCut, Src: []string{processing}, Dst: preparing},
		{Name: evHasToolCalls, Src: []string{processing}, Dst: executing},
		{Name: evNoToolCalls, Src: []string{processing}, Dst: waiting},
		{Name: name(agentcore.LLMError), Src: []string{calling}, Dst: errState},
		{Name: evGiveUp, Src: []string{calling}, Dst: waiting},
		{Name: name(agentcore.ToolProgress), Src: []string{executing}, Dst: executing},
		{Name: name(agentcore.ToolCompleted), Src: []string{executing}, Dst: executing},
		{Name: evLastWithHook, Src: []string{executing}, Dst: hook},
		{Name: evLast, Src: []string{executing}, Dst: preparing},
		{Name: name(agentcore.PostToolsHookCompleted), Src: []string{hook}, Dst: preparing},
		{Name: name(agentcore.PostToolsHookCompleted), Src: []string{stopping}, Dst: waiting},
		{Name: name(agentcore.RetryTimeoutFired), Src: []string{errState}, Dst: calling},
		{Name: evRetryCompaction, Src: []string{errState}, Dst: compacting},
		{Name: name(agentcore.Interrupt), Src: []string{calling, errState, compacting, querying}, Dst: waiting},
		{Name: name(agentcore.Interrupt), Src: []string{hook}, Dst: stopping},
		{Name: evStopCommand, Src: []string{errState, compacting}, Dst: waiting},
		{Name: evInterruptWithHook, Src: []string{executing}, Dst: stopping},
		{Name: evInterruptTools, Src: []string{executing}, Dst: waiting},
		{Name: name(agentcore.UndoTurn), Src: []string{waiting}, Dst: waiting},
		{Name: name(agentcore.CompactRequested), Src: []string{waiting}, Dst: compacting},
		{Name: evRefuseSummary, Src: []string{compacting}, Dst: waiting},
		{Name: evCompacted, Src: []string{compacting}, Dst: waiting},
		{Name: evCompactAndResume, Src: []string{compacting}, Dst: calling},
		{Name: evCompactionRetry, Src: []string{compacting}, Dst: errState},
		{Name: evGiveUpCompaction, Src: []string{compacting}, Dst: waiting},
		{Name: name(agentcore.QueryDetected), Src: []string{calling}, Dst: querying},
		{Name: evRefuseQuery, Src: []string{calling}, Dst: waiting},
		{Name: name(agentcore.QueryCompleted), Src: []string{querying}, Dst: preparing},
		{Name: name(agentcore.ShutdownRequested), Src: []string{waiting, calling, executing, hook, errState, stopping, compacting, querying, shutting}, Dst: shutting},
	}
	for _, s := range []string{waiting, executing, stopping, compacting, shutting} {
		events = append(events, fsm.EventDesc{Name: evIgnore, Src: []string{s}, Dst: s})
	}
	after := func(name string) string { return "after_" + name }
	m.f = fsm.NewFSM(waiting, events, fsm.Callbacks{
		after(name(agentcore.UserInput)):     func(_ context.Context, e *fsm.Event) { c.StartTurn(ev(e)) },
		after(evCompact):                     func(_ context.Context, e *fsm.Event) { c.StartCompaction() },
		after(evSend):                        func(_ context.Context, e *fsm.Event) { c.Send() },
		after(name(agentcore.TextDelta)):     func(_ context.Context, e *fsm.Event) { c.ShowDelta(ev(e)) },
		after(name(agentcore.ToolCallDelta)): func(_ context.Context, e *fsm.Event) { c.Wait() },
		after(name(agentcore.LLMCompleted)):  func(_ context.Context, e *fsm.Event) { c.RecordResponse(ev(e)) },
		after(evReplyCut):                    func(_ context.Context, e *fsm.Event) { c.ContinueReply() },
		after(evHasToolCalls):                func(_ context.Context, e *fsm.Event) { c.StartTools(ev(e)) },
		after(evNoToolCalls):                 func(_ context.Context, e *fsm.Event) { c.EndTurn() },
		after(name(agentcore.LLMError)):      func(_ context.Context, e *fsm.Event) { c.ScheduleRetry(ev(e)) },
		after(evGiveUp):                      func(_ context.Context, e *fsm.Event) { c.GiveUp(ev(e)) },
		after(name(agentcore.ToolProgress)):  func(_ context.Context, e *fsm.Event) { c.RecordProgress(ev(e)) },
		after(name(agentcore.ToolCompleted)): func(_ context.Context, e *fsm.Event) { c.RecordOutcome(ev(e), idx(e)) },
		after(evLastWithHook):                func(_ context.Context, e *fsm.Event) { c.FinishToolsWithHook(ev(e), idx(e)) },
		after(evLast):                        func(_ context.Context, e *fsm.Event) { c.FinishTools(ev(e), idx(e)) },
		after(name(agentcore.PostToolsHookCompleted)): func(_ context.Context, e *fsm.Event) {
			if e.Src == stopping {
				c.EndStop()
				return
			}
			c.ResumeAfterHook()
		},
		after(name(agentcore.RetryTimeoutFired)): func(_ context.Context, e *fsm.Event) { c.RetryRequest() },
		after(evRetryCompaction):                 func(_ context.Context, e *fsm.Event) { c.RetryCompaction() },
		after(name(agentcore.Interrupt)): func(_ context.Context, e *fsm.Event) {
			if e.Src == hook {
				c.StopHook()
				return
			}
			c.InterruptTurn()
		},
		after(evStopCommand):                    func(_ context.Context, e *fsm.Event) { c.StopCompactCommand() },
		after(evInterruptWithHook):              func(_ context.Context, e *fsm.Event) { c.InterruptTools(true) },
		after(evInterruptTools):                 func(_ context.Context, e *fsm.Event) { c.InterruptTools(false) },
		after(name(agentcore.UndoTurn)):         func(_ context.Context, e *fsm.Event) { c.UndoTurn() },
		after(name(agentcore.CompactRequested)): func(_ context.Context, e *fsm.Event) { c.StartCompactCommand() },
		after(evRefuseSummary):                  func(_ context.Context, e *fsm.Event) { c.RefuseSummary(ev(e)) },
		after(evCompacted):                      func(_ context.Context, e *fsm.Event) { c.Compact(ev(e)) },
		after(evCompactAndResume):               func(_ context.Context, e *fsm.Event) { c.CompactAndResume(ev(e)) },
		after(evCompactionRetry):                func(_ context.Context, e *fsm.Event) { c.ScheduleCompactionRetry(ev(e)) },
		after(evGiveUpCompaction):               func(_ context.Context, e *fsm.Event) { c.GiveUpCompaction(ev(e)) },
		after(name(agentcore.QueryDetected)):    func(_ context.Context, e *fsm.Event) { c.StartQuery(ev(e)) },
		after(evRefuseQuery):                    func(_ context.Context, e *fsm.Event) { c.RefuseQuery(ev(e)) },
		after(name(agentcore.QueryCompleted)):   func(_ context.Context, e *fsm.Event) { c.InjectQueryResult(ev(e)) },
		after(name(agentcore.ShutdownRequested)): func(_ context.Context, e *fsm.Event) {
			c.Shut()
		},
	})
	return m
}

// State returns the current state.
func (m *Machine) State() agentcore.State { return states[m.f.Current()] }

// Core returns the machine's data, for tests.
func (m *Machine) Core() *agentcore.Core { return &m.c }

// HandleEvent feeds ev to the machine and returns the action to perform,
// or nil. The action points into the machine and is valid until the next
// call. A refused event returns an error wrapping agentcore.ErrRejected.
func (m *Machine) HandleEvent(ev *agentcore.Event) (*agentcore.Action, error) {
	c := &m.c
	from := m.State()
	if agentcore.Defers(from, ev.Kind) {
		c.Defer(ev)
		return nil, nil
	}
	act, err := m.handle(ev)
	if err != nil || m.State() == from || c.Deferred() == 0 {
		return act, err
	}
	return c.Recall(m.State, act, m.handle)
}

// handle is HandleEvent but for the events held (deferred).
func (m *Machine) handle(ev *agentcore.Event) (*agentcore.Action, error) {
	c := &m.c
	c.Act.Kind = 0
	name, args, err := m.pick(ev)
	if err != nil {
		return nil, err
	}
	if err := m.fire(name, args...); err != nil {
		return nil, err
	}
	// Leave the transient states with the branch their guards pick.
	for {
		var next string
		switch m.f.Current() {
		case processing:
			switch {
			case c.ReplyCut(ev):
				next = evReplyCut
			case c.HasToolCalls(ev):
				next = evHasToolCalls
			default:
				next = evNoToolCalls
			}
		case preparing:
			next = evSend
			if c.NeedsCompaction() {
				next = evCompact
			}
		}
		if next == "" {
			break
		}
		if err := m.fire(next, ev); err != nil {
			return nil, err
		}
	}
	if c.Act.Kind == 0 {
		return nil, nil
	}
	return &c.Act, nil
}

// pick returns the library event for ev in the current state: the
// spec's, or the branch of a guarded row, or evIgnore.
func (m *Machine) pick(ev *agentcore.Event) (string, []any, error) {
	c := &m.c
	cur := m.f.Current()
	args := []any{ev}
	switch k := ev.Kind; {
	case k == agentcore.ShutdownRequested:
	case cur == shutting,
		k == agentcore.Interrupt && (cur == waiting || cur == stopping),
		cur == compacting && (k == agentcore.TextDelta || k == agentcore.ToolCallDelta),
		k == agentcore.ToolProgress && cur == executing && !c.IsKnownCall(ev):
		return evIgnore, args, nil
	case k == agentcore.LLMError && cur == calling && !c.CanRetry(ev):
		return evGiveUp, args, nil
	case k == agentcore.ToolCompleted && cur == executing:
		done, i := c.Classify(ev)
		switch done {
		case agentcore.UnknownCall:
			return "", nil, fmt.Errorf("%w: the call is not pending in this round", agentcore.ErrRejected)
		case agentcore.LastMutating:
			return evLastWithHook, append(args, i), nil
		case agentcore.Last:
			return evLast, append(args, i), nil
		}
		return ev.Kind.String(), append(args, i), nil
	case k == agentcore.RetryTimeoutFired && cur == errState && c.IsCompaction():
		return evRetryCompaction, args, nil
	case k == agentcore.Interrupt && (cur == errState || cur == compacting) && c.IsCompactCommand():
		return evStopCommand, args, nil
	case k == agentcore.Interrupt && cur == executing:
		if c.AnyMutating() {
			return evInterruptWithHook, args, nil
		}
		return evInterruptTools, args, nil
	case k == agentcore.CompactRequested && cur == waiting && !c.CanCompact():
		return "", nil, fmt.Errorf("%w: there is nothing to compact yet", agentcore.ErrRejected)
	case k == agentcore.LLMCompleted && cur == compacting:
		switch {
		case c.EmptySummary(ev):
			return evRefuseSummary, args, nil
		case c.IsCompactCommand():
			return evCompacted, args, nil
		}
		return evCompactAndResume, args, nil
	case k == agentcore.LLMError && cur == compacting:
		if c.CanRetry(ev) {
			return evCompactionRetry, args, nil
		}
		return evGiveUpCompaction, args, nil
	case k == agentcore.QueryDetected && cur == calling && c.QueryLimitReached():
		return evRefuseQuery, args, nil
	}
	return ev.Kind.String(), args, nil
}

// fire sends one library event; a transition that stays in its state is
// not an error.
func (m *Machine) fire(name string, args ...any) error {
	err := m.f.Event(m.ctx, name, args...)
	var invalid fsm.InvalidEventError
	var unknown fsm.UnknownEventError
	var same fsm.NoTransitionError
	switch {
	case err == nil, errors.As(err, &same):
		return nil
	case errors.As(err, &invalid), errors.As(err, &unknown):
		return fmt.Errorf("%w: %s", agentcore.ErrRejected, err)
	}
	return err
}
