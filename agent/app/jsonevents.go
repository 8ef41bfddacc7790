package app

import (
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/approval"
	"github.com/fsmgen/fsmgen/agent/internal/autocommit"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
)

// jsonEvents writes what "agent -p PROMPT -json" prints: one JSON object
// a line, each as it happens, the result last (see docs/agent.md, "JSON
// output"). Every line goes through the session's redaction before it is
// written, on top of the redaction of what the agent was given.
type jsonEvents struct {
	mu  sync.Mutex
	out io.Writer
	red *redact.Redactor
}

// The events' types, the "type" field of each line.
const (
	evStart        = "start"
	evText         = "text"
	evReply        = "reply"
	evToolCall     = "tool_call"
	evToolProgress = "tool_progress"
	evToolResult   = "tool_result"
	evCommit       = "commit"
	evRetry        = "retry"
	evApproval     = "approval"
	evNotice       = "notice"
	evError        = "error"
	evResult       = "result"
)

// startEvent opens the stream: which thread, where, with which model.
type startEvent struct {
	Type      string `json:"type"`
	Session   string `json:"session"`
	Provider  string `json:"provider"`
	Model     string `json:"model"`
	Workspace string `json:"workspace"`
	Mode      string `json:"mode"`
}

// textEvent is a piece of the reply as it streams in (text), or a reply
// whole once it is complete (reply).
type textEvent struct {
	Type string `json:"type"`
	Text string `json:"text"`
	// Continued marks a reply cut at its token limit, which the next
	// reply continues (reply only).
	Continued bool `json:"continued,omitempty"`
	// ToolCalls counts the tools the reply asks for (reply only).
	ToolCalls int `json:"tool_calls,omitempty"`
}

// toolEvent is a tool call about to run, its progress, or its result.
type toolEvent struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments are the call's arguments (tool_call, approval).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Message and Fraction say how far a running tool has come; Lines
	// counts the lines a running command has printed, Output is its last
	// ones (tool_progress).
	Message  string  `json:"message,omitempty"`
	Fraction float64 `json:"fraction,omitempty"`
	Lines    int64   `json:"lines,omitempty"`
	Output   string  `json:"output,omitempty"`
	// Content and IsError are the outcome (tool_result).
	Content string `json:"content,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
	// Reason is why the model asks for the call (approval).
	Reason string `json:"reason,omitempty"`
	// By names the subagent that asks (approval): "subagent ID:
	// DESCRIPTION"; absent for the agent's own calls.
	By string `json:"by,omitempty"`
}

// commitEvent is what the auto-commit did after a round of tools.
type commitEvent struct {
	Type      string `json:"type"`
	Committed bool   `json:"committed"`
	Commit    string `json:"commit,omitempty"`
	Branch    string `json:"branch,omitempty"`
	Subject   string `json:"subject,omitempty"`
	Skipped   string `json:"skipped,omitempty"`
	// NotCommitted are the files left out, each with why.
	NotCommitted []leftOut `json:"not_committed,omitempty"`
	Error        string    `json:"error,omitempty"`
}

// leftOut is a file a commit left out, and why.
type leftOut struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// retryEvent says a failed LLM request is tried again.
type retryEvent struct {
	Type    string `json:"type"`
	Attempt int    `json:"attempt"`
	DelayMS int64  `json:"delay_ms"`
	Error   string `json:"error"`
}

// messageEvent is a notice of the agent's or an error the turn ended with.
type messageEvent struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// resultEvent is the last line: oneShotResult with its type.
type resultEvent struct {
	Type string `json:"type"`
	oneShotResult
}

// emit writes v as one line, redacted. What cannot be marshalled (no
// event type can fail) is dropped rather than written half.
func (j *jsonEvents) emit(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	b = j.red.Bytes(b)
	j.mu.Lock()
	defer j.mu.Unlock()
	_, _ = j.out.Write(append(b, '\n'))
}

// The terminal's methods call these when the run writes JSON events; each
// is a no-op otherwise.

func (j *jsonEvents) text(delta string) {
	if j != nil && delta != "" {
		j.emit(textEvent{Type: evText, Text: delta})
	}
}

func (j *jsonEvents) reply(msg chat.Message, continued bool) {
	if j != nil {
		j.emit(textEvent{Type: evReply, Text: msg.Content, Continued: continued, ToolCalls: len(msg.ToolCalls)})
	}
}

func (j *jsonEvents) toolCall(call chat.ToolCall) {
	if j != nil {
		j.emit(toolEvent{Type: evToolCall, ID: call.ID, Name: call.Name, Arguments: jsonArgs(call.Arguments)})
	}
}

func (j *jsonEvents) toolProgress(call chat.ToolCall, p chat.ToolProgress) {
	if j != nil {
		j.emit(toolEvent{Type: evToolProgress, ID: call.ID, Name: call.Name, Message: p.Message,
			Fraction: p.Fraction, Lines: p.UnitsProcessed, Output: p.Output})
	}
}

func (j *jsonEvents) toolResult(call chat.ToolCall, out chat.ToolOutcome) {
	if j != nil {
		j.emit(toolEvent{Type: evToolResult, ID: call.ID, Name: call.Name, Content: out.Content, IsError: out.IsError})
	}
}

func (j *jsonEvents) ask(q approval.Question) {
	if j != nil {
		j.emit(toolEvent{Type: evApproval, ID: q.Call.ID, Name: q.Call.Name, Arguments: jsonArgs(q.Call.Arguments), Reason: q.Reason, By: q.By})
	}
}

func (j *jsonEvents) hook(res autocommit.Result, err error) {
	if j == nil || (err == nil && res.Skipped == autocommit.SkippedRecorded) {
		return // a round's changes, committed when the turn ends
	}
	ev := commitEvent{Type: evCommit, Committed: res.Committed, Commit: res.Commit, Branch: res.Branch, Skipped: string(res.Skipped)}
	ev.Subject, _, _ = strings.Cut(res.Message, "\n")
	for _, left := range []struct {
		paths  []string
		reason string
	}{
		{res.Withheld, autocommit.SecretReason},
		{res.Repositories, autocommit.RepositoryReason},
		{res.TooLarge, autocommit.TooLargeReason},
		{res.Mixed, autocommit.MixedReason},
	} {
		for _, p := range left.paths {
			ev.NotCommitted = append(ev.NotCommitted, leftOut{Path: p, Reason: left.reason})
		}
	}
	if err != nil {
		ev.Error = err.Error()
	}
	j.emit(ev)
}

func (j *jsonEvents) retry(attempt int, delay time.Duration, err chat.LLMError) {
	if j != nil {
		j.emit(retryEvent{Type: evRetry, Attempt: attempt, DelayMS: delay.Milliseconds(), Error: err.Error()})
	}
}

func (j *jsonEvents) message(typ, msg string) {
	if j != nil {
		j.emit(messageEvent{Type: typ, Message: msg})
	}
}

// jsonArgs is a call's arguments as JSON: as they are when they are
// valid JSON, as a JSON string when not (the model may send anything).
func jsonArgs(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	if json.Valid(raw) {
		return raw
	}
	b, _ := json.Marshal(string(raw)) // a string: cannot fail
	return b
}
