// Package threadwire is the coding agent's thread as the agent saves it and
// the server (cmd/server) keeps it: its JSON (Thread, of format Version),
// the IDs threads are named by, the body and reply of a push (PUT
// /api/threads/{id}), and what a list of threads shows of one
// (FirstPrompt). The agent and the server share it and nothing else of
// each other.
package threadwire

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// Version is the format version of threads: 3, the agent's journal of
// records (agent/internal/thread). Versions 1 and 2 were one JSON file
// rewritten whole at every save; they are not read.
const Version = 3

// Thread is one saved conversation with the agent.
type Thread struct {
	// Version is the format version.
	Version int `json:"version"`
	// ID names the thread; the journal is <ID>.journal.
	ID string `json:"id"`
	// Created is when the thread was started.
	Created time.Time `json:"created"`
	// Updated is when the thread was last saved.
	Updated time.Time `json:"updated"`
	// Provider names the LLM provider, e.g. "anthropic".
	Provider string `json:"provider"`
	// Model names the LLM model.
	Model string `json:"model"`
	// Workspace is the absolute directory the agent works in.
	Workspace string `json:"workspace"`
	// ForkedFrom is the thread this one is a copy of (/fork), "" for none.
	ForkedFrom string `json:"forked_from,omitempty"`
	// SubagentOf is the thread whose task tool call ran this one as a
	// subagent; "" for a thread of the user's.
	SubagentOf string `json:"subagent_of,omitempty"`
	// SubagentCall is the ID of that call; "" when SubagentOf is.
	SubagentCall string `json:"subagent_call,omitempty"`
	// FirstPrompt is the first message the user typed in the thread (or
	// in the thread it was forked from), kept when a compaction replaces
	// it by a summary (see NoteFirstPrompt); "" until there is one, and in
	// threads saved before it was kept.
	FirstPrompt string `json:"first_prompt,omitempty"`
	// NoToolCalls is true for a thread whose model does not call tools
	// (agent -tool-calls=false): its replies are read for queries, and it
	// resumes so.
	NoToolCalls bool `json:"no_tool_calls,omitempty"`
	// State is the machine as its generated Save method saves it, with
	// its conversation's messages left out (they are Messages), or empty
	// for a thread that has not started yet.
	State json.RawMessage `json:"state,omitempty"`
	// Messages are the conversation's messages, each as JSON, oldest
	// first. They grow, unless the conversation is cut back (see
	// the journal's Cut).
	Messages []json.RawMessage `json:"messages,omitempty"`
	// QueuedInput holds the user's messages typed while the agent was busy
	// and not yet handed to the machine, oldest first, as the agent before
	// issue 33 queued them. The agent no longer writes it: its machine
	// holds such messages in State (deferred events). It is read, so that
	// the journals of earlier threads load and list (see FirstPrompt), and
	// the agent refuses to resume a thread that still holds some.
	QueuedInput []string `json:"queued_input,omitempty"`
	// HookNote is what the end-of-turn hooks gave after the last reply,
	// which the agent appends to the user's next message (the model reads
	// it then); "" when there is none, and in threads saved before it was
	// kept.
	HookNote string `json:"hook_note,omitempty"`
	// Ledger is the account of the tokens the thread's replies used.
	Ledger chat.Ledger `json:"ledger"`
	// LogChain is the chain value of the last line of the thread's event
	// log when the thread was saved (see agent/internal/eventlog): replay checks
	// that the log still has that line, so that a log cut short or
	// rewritten after it is found out.
	LogChain string `json:"log_chain,omitempty"`
}

// idPattern is what a thread ID may look like: it becomes a file name.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// CheckID reports whether id can name a thread: letters, digits, '.', '_'
// and '-', starting with a letter or digit, at most 128 characters.
func CheckID(id string) error {
	if !idPattern.MatchString(id) {
		return fmt.Errorf("bad thread ID %q: use letters, digits, '.', '_' and '-' only (as printed when the thread started)", id)
	}
	return nil
}

// PushBody is the body of PUT /api/threads/{id}, the contract between the
// agent and the server (cmd/server): the thread as Thread encodes it,
// redacted, and its revision.
type PushBody struct {
	// Revision orders the pushes of one thread: the server applies a push
	// only over an older revision, answers the same revision with the same
	// thread as a success that changes nothing, and refuses an older one
	// (409). The agent uses the thread's Updated time in nanoseconds,
	// raised past the last revision it pushed when the clock went back.
	Revision int64 `json:"revision"`
	// Thread is the Thread, as JSON.
	Thread json.RawMessage `json:"thread"`
}

// PushReply is the server's answer to a push it accepted (200).
type PushReply struct {
	ID       string `json:"id"`
	Revision int64  `json:"revision"`
	// Stored is false when the server held this revision already.
	Stored bool `json:"stored"`
}

// MessageError is what Decode says of a message it cannot read: its index
// in Thread.Messages and the problem.
type MessageError struct {
	Index int
	Err   error
}

func (e *MessageError) Error() string {
	if errors.Is(e.Err, ErrNoRole) {
		return fmt.Sprintf("messages[%d] has no role", e.Index)
	}
	return fmt.Sprintf("messages[%d]: %v", e.Index, e.Err)
}

func (e *MessageError) Unwrap() error { return e.Err }

// ErrNoRole is a MessageError's Err for a message without a role.
var ErrNoRole = errors.New("the message has no role")

// Decode returns t's messages, decoded, or a *MessageError for the first
// that is not a message.
func (t *Thread) Decode() ([]chat.Message, error) {
	msgs := make([]chat.Message, len(t.Messages))
	for i, raw := range t.Messages {
		if err := json.Unmarshal(raw, &msgs[i]); err != nil {
			return nil, &MessageError{Index: i, Err: err}
		}
		if msgs[i].Role == "" {
			return nil, &MessageError{Index: i, Err: ErrNoRole}
		}
	}
	return msgs, nil
}

// FirstPrompt returns what a list of threads shows of a thread: the first
// message the user typed (chat.IsTyped: no note the agent wrote in the
// user's name), or else the first of the input queued, as it is; "" when
// there is neither.
func FirstPrompt(msgs []chat.Message, queued []string) string {
	for _, m := range msgs {
		if chat.IsTyped(m) {
			return m.Content
		}
	}
	if len(queued) > 0 {
		return queued[0]
	}
	return ""
}

// NoteFirstPrompt sets t.FirstPrompt, once, to the first message the user
// typed (see FirstPrompt), cut at MaxFirstPrompt characters, when the
// thread has one. A thread saved before
// the field was kept whose conversation starts with a compaction's
// summary no longer holds its first message: it is left without one.
func (t *Thread) NoteFirstPrompt() {
	if t.FirstPrompt != "" {
		return
	}
	if len(t.Messages) > 0 {
		var m chat.Message
		if json.Unmarshal(t.Messages[0], &m) == nil && m.Summary {
			return
		}
	}
	msgs, err := t.Decode()
	if err != nil {
		return
	}
	first := FirstPrompt(msgs, t.QueuedInput)
	if r := []rune(first); len(r) > MaxFirstPrompt {
		first = string(r[:MaxFirstPrompt-1]) + "…"
	}
	t.FirstPrompt = first
}

// MaxFirstPrompt is how many characters of the first message
// NoteFirstPrompt keeps: enough for a list of threads, little to save
// with every step of a journal.
const MaxFirstPrompt = 200
