// Package safefloor is the agent machine written by hand to the contract
// of the generated one: the same events, the same behaviour (package
// behavior, called directly, so that the compiler can inline it), and the
// same Handler, handed the actions as values. It keeps the contract's
// safety: nothing it hands out changes later, and its data is immutable
// values (chat.Conversation, chat.ToolRound).
//
// It separates two costs in the benchmark: the floor (package floor) is
// as fast as the agent can be when it mutates its data in place and lends
// out pointers into itself; this one is as fast as the safe contract can
// be by hand; the generated machine adds the interface between the
// machine and the behaviour, and what generation itself costs.
package safefloor

import (
	"errors"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/gen/agent"
)

// ErrRejected is returned for an event the current state refuses.
var ErrRejected = errors.New("rejected")

// Machine is the hand-written safe agent machine.
type Machine struct {
	b    *behavior.Agent
	h    agent.Handler
	kind agent.StateKind

	conv      chat.Conversation
	retries   int
	round     chat.ToolRound
	frozen    chat.Request
	completed chat.ToolRound
	err       chat.LLMError
	origin    chat.ErrorOrigin
}

// New returns a machine waiting for user input with conv.
func New(b *behavior.Agent, h agent.Handler, conv chat.Conversation) *Machine {
	return &Machine{b: b, h: h, kind: agent.StateWaitingForUserInput, conv: conv}
}

// Kind returns the current state's kind.
func (m *Machine) Kind() agent.StateKind { return m.kind }

// Conversation returns the conversation of the current state.
func (m *Machine) Conversation() chat.Conversation { return m.conv }

// Retries returns the failed attempts of the current request.
func (m *Machine) Retries() int { return m.retries }

// HandleEvent feeds ev to the machine, handing its actions to the Handler.
func (m *Machine) HandleEvent(ev agent.Event) error {
	if _, ok := ev.(*agent.ShutdownRequested); ok {
		m.kind = agent.StateShuttingDown
		m.conv, m.retries, m.round, m.frozen, m.completed = chat.Conversation{}, 0, chat.ToolRound{}, chat.Request{}, chat.ToolRound{}
		m.h.Shutdown()
		return nil
	}
	switch m.kind {
	case agent.StateWaitingForUserInput:
		if ev, ok := ev.(*agent.UserInput); ok {
			conv, retries, req := m.b.StartTurn(m.conv, ev.Message)
			m.conv, m.retries, m.kind = conv, retries, agent.StateCallingLLM
			m.h.SendLLMRequest(req)
			return nil
		}
	case agent.StateCallingLLM:
		switch ev := ev.(type) {
		case *agent.TextDelta:
			m.h.DisplayMessage(ev.Content)
			return nil
		case *agent.ToolCallDelta:
			m.h.WaitForInput()
			return nil
		case *agent.LLMCompleted:
			m.conv = m.b.RecordResponse(m.conv, ev.Response)
			m.retries = 0
			if m.b.HasToolCalls(ev.Response) {
				round, calls := m.b.StartTools(m.conv, ev.Response)
				m.round, m.kind = round, agent.StateExecutingTools
				m.h.ExecuteTools(calls)
				return nil
			}
			m.kind = agent.StateWaitingForUserInput
			m.h.WaitForInput()
			return nil
		case *agent.LLMError:
			if m.b.CanRetry(ev.Error, m.retries) {
				retries, origin, attempt, delay := m.b.ScheduleRetry(m.retries, ev.Error)
				m.err, m.retries, m.origin, m.kind = ev.Error, retries, origin, agent.StateError
				m.h.ScheduleRetry(delay, attempt, ev.Error)
				return nil
			}
			msg := m.b.GiveUp(m.retries, ev.Error)
			m.retries, m.kind = 0, agent.StateWaitingForUserInput
			m.h.DisplayError(msg)
			return nil
		}
	case agent.StateExecutingTools:
		switch ev := ev.(type) {
		case *agent.ToolProgress:
			if m.b.IsKnownCall(m.round, ev.CallID) {
				m.round = m.b.RecordProgress(m.round, ev.CallID, ev.Progress)
				m.h.WaitForInput()
			}
			return nil
		case *agent.ToolCompleted:
			switch {
			case m.b.IsUnknownCall(m.round, ev.CallID):
				return ErrRejected
			case m.b.ToolsPending(m.round):
				m.round = m.b.RecordOutcome(m.round, ev.CallID, ev.Outcome)
				m.h.WaitForInput()
			case m.b.MutatingToolRan(m.round):
				conv, frozen, completed := m.b.FinishToolsWithHook(m.conv, m.round, ev.CallID, ev.Outcome)
				m.conv, m.frozen, m.completed, m.round, m.kind = conv, frozen, completed, chat.ToolRound{}, agent.StatePostToolsHook
				m.h.RunPostToolsHook(completed)
			default:
				conv, retries, req := m.b.FinishTools(m.conv, m.round, ev.CallID, ev.Outcome)
				m.conv, m.retries, m.round, m.kind = conv, retries, chat.ToolRound{}, agent.StateCallingLLM
				m.h.SendLLMRequest(req)
			}
			return nil
		}
	case agent.StatePostToolsHook:
		if _, ok := ev.(*agent.PostToolsHookCompleted); ok {
			retries, req := m.b.ResumeAfterHook(m.frozen)
			m.retries, m.frozen, m.completed, m.kind = retries, chat.Request{}, chat.ToolRound{}, agent.StateCallingLLM
			m.h.SendLLMRequest(req)
			return nil
		}
	case agent.StateError:
		if _, ok := ev.(*agent.RetryTimeoutFired); ok {
			req := m.b.BuildRequest(m.conv)
			m.err, m.origin, m.kind = chat.LLMError{}, "", agent.StateCallingLLM
			m.h.SendLLMRequest(req)
			return nil
		}
	case agent.StateShuttingDown:
		return nil
	}
	return ErrRejected
}
