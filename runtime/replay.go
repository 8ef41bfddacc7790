package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/fsmgen/fsmgen/chat"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/runtime/eventlog"
)

// ReplayAgent replays an event log the agent wrote: for each session, a
// fresh agent machine is built with the behaviour configuration and the
// starting state of the session's header, then fed the session's events;
// every action and rejection must be identical to the record. It needs no
// network, tools or files other than the log. See eventlog.Replay for the
// report and the errors.
func ReplayAgent(r io.Reader) (eventlog.Report, error) {
	return eventlog.Replay(r, startAgent)
}

// startAgent builds the agent machine a session header describes.
func startAgent(h eventlog.Header) (eventlog.Step, error) {
	if h.Machine != MachineName {
		return nil, fmt.Errorf("the log is of machine %q, not %q; replay it with that machine's program", h.Machine, MachineName)
	}
	var cfg agent.Config
	if err := json.Unmarshal(h.Config, &cfg); err != nil {
		return nil, fmt.Errorf("decode the behaviour config: %w", err)
	}
	b := agent.NewAgent(cfg)
	var m *agent.Machine
	if len(h.State) == 0 || string(h.State) == "null" {
		m = agent.New(b, agent.WaitingForUserInput{Conversation: chat.NewConversation(h.Thread)})
	} else {
		st, err := agent.UnmarshalState(h.State)
		if err != nil {
			return nil, fmt.Errorf("decode the starting state: %w", err)
		}
		if m, err = agent.Restore(b, st); err != nil {
			return nil, err
		}
	}
	return func(raw json.RawMessage) (json.RawMessage, bool, error) {
		ev, err := agent.UnmarshalEvent(raw)
		if err != nil {
			return nil, false, err
		}
		act, err := m.HandleEvent(ev)
		if err != nil {
			return nil, errors.Is(err, agent.ErrRejected), nil
		}
		if act == nil {
			return nil, false, nil
		}
		out, err := json.Marshal(act)
		if err != nil {
			return nil, false, fmt.Errorf("encode the action: %w", err)
		}
		return out, false, nil
	}, nil
}
