package agentexec

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/runtime/eventlog"
	"github.com/fsmgen/fsmgen/runtime/loop"
	"github.com/fsmgen/fsmgen/runtime/thread"
)

// MachineName is the machine name the agent writes in event log headers.
const MachineName = "agent"

// writeHeader starts the session in the event log: the behaviour's
// configuration (a behavior.Config), the state the machine starts in and
// the parts of the actions recorded by reference ([LogRefs]).
func (a *Agent) writeHeader() error {
	if a.cfg.EventLog == nil {
		return nil
	}
	conf, err := json.Marshal(a.cfg.Behavior.Config())
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
		Refs:    LogRefs(),
		Meta:    map[string]string{"provider": t.Provider, "model": t.Model, "workspace": t.Workspace},
	})
	if err != nil {
		return fmt.Errorf("start the event log: %w", err)
	}
	return nil
}

// record appends the step and the actions performed for it to the event
// log. The actions are handed over whole, redacted: the log digests the
// parts [LogRefs] names, so a digest never stands for a secret.
func (a *Agent) record(s loop.Step[agent.Event], rejected bool) error {
	if a.cfg.EventLog == nil {
		return nil
	}
	ev, err := json.Marshal(s.Event)
	if err != nil {
		return fmt.Errorf("event log: encode event %d: %w", s.Seq, err)
	}
	acts := make([]json.RawMessage, len(a.actions))
	for i, act := range a.actions {
		b, err := json.Marshal(act)
		if err != nil {
			return fmt.Errorf("event log: encode action %d of event %d: %w", i+1, s.Seq, err)
		}
		acts[i] = a.redact(b)
	}
	rec := eventlog.Record{Event: a.redact(ev), Actions: acts, Rejected: rejected}
	if s.Err != nil {
		rec.Error = string(a.redact([]byte(s.Err.Error())))
	}
	if _, err := a.cfg.EventLog.Append(rec); err != nil {
		return fmt.Errorf("record event %d: %w", s.Seq, err)
	}
	return nil
}

// capture keeps the machine, as its Save saves it, for the next save.
func (a *Agent) capture() error {
	st, err := a.m.Save()
	if err != nil {
		return fmt.Errorf("save thread %s: %w", a.cfg.Thread.ID, err)
	}
	a.saved = st
	a.savedKind = a.m.Kind()
	return nil
}

// save writes the thread with the last captured state and the queued input.
func (a *Agent) save() error {
	t := a.cfg.Thread
	t.Version = thread.Version
	t.State = a.redact(a.saved)
	t.QueuedInput = slices.Clone(a.queue)
	for _, ui := range a.typed {
		t.QueuedInput = append(t.QueuedInput, ui.Message.Content)
	}
	if a.cfg.EventLog != nil {
		t.LogChain = a.cfg.EventLog.Chain()
	}
	t.Updated = a.now().UTC()
	if a.cfg.Store == nil {
		return nil
	}
	return a.cfg.Store.Save(t)
}

// redact replaces every secret in data, raw or encoded.
func (a *Agent) redact(data []byte) []byte { return a.secrets.Bytes(data) }
