package agentexec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/eventlog"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// LogRefs returns what the agent's event log records by reference rather
// than whole (see agent/internal/eventlog): the conversation, the system prompt
// and the tools of every LLM request — the request's model, token limit
// and temperature stay inline —, the round of tools a post-tools hook is
// given (their results are in the round's tool_completed events), and any
// action longer than 16 KiB. The conversation is what would make the log
// grow with the square of the session; the events rebuild all of it, so
// replay still tells an identical request from another by its digest.
func LogRefs() eventlog.RefPolicy {
	return eventlog.RefPolicy{
		Fields: map[string][]string{
			"send_llm_request":    {"request.messages", "request.system", "request.tools"},
			"run_post_tools_hook": {"completed_tools"},
		},
		MaxBytes: 16 << 10,
	}
}

// ReplayAgent replays an event log the agent wrote: for each session, a
// fresh agent machine is built with the behaviour configuration and the
// starting state of the session's header (with the messages it held,
// deferred), and an agent.Recorder as its
// Handler, then fed the session's events; the actions recorded for each
// event, in order (reduced as the header's refs say: an LLM request's
// conversation is compared by its count and digest), and every rejection
// must be identical to the log, and every line must chain to the one
// before it. It needs no network, tools or files other than the log. See
// eventlog.Replay for the report and the errors.
func ReplayAgent(r io.Reader) (eventlog.Report, error) {
	return eventlog.Replay(r, startAgent)
}

// ReplayAgentAgainst is ReplayAgent that also checks that the log still
// has a line whose chain value is noted — the value a thread saved (see
// threadwire.Thread.LogChain) — so that a log cut or rewritten after that line
// is told from a whole one (see eventlog.ReplayAgainst).
func ReplayAgentAgainst(r io.Reader, noted string) (eventlog.Report, error) {
	return eventlog.ReplayAgainst(r, startAgent, noted)
}

// startAgent builds the agent machine a session header describes.
func startAgent(h eventlog.Header) (eventlog.Step, error) {
	if h.Machine != MachineName {
		return nil, fmt.Errorf("the log is of machine %q, not %q; replay it with that machine's program", h.Machine, MachineName)
	}
	var cfg behavior.Config
	if err := json.Unmarshal(h.Config, &cfg); err != nil {
		return nil, fmt.Errorf("decode the behaviour config: %w", err)
	}
	b, err := behavior.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("the behaviour config: %w", err)
	}
	rec := &agent.Recorder{}
	c := agent.Config{Behavior: b, Handler: rec}
	var m *agent.Machine
	if len(h.State) == 0 || string(h.State) == "null" {
		c.Initial = agent.WaitingForUserInput{Conversation: chat.NewConversation(h.Thread)}
		if m, err = agent.New(c); err != nil {
			return nil, err
		}
	} else {
		st, err := agent.UnmarshalState(h.State)
		if err != nil {
			return nil, fmt.Errorf("decode the starting state: %w", err)
		}
		var held []*agent.UserInput
		for i, raw := range h.Deferred {
			ev, err := agent.UnmarshalEvent(raw)
			if err != nil {
				return nil, fmt.Errorf("decode deferred event %d: %w", i+1, err)
			}
			ui, ok := ev.(*agent.UserInput)
			if !ok {
				return nil, fmt.Errorf("deferred event %d is a %s, not a user's message", i+1, ev.Kind())
			}
			held = append(held, ui)
		}
		if m, err = withDeferred(b, rec, st, held); err != nil {
			return nil, err
		}
	}
	return func(raw json.RawMessage) ([]json.RawMessage, bool, error) {
		ev, err := agent.UnmarshalEvent(raw)
		if err != nil {
			return nil, false, err
		}
		rec.Actions = rec.Actions[:0]
		if err := m.HandleEvent(ev); err != nil {
			return nil, errors.Is(err, fsmrt.ErrRejected), nil
		}
		out := make([]json.RawMessage, len(rec.Actions))
		for i, act := range rec.Actions {
			if out[i], err = json.Marshal(act); err != nil {
				return nil, false, fmt.Errorf("encode action %d: %w", i+1, err)
			}
		}
		return out, false, nil
	}, nil
}
