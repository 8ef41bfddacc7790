// Package approval decides when the coding agent asks the user before it
// runs a tool call, and carries the question and the answer between the
// call that waits and the input the user types.
//
// The policies are named as Codex names them: [Untrusted] asks before
// every call of a mutating tool (see agent/internal/tools.Mutator), [OnRequest]
// asks when the model asks for it (the mutating tools' schemas then offer
// it the arguments [AskField] and [ReasonField], see [Offer]), and [Never]
// never asks. Calls of read-only tools are never asked about.
//
// A [Gate] holds at most one question at a time: the agent runs the calls
// that may change anything one after another, so their questions come one
// at a time too. The call waits in [Gate.Ask]; the next line the user
// types goes to [Gate.Answer] instead of the model.
package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// Policy says when the user is asked before a tool call runs.
type Policy string

// The policies.
const (
	// Untrusted asks before every call of a mutating tool.
	Untrusted Policy = "untrusted"
	// OnRequest asks when the model sets AskField in a mutating call.
	OnRequest Policy = "on-request"
	// Never never asks: the sandbox and the commits are the safeguards.
	Never Policy = "never"
)

// Policies lists the policies, for usage messages.
var Policies = []Policy{Untrusted, OnRequest, Never}

// ParsePolicy returns the policy s names.
func ParsePolicy(s string) (Policy, error) {
	for _, p := range Policies {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown approval policy %q: use untrusted (ask before every call that may change anything), on-request (the model asks when it wants to) or never", s)
}

// String implements flag.Value.
func (p *Policy) String() string { return string(*p) }

// Set implements flag.Value.
func (p *Policy) Set(s string) error {
	v, err := ParsePolicy(s)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// Asks reports whether the policy may ask the user at all, and so needs a
// terminal to read the answer from.
func (p Policy) Asks() bool { return p == Untrusted || p == OnRequest }

// ShouldAsk reports whether a call is asked about: one of a mutating
// tool, under Untrusted always, under OnRequest when the model asked.
func (p Policy) ShouldAsk(mutating, requested bool) bool {
	switch {
	case !mutating:
		return false
	case p == Untrusted:
		return true
	case p == OnRequest:
		return requested
	}
	return false
}

// The arguments Offer adds to a mutating tool's schema under OnRequest.
const (
	// AskField, true, asks the user to approve the call before it runs.
	AskField = "ask_approval"
	// ReasonField tells the user why the model asks.
	ReasonField = "approval_reason"
)

// Offer returns spec with AskField and ReasonField among its arguments
// and a sentence saying what they do, for a mutating tool under
// OnRequest. A schema that is not a JSON object with "properties" is
// returned as it is, with an error.
func Offer(spec chat.ToolSpec) (chat.ToolSpec, error) {
	var schema map[string]json.RawMessage
	if err := json.Unmarshal(spec.InputSchema, &schema); err != nil {
		return spec, fmt.Errorf("tool %s: its input schema is not a JSON object: %w", spec.Name, err)
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(schema["properties"], &props); err != nil || props == nil {
		return spec, fmt.Errorf("tool %s: its input schema has no \"properties\" object", spec.Name)
	}
	if _, ok := props[AskField]; ok {
		return spec, fmt.Errorf("tool %s already has an argument %q; it cannot be offered approval on request", spec.Name, AskField)
	}
	props[AskField] = json.RawMessage(`{"type": "boolean", "description": "Set to true to have the user approve this call before it runs: for a change that is risky, large, hard to undo or outside what the user asked. The user sees the exact change and may refuse it."}`)
	props[ReasonField] = json.RawMessage(`{"type": "string", "description": "With ask_approval: one sentence telling the user why you ask."}`)
	var err error
	if schema["properties"], err = json.Marshal(props); err != nil {
		return spec, err
	}
	out := spec
	if out.InputSchema, err = json.Marshal(schema); err != nil {
		return spec, err
	}
	out.Description += " Calls run without asking the user; set ask_approval (with approval_reason) when you want the user to approve this one first. A refused call is not run, and its result says so with the user's reason."
	return out, nil
}

// Split takes AskField and ReasonField out of a call's arguments: rest is
// what the tool runs with, requested and reason what the model asked.
// Arguments that are not a JSON object, or hold neither field, are
// returned as they are.
func Split(args json.RawMessage) (rest json.RawMessage, requested bool, reason string) {
	if !bytes.Contains(args, []byte(AskField)) && !bytes.Contains(args, []byte(ReasonField)) {
		return args, false, ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || obj == nil {
		return args, false, ""
	}
	ask, hasAsk := obj[AskField]
	why, hasWhy := obj[ReasonField]
	if !hasAsk && !hasWhy {
		return args, false, ""
	}
	_ = json.Unmarshal(ask, &requested) // not a boolean: not asked
	_ = json.Unmarshal(why, &reason)
	delete(obj, AskField)
	delete(obj, ReasonField)
	rest, err := json.Marshal(obj)
	if err != nil {
		return args, false, ""
	}
	return rest, requested, reason
}

// Verdict is what the user decided about a call. It is recorded with
// the call's outcome (chat.ToolOutcome.Approval), in the thread and the
// event log.
type Verdict = string

// The verdicts.
const (
	// Granted: the call runs.
	Granted Verdict = "granted"
	// Always: the call runs, and so will every call of its tool for the
	// rest of the session, without asking.
	Always Verdict = "always"
	// Refused: the call is not run; the model reads why.
	Refused Verdict = "refused"
)

// Answer is the user's answer to a question.
type Answer struct {
	Verdict Verdict
	// Reason is what the user said with a refusal, for the model.
	Reason string
}

// ParseAnswer reads a line the user typed as an answer: "y" or "yes"
// grants, "a" or "always" grants for the rest of the session, "n" or
// "no" refuses, optionally followed by the reason ("n use sed instead");
// any other text refuses the call with that text as the reason, so that
// what the user says reaches the model.
func ParseAnswer(line string) Answer {
	line = strings.TrimSpace(line)
	word, rest, _ := strings.Cut(line, " ")
	switch strings.ToLower(strings.TrimRight(word, ":,.")) {
	case "y", "yes":
		if rest == "" {
			return Answer{Verdict: Granted}
		}
	case "a", "always":
		if rest == "" {
			return Answer{Verdict: Always}
		}
	case "n", "no":
		return Answer{Verdict: Refused, Reason: strings.TrimSpace(rest)}
	case "":
		return Answer{Verdict: Refused}
	}
	return Answer{Verdict: Refused, Reason: line}
}

// RefusedPrefix starts the outcome of a call the user refused.
const RefusedPrefix = "not run: the user refused this call"

// Refusal returns the outcome of a call the user refused, which the
// model reads: what happened, the user's reason when they gave one, and
// what to do.
func Refusal(reason string) chat.ToolOutcome {
	msg := RefusedPrefix + "; nothing was changed. Do not run it again as it is: ask the user what they want, or take another approach."
	if reason != "" {
		msg = RefusedPrefix + ": " + reason + "; nothing was changed. Follow what the user said."
	}
	return chat.ToolOutcome{Content: msg, IsError: true, Approval: Refused}
}

// Question is a tool call the user is asked to approve.
type Question struct {
	// Call is the call as it will run (without AskField and ReasonField).
	Call chat.ToolCall
	// Reason is why the model asked (OnRequest), "" otherwise.
	Reason string
	// By names who asks when it is not the agent the user talks to: a
	// writing subagent ("subagent ID: DESCRIPTION"); "" for the agent.
	By string
}

// Gate holds the question a call waits on and the tools granted for the
// session. It is safe for concurrent use.
type Gate struct {
	ask     sync.Mutex // held by the call asking: one question at a time
	mu      sync.Mutex // guards the fields below
	pending chan string
	// coming counts the questions asked and not shown yet: a line typed
	// now was typed before the question it would answer was on the
	// screen (see Offer).
	coming int
	always map[string]bool
	closed string // why no more answers come; "" while they may
}

// Use is what Offer did with a line the user typed.
type Use int

// What Offer does with a line.
const (
	// NotAnswer: no question waits; the line is the user's to send
	// elsewhere.
	NotAnswer Use = iota
	// Answered: the line answers the question on the screen.
	Answered
	// TooEarly: a question is on its way to the screen, and the line,
	// typed before it was shown, is dropped: an answer is read only once
	// its question is shown, and a line typed ahead of it is neither its
	// answer nor a message.
	TooEarly
)

// DroppedNotice says that typed, a line Offer found TooEarly, is dropped,
// quoting at most its first 60 characters; then says when to answer
// ("once it is", "now").
func DroppedNotice(typed, then string) string {
	if r := []rune(typed); len(r) > 60 {
		typed = string(r[:60]) + "…"
	}
	return fmt.Sprintf("%q was typed before the question it would answer was shown, and is dropped: answer the question %s", typed, then)
}

// NewGate returns a gate with no question and no tool granted.
func NewGate() *Gate { return &Gate{always: map[string]bool{}} }

// Granted reports whether the user granted every call of tool for the
// session (answered "always").
func (g *Gate) Granted(tool string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.always[tool]
}

// Ask shows the question and waits for the answer to it, or for ctx to
// end. Questions asked at once are asked one after another. Show puts
// the question on the screen, and calls onScreen right before it draws
// it: from then on a line typed is its answer. (Before, while the
// question waits its turn to be drawn, a line is TooEarly; after the
// drawing would be too late: a user, or a program, answering what it
// sees may type before show returns.)
func (g *Gate) Ask(ctx context.Context, tool string, show func(onScreen func())) (Answer, error) {
	g.mu.Lock()
	g.coming++
	g.mu.Unlock()
	shown := false
	defer func() {
		if !shown {
			g.mu.Lock()
			g.coming--
			g.mu.Unlock()
		}
	}()
	g.ask.Lock()
	defer g.ask.Unlock()
	g.mu.Lock()
	switch {
	case g.always[tool]: // granted while this call waited for its turn
		g.mu.Unlock()
		return Answer{Verdict: Always}, nil
	case g.closed != "":
		g.mu.Unlock()
		return Answer{Verdict: Refused, Reason: g.closed}, nil
	}
	ch := make(chan string, 1)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		if g.pending == ch {
			g.pending = nil
		}
		g.mu.Unlock()
	}()
	// Only once the question is on the screen is a line typed its
	// answer (when show returns without drawing it, from then on).
	onScreen := func() {
		g.mu.Lock()
		if !shown {
			g.pending, g.coming, shown = ch, g.coming-1, true
		}
		g.mu.Unlock()
	}
	show(onScreen)
	onScreen()
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed != "" {
		return Answer{Verdict: Refused, Reason: closed}, nil
	}
	select {
	case line := <-ch:
		a := ParseAnswer(line)
		if a.Verdict == Always {
			g.mu.Lock()
			g.always[tool] = true
			g.mu.Unlock()
		}
		return a, nil
	case <-ctx.Done():
		return Answer{}, ctx.Err()
	}
}

// Close says no more answers will come (the user's input ended): the
// question waiting, and every later one, is refused with why as the
// reason.
func (g *Gate) Close(why string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = why
	if g.pending != nil {
		g.pending <- "n " + why
		g.pending = nil
	}
}

// Waiting reports whether a question waits for its answer.
func (g *Gate) Waiting() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pending != nil
}

// Answer gives line, which the user typed, to the question waiting, and
// reports whether there was one; without one, line is the user's to
// send elsewhere.
func (g *Gate) Answer(line string) bool { return g.Offer(line) == Answered }

// Offer gives line, which the user typed, to the question on the screen
// (Answered), drops it when a question is on its way there (TooEarly),
// or leaves it to the caller (NotAnswer).
func (g *Gate) Offer(line string) Use {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.pending != nil:
		g.pending <- line // buffered, and taken away once answered
		g.pending = nil
		return Answered
	case g.coming > 0:
		return TooEarly
	}
	return NotAnswer
}
