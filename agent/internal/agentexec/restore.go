package agentexec

import (
	"errors"
	"fmt"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// restore builds the machine for a thread, with h as its Handler: new, or
// as it was saved, with the messages it holds (deferred), oldest first.
func restore(b *behavior.Agent, h agent.Handler, t *threadwire.Thread) (*agent.Machine, []*agent.UserInput, error) {
	if n := len(t.QueuedInput); n > 0 {
		return nil, nil, fmt.Errorf("resume thread %s: it holds %d message(s) typed during a turn and queued by an earlier release of the agent (queued_input, the first %q), which this release does not send: resume it with the release that saved it and let the turn end, or start a new thread and type them there",
			t.ID, n, t.QueuedInput[0])
	}
	if len(t.State) == 0 {
		m, err := agent.New(agent.Config{Behavior: b, Handler: h,
			Initial: agent.WaitingForUserInput{Conversation: chat.NewConversation(t.ID)}})
		return m, nil, err
	}
	m, held, err := load(b, h, t)
	if err != nil {
		return nil, nil, err
	}
	if err := resumable(m.State()); err != nil {
		return nil, nil, fmt.Errorf("resume thread %s: %w", t.ID, err)
	}
	if s, ok := m.State().(agent.PostToolsHook); ok {
		// The request frozen before the hook is this session's: its
		// system prompt, tools, model and token limit may have changed
		// since (another -mode, model, AGENTS.md or MCP server's tools).
		// The session's header holds the state so rebuilt, so a replay
		// sends the same.
		s.PendingRequest = b.BuildRequest(s.Conversation)
		if m, err = withDeferred(b, h, s, held); err != nil {
			return nil, nil, fmt.Errorf("resume thread %s: %w", t.ID, err)
		}
	}
	return m, held, nil
}

// resumable reports why the agent cannot resume a machine in st: a state
// it is never saved in, or one that lacks what [Agent.Start] needs to go
// on, which would otherwise leave the agent waiting for an event that
// never comes.
func resumable(st agent.State) error {
	damaged := func(what string) error {
		return fmt.Errorf("the thread's journal is damaged: it was saved %s (state %s), which cannot be resumed; start a new thread", what, st.Kind())
	}
	switch st := st.(type) {
	case agent.WaitingForUserInput, agent.PostToolsHook, agent.StoppingTurn:
		return nil
	case agent.RunningQuery:
		if st.Conversation.Len() == 0 {
			return damaged("running a query of an empty conversation")
		}
	case agent.CallingLLM:
		if st.Conversation.Len() == 0 {
			return damaged("calling the LLM with an empty conversation")
		}
	case agent.Error:
		if st.Conversation.Len() == 0 {
			return damaged("waiting to retry an empty conversation")
		}
	case agent.Compacting:
		if st.Conversation.Len() == 0 {
			return damaged("compacting an empty conversation")
		}
	case agent.ExecutingTools:
		if st.Executions.Len() == 0 {
			return damaged("executing a round of no tool calls")
		}
		if st.Executions.PendingCount() == 0 {
			return damaged("executing a round whose tool calls have all completed")
		}
	case agent.ShuttingDown:
		return errors.New("it was saved shutting down, without its conversation; it cannot be resumed")
	default:
		return damaged("in a state it never rests in")
	}
	return nil
}
