package agentexec

import (
	"encoding/json"
	"fmt"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// Input typed during a turn is the machine's: every state of a turn
// defers UserInput (spec/agent.yaml, Running's defer list), so the
// machine holds the message, saves it with its state, and takes it, the
// oldest first, once it waits for input again — in the step that ends
// the turn. The agent keeps a copy of what the machine holds only to save
// it with the state it captures, which drops the conversation (see
// capture); it never decides when a message is sent.

// setMachine makes m the agent's machine, watched for the steps that end
// a turn (see Agent.idle).
func (a *Agent) setMachine(m *agent.Machine) {
	m.SetObserver(func(s agent.Step) {
		if s.To == agent.StateWaitingForUserInput {
			a.idle = true
			a.idleConv = a.conversation()
		}
	})
	a.m = m
}

// syncDeferred keeps a.deferred what the machine holds after it handled
// ev in state from: ev appended when the machine deferred it, the messages
// it took (recalled, oldest first) removed. Only UserInput is deferred,
// and never in the step that recalls, so counting tells which. Loop
// goroutine only.
func (a *Agent) syncDeferred(ev agent.Event, from agent.StateKind, err error) error {
	held := len(a.m.Deferred())
	if ui, ok := ev.(*agent.UserInput); ok && err == nil && a.m.Kind() == from && held == len(a.deferred)+1 {
		a.deferred = append(a.deferred, ui)
		a.heldNow = true
		return nil
	}
	if taken := len(a.deferred) - held; taken > 0 {
		clear(a.deferred[:taken])
		a.deferred = a.deferred[taken:]
	}
	if held != len(a.deferred) {
		return fmt.Errorf("agentexec: the machine holds %d deferred events, the agent counted %d: report this bug", held, len(a.deferred))
	}
	return nil
}

// dropDeferred drops the messages the resumed machine holds, showing each
// (see Config.ContinueTurn), and saves the thread without them.
func (a *Agent) dropDeferred() error {
	if len(a.deferred) == 0 {
		return nil
	}
	for _, ui := range a.deferred {
		a.display.Notice(fmt.Sprintf("not sent before the session stopped: %q; type it again to send it", ui.Message.Content))
	}
	m, err := agent.Restore(agent.Config{Behavior: a.cfg.Behavior, Handler: a}, a.m.State())
	if err != nil {
		return fmt.Errorf("resume thread %s: %w", a.cfg.Thread.ID, err)
	}
	a.setMachine(m)
	a.deferred = nil
	return a.capture()
}

// holdWork keeps the work the step's actions start until the turn_end
// hooks running end (see turnHooksEnded): the next turn, started by a
// message typed during the turn or the hooks, waits for them.
func (a *Agent) holdWork() {
	a.held = append(a.held, a.starts...)
	clear(a.starts)
	a.starts = a.starts[:0]
}

// launchHeld starts the work holdWork kept.
func (a *Agent) launchHeld() {
	held := a.held
	a.held = nil
	for _, start := range held {
		start()
	}
}

// withDeferred returns a machine in st, with b and h, that holds msgs
// deferred, oldest first: st's state defers them, so handing them to it
// does nothing else.
func withDeferred(b *behavior.Agent, h agent.Handler, st agent.State, msgs []*agent.UserInput) (*agent.Machine, error) {
	m, err := agent.Restore(agent.Config{Behavior: b, Handler: h}, st)
	if err != nil {
		return nil, err
	}
	for _, ui := range msgs {
		if err := m.HandleEvent(ui); err != nil {
			return nil, err
		}
	}
	if n := len(m.Deferred()); n != len(msgs) {
		return nil, fmt.Errorf("state %s holds %d of its %d deferred messages", st.Kind(), n, len(msgs))
	}
	return m, nil
}

// savedDeferred returns the messages a thread's saved machine holds
// (deferred), oldest first, from the member "deferred" its Save writes
// (docs/spec.md, "Deferred events").
func savedDeferred(t *threadwire.Thread) ([]*agent.UserInput, error) {
	if len(t.State) == 0 {
		return nil, nil
	}
	var saved struct {
		Deferred []json.RawMessage `json:"deferred"`
	}
	if err := json.Unmarshal(t.State, &saved); err != nil {
		return nil, fmt.Errorf("resume thread %s: %w; the thread's journal is damaged", t.ID, err)
	}
	out := make([]*agent.UserInput, 0, len(saved.Deferred))
	for i, raw := range saved.Deferred {
		ev, err := agent.UnmarshalEvent(raw)
		if err != nil {
			return nil, fmt.Errorf("resume thread %s: deferred event %d: %w; the thread's journal is damaged", t.ID, i+1, err)
		}
		ui, ok := ev.(*agent.UserInput)
		if !ok {
			return nil, fmt.Errorf("resume thread %s: deferred event %d is a %s, not a user's message; the thread's journal is damaged", t.ID, i+1, ev.Kind())
		}
		out = append(out, ui)
	}
	return out, nil
}
