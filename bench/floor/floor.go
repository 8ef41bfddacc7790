// Package floor is the agent machine written by hand for speed: a nested
// switch over the state, then the event, calling the guards and effects of
// package agentcore directly. It is the floor the generated machine is
// measured against: the same logic, with nothing between the switch and
// the data.
package floor

import (
	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/bench/agentcore"
)

// Machine is the hand-written agent machine.
type Machine struct {
	c agentcore.Core
}

// New returns a machine waiting for user input with conv, configured as b.
func New(b *behavior.Agent, conv chat.Conversation) *Machine {
	m := &Machine{}
	m.c.Init(b, conv)
	return m
}

// State returns the current state.
func (m *Machine) State() agentcore.State { return m.c.State }

// Core returns the machine's data, for tests.
func (m *Machine) Core() *agentcore.Core { return &m.c }

// HandleEvent feeds ev to the machine and returns the action to perform,
// or nil. The action points into the machine and is valid until the next
// call. A refused event returns agentcore.ErrRejected and changes nothing.
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
	if ev.Kind == agentcore.ShutdownRequested {
		return c.Shut(), nil
	}
	switch c.State {
	case agentcore.WaitingForUserInput:
		switch ev.Kind {
		case agentcore.UserInput:
			c.StartTurn(ev)
			return c.Prepare(), nil
		case agentcore.Interrupt:
			return nil, nil
		case agentcore.UndoTurn:
			return c.UndoTurn(), nil
		case agentcore.CompactRequested:
			if c.CanCompact() {
				return c.StartCompactCommand(), nil
			}
		}
	case agentcore.CallingLLM:
		switch ev.Kind {
		case agentcore.TextDelta:
			return c.ShowDelta(ev), nil
		case agentcore.ToolCallDelta:
			return c.Wait(), nil
		case agentcore.LLMCompleted:
			c.RecordResponse(ev)
			switch {
			case c.ReplyCut(ev):
				c.ContinueReply()
				return c.Prepare(), nil
			case c.HasToolCalls(ev):
				return c.StartTools(ev), nil
			}
			return c.EndTurn(), nil
		case agentcore.LLMError:
			if c.CanRetry(ev) {
				return c.ScheduleRetry(ev), nil
			}
			return c.GiveUp(ev), nil
		case agentcore.Interrupt:
			return c.InterruptTurn(), nil
		case agentcore.QueryDetected:
			if c.QueryLimitReached() {
				return c.RefuseQuery(ev), nil
			}
			return c.StartQuery(ev), nil
		}
	case agentcore.ExecutingTools:
		switch ev.Kind {
		case agentcore.ToolProgress:
			if c.IsKnownCall(ev) {
				return c.RecordProgress(ev), nil
			}
			return nil, nil
		case agentcore.ToolCompleted:
			switch done, i := c.Classify(ev); done {
			case agentcore.OthersPending:
				return c.RecordOutcome(ev, i), nil
			case agentcore.LastMutating:
				return c.FinishToolsWithHook(ev, i), nil
			case agentcore.Last:
				c.FinishTools(ev, i)
				return c.Prepare(), nil
			}
		case agentcore.Interrupt:
			return c.InterruptTools(c.AnyMutating()), nil
		}
	case agentcore.PostToolsHook:
		switch ev.Kind {
		case agentcore.PostToolsHookCompleted:
			c.ResumeAfterHook()
			return c.Prepare(), nil
		case agentcore.Interrupt:
			return c.StopHook(), nil
		}
	case agentcore.Error:
		switch ev.Kind {
		case agentcore.RetryTimeoutFired:
			if c.IsCompaction() {
				return c.RetryCompaction(), nil
			}
			return c.RetryRequest(), nil
		case agentcore.Interrupt:
			if c.IsCompactCommand() {
				return c.StopCompactCommand(), nil
			}
			return c.InterruptTurn(), nil
		}
	case agentcore.StoppingTurn:
		switch ev.Kind {
		case agentcore.PostToolsHookCompleted:
			return c.EndStop(), nil
		case agentcore.Interrupt:
			return nil, nil
		}
	case agentcore.Compacting:
		switch ev.Kind {
		case agentcore.TextDelta, agentcore.ToolCallDelta:
			return nil, nil
		case agentcore.LLMCompleted:
			switch {
			case c.EmptySummary(ev):
				return c.RefuseSummary(ev), nil
			case c.IsCompactCommand():
				return c.Compact(ev), nil
			}
			return c.CompactAndResume(ev), nil
		case agentcore.LLMError:
			if c.CanRetry(ev) {
				return c.ScheduleCompactionRetry(ev), nil
			}
			return c.GiveUpCompaction(ev), nil
		case agentcore.Interrupt:
			if c.IsCompactCommand() {
				return c.StopCompactCommand(), nil
			}
			return c.InterruptTurn(), nil
		}
	case agentcore.RunningQuery:
		switch ev.Kind {
		case agentcore.QueryCompleted:
			c.InjectQueryResult(ev)
			return c.Prepare(), nil
		case agentcore.Interrupt:
			return c.InterruptTurn(), nil
		}
	case agentcore.ShuttingDown:
		return nil, nil
	}
	return nil, agentcore.ErrRejected
}
