// Package looplabagent is the agent machine on github.com/looplab/fsm,
// written as its README shows: a transition table of named events with
// source and destination states, callbacks that take a context and the
// *fsm.Event, the event's payload passed as an argument of FSM.Event.
//
// looplab/fsm has no guards and no eventless transitions, so the machine
// picks the branch of a guarded row itself and names one library event per
// branch; the library checks the source state, moves, and runs the
// callback, which calls the same guards and effects as the floor
// (package agentcore).
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
	shutting   = agentcore.ShuttingDown.String()
)

// Library events beyond the spec's, one per guarded branch.
const (
	evHasToolCalls = "hasToolCalls"
	evNoToolCalls  = "noToolCalls"
	evGiveUp       = "giveUp"
	evLastWithHook = "lastToolCompletedWithHook"
	evLast         = "lastToolCompleted"
	evIgnore       = "ignore"
)

// Machine is the agent on looplab/fsm.
type Machine struct {
	c   agentcore.Core
	f   *fsm.FSM
	ctx context.Context
}

// New returns a machine waiting for user input with conv, configured as
// behavior.New(cfg).
func New(cfg behavior.Config, conv chat.Conversation) *Machine {
	m := &Machine{ctx: context.Background()}
	m.c.Init(cfg, conv)
	ev := func(e *fsm.Event) *agentcore.Event { return e.Args[0].(*agentcore.Event) }
	idx := func(e *fsm.Event) int { return e.Args[1].(int) }
	c := &m.c
	m.f = fsm.NewFSM(waiting,
		fsm.Events{
			{Name: agentcore.UserInput.String(), Src: []string{waiting}, Dst: calling},
			{Name: agentcore.TextDelta.String(), Src: []string{calling}, Dst: calling},
			{Name: agentcore.ToolCallDelta.String(), Src: []string{calling}, Dst: calling},
			{Name: agentcore.LLMCompleted.String(), Src: []string{calling}, Dst: processing},
			{Name: evHasToolCalls, Src: []string{processing}, Dst: executing},
			{Name: evNoToolCalls, Src: []string{processing}, Dst: waiting},
			{Name: agentcore.LLMError.String(), Src: []string{calling}, Dst: errState},
			{Name: evGiveUp, Src: []string{calling}, Dst: waiting},
			{Name: agentcore.ToolProgress.String(), Src: []string{executing}, Dst: executing},
			{Name: agentcore.ToolCompleted.String(), Src: []string{executing}, Dst: executing},
			{Name: evLastWithHook, Src: []string{executing}, Dst: hook},
			{Name: evLast, Src: []string{executing}, Dst: calling},
			{Name: agentcore.PostToolsHookCompleted.String(), Src: []string{hook}, Dst: calling},
			{Name: agentcore.RetryTimeoutFired.String(), Src: []string{errState}, Dst: calling},
			{Name: agentcore.ShutdownRequested.String(), Src: []string{waiting, calling, executing, hook, errState, shutting}, Dst: shutting},
			{Name: evIgnore, Src: []string{executing}, Dst: executing},
			{Name: evIgnore, Src: []string{shutting}, Dst: shutting},
		},
		fsm.Callbacks{
			"after_" + agentcore.UserInput.String():     func(_ context.Context, e *fsm.Event) { c.StartTurn(ev(e)) },
			"after_" + agentcore.TextDelta.String():     func(_ context.Context, e *fsm.Event) { c.ShowDelta(ev(e)) },
			"after_" + agentcore.ToolCallDelta.String(): func(_ context.Context, e *fsm.Event) { c.Wait() },
			"after_" + agentcore.LLMCompleted.String():  func(_ context.Context, e *fsm.Event) { c.RecordResponse(ev(e)) },
			"after_" + evHasToolCalls:                   func(_ context.Context, e *fsm.Event) { c.StartTools(ev(e)) },
			"after_" + evNoToolCalls:                    func(_ context.Context, e *fsm.Event) { c.EndTurn() },
			"after_" + agentcore.LLMError.String():      func(_ context.Context, e *fsm.Event) { c.ScheduleRetry(ev(e)) },
			"after_" + evGiveUp:                         func(_ context.Context, e *fsm.Event) { c.GiveUp(ev(e)) },
			"after_" + agentcore.ToolProgress.String():  func(_ context.Context, e *fsm.Event) { c.RecordProgress(ev(e)) },
			"after_" + agentcore.ToolCompleted.String(): func(_ context.Context, e *fsm.Event) { c.RecordOutcome(ev(e), idx(e)) },
			"after_" + evLastWithHook:                   func(_ context.Context, e *fsm.Event) { c.FinishToolsWithHook(ev(e), idx(e)) },
			"after_" + evLast:                           func(_ context.Context, e *fsm.Event) { c.FinishTools(ev(e), idx(e)) },
			"after_" + agentcore.PostToolsHookCompleted.String(): func(_ context.Context, e *fsm.Event) {
				c.ResumeAfterHook()
			},
			"after_" + agentcore.RetryTimeoutFired.String(): func(_ context.Context, e *fsm.Event) { c.RetryRequest() },
			"after_" + agentcore.ShutdownRequested.String(): func(_ context.Context, e *fsm.Event) { c.Shut() },
		},
	)
	return m
}

// State returns the current state.
func (m *Machine) State() agentcore.State {
	switch m.f.Current() {
	case waiting:
		return agentcore.WaitingForUserInput
	case calling:
		return agentcore.CallingLLM
	case processing:
		return agentcore.ProcessingLLMResponse
	case executing:
		return agentcore.ExecutingTools
	case hook:
		return agentcore.PostToolsHook
	case errState:
		return agentcore.Error
	case shutting:
		return agentcore.ShuttingDown
	}
	return 0
}

// Core returns the machine's data, for tests.
func (m *Machine) Core() *agentcore.Core { return &m.c }

// HandleEvent feeds ev to the machine and returns the action to perform,
// or nil. The action points into the machine and is valid until the next
// call. A refused event returns an error wrapping agentcore.ErrRejected.
func (m *Machine) HandleEvent(ev *agentcore.Event) (*agentcore.Action, error) {
	c := &m.c
	c.Act.Kind = 0
	name := ev.Kind.String()
	args := []any{ev}
	switch cur := m.f.Current(); {
	case cur == shutting && ev.Kind != agentcore.ShutdownRequested:
		name = evIgnore
	case ev.Kind == agentcore.LLMError && !c.CanRetry(ev):
		name = evGiveUp
	case ev.Kind == agentcore.ToolProgress && cur == executing && !c.IsKnownCall(ev):
		name = evIgnore
	case ev.Kind == agentcore.ToolCompleted && cur == executing:
		done, i := c.Classify(ev)
		switch done {
		case agentcore.UnknownCall:
			return nil, fmt.Errorf("%w: the call is not pending in this round", agentcore.ErrRejected)
		case agentcore.LastMutating:
			name = evLastWithHook
		case agentcore.Last:
			name = evLast
		}
		args = append(args, i)
	}
	if err := m.fire(name, args...); err != nil {
		return nil, err
	}
	if name == agentcore.LLMCompleted.String() {
		next := evNoToolCalls
		if c.HasToolCalls(ev) {
			next = evHasToolCalls
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

// fire sends one library event; a transition that stays in its state is
// not an error.
func (m *Machine) fire(name string, args ...any) error {
	err := m.f.Event(m.ctx, name, args...)
	var invalid fsm.InvalidEventError
	var same fsm.NoTransitionError
	switch {
	case err == nil, errors.As(err, &same):
		return nil
	case errors.As(err, &invalid):
		return fmt.Errorf("%w: %s", agentcore.ErrRejected, err)
	}
	return err
}
