package agentexec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/eventlog"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/threadwire"
	"github.com/fsmgen/fsmgen/runtime/loop"
)

// MachineName is the machine name the agent writes in event log headers.
const MachineName = "agent"

// writeHeader starts the session in the event log: the behaviour's
// configuration (a behavior.Config), the state the machine starts in, the
// messages it holds (deferred), and the parts of the actions recorded by reference ([LogRefs]).
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
	var held []json.RawMessage
	for i, ui := range a.deferred {
		b, err := json.Marshal(ui)
		if err != nil {
			return fmt.Errorf("event log header: encode deferred message %d: %w", i+1, err)
		}
		held = append(held, a.redact(withoutImageData(b)))
	}
	t := a.cfg.Thread
	err = a.cfg.EventLog.WriteHeader(eventlog.Header{
		Machine:  MachineName,
		Thread:   t.ID,
		Started:  a.now().UTC(),
		Config:   a.redact(conf),
		State:    a.redact(withoutImageData(state)),
		Deferred: held,
		Refs:     LogRefs(),
		Meta:     map[string]string{"provider": t.Provider, "model": t.Model, "workspace": t.Workspace},
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
	ev = withoutImageData(ev)
	acts := make([]json.RawMessage, len(a.actions))
	for i, act := range a.actions {
		b, err := json.Marshal(act)
		if err != nil {
			return fmt.Errorf("event log: encode action %d of event %d: %w", i+1, s.Seq, err)
		}
		acts[i] = a.redact(withoutImageData(b))
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

// imageData is an image's bytes in the JSON of an event or action (see
// chat.Image.Data), after the image's other fields. Within a JSON string
// a quote is escaped: the pattern matches the member only.
var imageData = regexp.MustCompile(`,"data_base64":"[A-Za-z0-9+/=]*"`)

// withoutImageData returns the JSON b of an event or action without the
// bytes of the images it holds: the event log says which image was sent
// (its name and type), the thread keeps what it was. A replay, whose
// events then carry images without bytes, makes the same actions.
func withoutImageData(b []byte) []byte {
	if !bytes.Contains(b, []byte(`"data_base64":"`)) {
		return b
	}
	return imageData.ReplaceAll(b, nil)
}

// capture keeps the machine, as its Save saves it without its
// conversation's messages, and the messages added since the last capture,
// each encoded once, for the next save: what a save costs does not grow
// with the conversation. A conversation cut back (by an undo, or
// replaced by compaction) keeps the messages it shares with the one
// captured last, and the journal's next record drops the others.
func (a *Agent) capture() error {
	st := a.m.State()
	conv, _ := agent.ConversationOf(st)
	if keep := conv.Common(a.conv); keep < len(a.msgs) {
		a.msgs = slices.Clip(a.msgs[:keep])
		if a.journal != nil {
			a.journal.Cut(keep)
		}
	}
	a.conv = conv
	for _, msg := range conv.Messages()[len(a.msgs):] {
		b, err := json.Marshal(msg)
		if err != nil {
			return fmt.Errorf("save thread %s: encode message %d: %w", a.cfg.Thread.ID, len(a.msgs)+1, err)
		}
		a.msgs = append(a.msgs, a.redact(b))
	}
	m, err := withDeferred(a.cfg.Behavior, &agent.Recorder{}, bare(st), a.deferred)
	if err != nil {
		return fmt.Errorf("save thread %s: %w", a.cfg.Thread.ID, err)
	}
	saved, err := m.Save()
	if err != nil {
		return fmt.Errorf("save thread %s: %w", a.cfg.Thread.ID, err)
	}
	a.saved = a.redact(saved)
	a.savedKind = a.m.Kind()
	return nil
}

// save writes the thread with the last captured state (with the messages
// the machine holds, deferred) to its journal: it appends what changed, or
// starts the journal at the first save of a thread that holds a message,
// so that a session that ends before its first message leaves no thread
// behind.
func (a *Agent) save() error {
	t := a.cfg.Thread
	t.Version = threadwire.Version
	t.State = a.saved
	t.Messages = a.msgs
	t.HookNote = a.hookNote
	if a.cfg.EventLog != nil {
		t.LogChain = a.cfg.EventLog.Chain()
	}
	t.NoteFirstPrompt()
	t.Updated = a.now().UTC()
	switch {
	case a.cfg.Store == nil:
		return nil
	case a.journal != nil:
		if err := a.journal.Save(t); err != nil {
			return err
		}
		a.afterSave(t)
		return nil
	case len(t.Messages) == 0:
		return nil
	}
	j, err := a.cfg.Store.Create(t)
	if err != nil {
		return err
	}
	a.journal = j
	a.afterSave(t)
	return nil
}

// afterSave hands the thread just saved to Config.Saved.
func (a *Agent) afterSave(t *threadwire.Thread) {
	if a.cfg.Saved != nil {
		a.cfg.Saved(t)
	}
}

// Journal returns the thread's journal: the one Config gave, or the one
// the agent started at its first save; nil when none was started.
func (a *Agent) Journal() *thread.Journal { return a.journal }

// bare returns st with its conversation emptied (its ID kept), and the
// request frozen in PostToolsHook without its messages when they are the
// conversation's, as they always are: what [dress] puts back.
func bare(st agent.State) agent.State {
	conv, ok := agent.ConversationOf(st)
	if !ok {
		return st
	}
	if s, ok := st.(agent.PostToolsHook); ok && sameMessages(s.PendingRequest.Messages, conv.Messages()) {
		s.PendingRequest.Messages = nil
		st = s
	}
	st, _ = agent.WithConversation(st, chat.NewConversation(conv.ID()))
	return st
}

// dress returns the bare state st with the conversation's messages msgs
// put back.
func dress(st agent.State, msgs []chat.Message) agent.State {
	conv, ok := agent.ConversationOf(st)
	if !ok {
		return st
	}
	conv = chat.NewConversation(conv.ID()).Append(msgs...)
	if s, ok := st.(agent.PostToolsHook); ok && s.PendingRequest.Messages == nil {
		s.PendingRequest.Messages = conv.Messages()
		st = s
	}
	st, _ = agent.WithConversation(st, conv)
	return st
}

// sameMessages reports whether a and b are the same messages in the same
// memory, as a request built from a conversation shares it.
func sameMessages(a, b []chat.Message) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// ThreadState returns the machine's state a thread was saved in, its
// conversation included; nil for a thread that has not started.
func ThreadState(t *threadwire.Thread) (agent.State, error) {
	if len(t.State) == 0 {
		return nil, nil
	}
	b, err := behavior.New(behavior.DefaultConfig())
	if err != nil {
		return nil, err
	}
	m, _, err := load(b, &agent.Recorder{}, t)
	if err != nil {
		return nil, err
	}
	return m.State(), nil
}

// load builds the machine a thread was saved as, with h as its Handler,
// and returns the messages it holds (deferred), oldest first.
func load(b *behavior.Agent, h agent.Handler, t *threadwire.Thread) (*agent.Machine, []*agent.UserInput, error) {
	c := agent.Config{Behavior: b, Handler: h}
	m, err := agent.Load(c, t.State)
	if err != nil {
		return nil, nil, fmt.Errorf("resume thread %s: %w; the thread's journal is damaged", t.ID, err)
	}
	held, err := savedDeferred(t)
	if err != nil {
		return nil, nil, err
	}
	msgs := make([]chat.Message, len(t.Messages))
	for i, raw := range t.Messages {
		if err := json.Unmarshal(raw, &msgs[i]); err != nil {
			return nil, nil, fmt.Errorf("resume thread %s: message %d: %w; the thread's journal is damaged", t.ID, i+1, err)
		}
	}
	if m, err = withDeferred(b, h, dress(m.State(), msgs), held); err != nil {
		return nil, nil, fmt.Errorf("resume thread %s: %w", t.ID, err)
	}
	return m, held, nil
}

// redact replaces every secret in data, raw or encoded.
func (a *Agent) redact(data []byte) []byte { return a.secrets.Bytes(data) }

// Fork starts thread id in the store: a copy of the agent's thread as it
// is now — its conversation, the machine waiting for input — noting the
// thread it was forked from, with an account of tokens of its own (at
// zero) and no event log yet. The agent's own thread is left as it is; the
// copy is resumed like any thread. It returns ErrBusy unless the agent
// waits for input, and an error when the thread has
// not been saved yet (it has no message). Call it only while Run runs,
// from another goroutine (a command).
func (a *Agent) Fork(ctx context.Context, id string) (*threadwire.Thread, error) {
	var (
		fork *threadwire.Thread
		ferr error
	)
	err := a.Do(ctx, func() {
		switch {
		case a.isBusy():
			ferr = ErrBusy
			return
		case a.journal == nil || a.cfg.Store == nil:
			ferr = errors.New("nothing to fork yet: the thread has no message")
			return
		}
		m, err := agent.Restore(agent.Config{Behavior: a.cfg.Behavior, Handler: a},
			agent.WaitingForUserInput{Conversation: chat.NewConversation(id)})
		if err != nil {
			ferr = fmt.Errorf("fork thread %s: %w", a.cfg.Thread.ID, err)
			return
		}
		saved, err := m.Save()
		if err != nil {
			ferr = fmt.Errorf("fork thread %s: %w", a.cfg.Thread.ID, err)
			return
		}
		now := a.now().UTC()
		t := *a.cfg.Thread
		t.ID, t.Created, t.Updated, t.ForkedFrom = id, now, now, a.cfg.Thread.ID
		t.State, t.Messages = a.redact(saved), slices.Clone(a.msgs)
		t.LogChain, t.Ledger = "", chat.Ledger{}
		t.HookNote = a.hookNote // the fork's next message carries it too
		j, err := a.cfg.Store.Create(&t)
		if err != nil {
			ferr = err
			return
		}
		ferr = j.Close()
		fork = &t
	})
	return fork, errors.Join(err, ferr)
}
