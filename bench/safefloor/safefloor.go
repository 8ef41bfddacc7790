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
	query     chat.Query
	// deferred are the user's messages typed during a turn, oldest
	// first: the machine takes them once it waits for input.
	deferred []agent.UserInput
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

// Origin returns what the error was of (Error), or who asked for the
// compaction (Compacting).
func (m *Machine) Origin() chat.ErrorOrigin { return m.origin }

// HandleEvent feeds ev to the machine, handing its actions to the Handler.
// A user's message typed during a turn is held (deferred), and taken once
// the machine waits for input again, in the step that brought it there.
func (m *Machine) HandleEvent(ev agent.Event) error {
	if ui, ok := ev.(*agent.UserInput); ok && ui != nil && m.kind != agent.StateWaitingForUserInput && m.kind != agent.StateShuttingDown {
		m.deferred = append(m.deferred, *ui)
		return nil
	}
	from := m.kind
	if err := m.handle(ev); err != nil || m.kind == from || len(m.deferred) == 0 {
		return err
	}
	if m.kind == agent.StateShuttingDown {
		m.deferred = nil // ShuttingDown ignores them
		return nil
	}
	for m.kind == agent.StateWaitingForUserInput && len(m.deferred) > 0 {
		ui := m.deferred[0]
		m.deferred = m.deferred[1:]
		if err := m.handle(&ui); err != nil {
			return err
		}
	}
	return nil
}

// handle is HandleEvent but for the messages held.
func (m *Machine) handle(ev agent.Event) error {
	if _, ok := ev.(*agent.ShutdownRequested); ok {
		m.kind = agent.StateShuttingDown
		m.conv, m.retries, m.round, m.frozen, m.completed = chat.Conversation{}, 0, chat.ToolRound{}, chat.Request{}, chat.ToolRound{}
		m.err, m.origin, m.query = chat.LLMError{}, "", chat.Query{}
		m.h.Shutdown()
		return nil
	}
	switch m.kind {
	case agent.StateWaitingForUserInput:
		switch ev := ev.(type) {
		case *agent.UserInput:
			conv, req := m.b.StartTurn(m.conv, ev.Message)
			m.conv = conv
			m.prepare(req)
			return nil
		case *agent.Interrupt:
			return nil
		case *agent.UndoTurn:
			m.conv = m.b.UndoTurn(m.conv)
			m.h.WaitForInput()
			return nil
		case *agent.CompactRequested:
			if m.b.CanCompact(m.conv) {
				origin, req := m.b.StartCompactCommand(m.conv)
				m.origin, m.retries, m.kind = origin, 0, agent.StateCompacting
				m.h.SendLLMRequest(req)
				return nil
			}
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
			switch {
			case m.b.ReplyCut(m.conv, ev.Response):
				conv, req := m.b.ContinueReply(m.conv)
				m.conv = conv
				m.prepare(req)
			case m.b.HasToolCalls(ev.Response):
				round, calls := m.b.StartTools(m.conv, ev.Response)
				m.round, m.kind = round, agent.StateExecutingTools
				m.h.ExecuteTools(calls)
			default:
				m.kind = agent.StateWaitingForUserInput
				m.h.WaitForInput()
			}
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
		case *agent.Interrupt:
			m.stop(true)
			return nil
		case *agent.QueryDetected:
			if m.b.QueryLimitReached(m.conv) {
				conv, msg := m.b.RefuseQuery(m.conv, ev.Text)
				m.conv, m.retries, m.kind = conv, 0, agent.StateWaitingForUserInput
				m.h.DisplayError(msg)
				return nil
			}
			m.conv = m.b.StartQuery(m.conv, ev.Text)
			m.query, m.retries, m.kind = ev.Query, 0, agent.StateRunningQuery
			m.h.RunQuery(ev.Query)
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
				conv, req := m.b.FinishTools(m.conv, m.round, ev.CallID, ev.Outcome)
				m.conv, m.round = conv, chat.ToolRound{}
				m.prepare(req)
			}
			return nil
		case *agent.Interrupt:
			if m.b.MutatingToolRan(m.round) {
				conv, completed := m.b.InterruptToolsWithHook(m.conv, m.round)
				m.conv, m.completed, m.round, m.kind = conv, completed, chat.ToolRound{}, agent.StateStoppingTurn
				m.h.RunPostToolsHook(completed)
				return nil
			}
			m.conv, m.round, m.kind = m.b.InterruptTools(m.conv, m.round), chat.ToolRound{}, agent.StateWaitingForUserInput
			m.h.CancelTurn()
			return nil
		}
	case agent.StatePostToolsHook:
		switch ev.(type) {
		case *agent.PostToolsHookCompleted:
			req := m.frozen
			m.frozen, m.completed = chat.Request{}, chat.ToolRound{}
			m.prepare(req)
			return nil
		case *agent.Interrupt:
			m.frozen, m.kind = chat.Request{}, agent.StateStoppingTurn
			m.h.WaitForInput()
			return nil
		}
	case agent.StateError:
		switch ev.(type) {
		case *agent.RetryTimeoutFired:
			if m.b.IsCompaction(m.origin) {
				req := m.b.RetryCompaction(m.conv)
				m.err, m.kind = chat.LLMError{}, agent.StateCompacting
				m.h.SendLLMRequest(req)
				return nil
			}
			req := m.b.BuildRequest(m.conv)
			m.err, m.origin, m.kind = chat.LLMError{}, "", agent.StateCallingLLM
			m.h.SendLLMRequest(req)
			return nil
		case *agent.Interrupt:
			m.err = chat.LLMError{}
			m.stop(!m.b.IsCompactCommand(m.origin))
			return nil
		}
	case agent.StateStoppingTurn:
		switch ev.(type) {
		case *agent.PostToolsHookCompleted:
			m.completed, m.kind = chat.ToolRound{}, agent.StateWaitingForUserInput
			m.h.WaitForInput()
			return nil
		case *agent.Interrupt:
			return nil
		}
	case agent.StateCompacting:
		return m.compacting(ev)
	case agent.StateRunningQuery:
		switch ev := ev.(type) {
		case *agent.QueryCompleted:
			conv, req := m.b.InjectQueryResult(m.conv, m.query, ev.Outcome)
			m.conv, m.query = conv, chat.Query{}
			m.prepare(req)
			return nil
		case *agent.Interrupt:
			m.query = chat.Query{}
			m.stop(true)
			return nil
		}
	case agent.StateShuttingDown:
		return nil
	}
	return ErrRejected
}

// prepare takes the transient PreparingRequest: it sends the summary
// request first when req would pass the compaction threshold
// (needsCompaction), else req.
func (m *Machine) prepare(req chat.Request) {
	if m.b.NeedsCompaction(m.conv) {
		origin, summary := m.b.StartCompaction(m.conv)
		m.origin, m.retries, m.kind = origin, 0, agent.StateCompacting
		m.h.SendLLMRequest(summary)
		return
	}
	m.retries, m.kind = 0, agent.StateCallingLLM
	m.h.SendLLMRequest(req)
}

// stop ends the turn the user stopped, telling the model so when told is
// true, and cancels what is in flight.
func (m *Machine) stop(told bool) {
	if told {
		m.conv = m.b.InterruptTurn(m.conv)
	}
	m.retries, m.origin, m.kind = 0, "", agent.StateWaitingForUserInput
	m.h.CancelTurn()
}

// compacting handles the events of Compacting.
func (m *Machine) compacting(ev agent.Event) error {
	switch ev := ev.(type) {
	case *agent.TextDelta, *agent.ToolCallDelta:
		return nil
	case *agent.LLMCompleted:
		switch {
		case m.b.EmptySummary(ev.Response):
			msg := m.b.RefuseSummary(ev.Response)
			m.retries, m.origin, m.kind = 0, "", agent.StateWaitingForUserInput
			m.h.DisplayError(msg)
		case m.b.IsCompactCommand(m.origin):
			m.conv = m.b.Compact(m.conv, ev.Response)
			m.retries, m.origin, m.kind = 0, "", agent.StateWaitingForUserInput
			m.h.WaitForInput()
		default:
			conv, req := m.b.CompactAndResume(m.conv, ev.Response)
			m.conv, m.retries, m.origin, m.kind = conv, 0, "", agent.StateCallingLLM
			m.h.SendLLMRequest(req)
		}
		return nil
	case *agent.LLMError:
		if m.b.CanRetry(ev.Error, m.retries) {
			retries, attempt, delay := m.b.ScheduleCompactionRetry(m.retries, ev.Error)
			m.err, m.retries, m.kind = ev.Error, retries, agent.StateError
			m.h.ScheduleRetry(delay, attempt, ev.Error)
			return nil
		}
		msg := m.b.GiveUpCompaction(m.retries, ev.Error)
		m.retries, m.origin, m.kind = 0, "", agent.StateWaitingForUserInput
		m.h.DisplayError(msg)
		return nil
	case *agent.Interrupt:
		m.stop(!m.b.IsCompactCommand(m.origin))
		return nil
	}
	return ErrRejected
}
