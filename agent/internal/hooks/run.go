package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// OutputLimit caps what one hook's output gives the model and the
// screen, its beginning and end kept as a command's are.
const OutputLimit = 16 << 10

// The variables a hook gets, beside its input on standard input.
const (
	// EnvEvent is pre_tool, post_tool or turn_end.
	EnvEvent = "AGENT_HOOK_EVENT"
	// EnvTool is the tool's name (pre_tool, post_tool).
	EnvTool = "AGENT_TOOL_NAME"
	// EnvSession is the thread's ID.
	EnvSession = "AGENT_SESSION"
)

// Input is what a hook reads on its standard input, as one JSON object.
type Input struct {
	// Event is when it runs.
	Event Event `json:"event"`
	// Session is the thread's ID.
	Session string `json:"session,omitempty"`
	// Workspace is the workspace root, the hook's working directory.
	Workspace string `json:"workspace"`
	// Tool, CallID and Arguments are the call's (pre_tool, post_tool):
	// its arguments as the model gave them, a JSON object.
	Tool      string          `json:"tool,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Result is the call's (post_tool).
	Result *Result `json:"result,omitempty"`
	// Reply is the model's last reply of the turn (turn_end).
	Reply string `json:"reply,omitempty"`
}

// Result is a tool call's result as a post_tool hook reads it.
type Result struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error"`
}

// Report is what one hook's run gave.
type Report struct {
	Hook Hook
	// Output is its combined output, redacted and cut at OutputLimit.
	Output string
	// Err is why it failed: a non-zero status, its timeout, the sandbox;
	// nil when it succeeded.
	Err error
	// Took is how long it ran.
	Took time.Duration
}

// String is the report as the model reads it: a header naming the hook
// and how it ended, then its output.
func (r Report) String() string {
	how := "ok"
	if r.Err != nil {
		how = "failed: " + r.Err.Error()
	}
	s := fmt.Sprintf("[%s hook %q (%s) %s]", r.Hook.Event, short(r.Hook.Command, 80), r.Hook.Source, how)
	if out := strings.TrimSpace(r.Output); out != "" && out != "(no output)" {
		s += "\n" + out
	}
	return s
}

// Silent reports whether the hook succeeded and printed nothing: the
// model is then told nothing of it.
func (r Report) Silent() bool {
	out := strings.TrimSpace(r.Output)
	return r.Err == nil && (out == "" || out == "(no output)")
}

// Runner runs the hooks of a session. Its methods are safe for
// concurrent use: the read-only calls of a round run in parallel.
type Runner struct {
	// Hooks are the hooks, in the order they run: the user's, then the
	// project's.
	Hooks []Hook
	// Workspace is the workspace the hooks run in.
	Workspace *tools.Workspace
	// Sandbox runs the hooks of the calls that may change the workspace:
	// bash's, writable where bash may write (read-only in plan mode).
	Sandbox *sandbox.Sandbox
	// ReadOnly runs the hooks of read-only calls and of the turn's end,
	// which nothing notes for the turn's commit: bash's, the workspace
	// read-only.
	ReadOnly *sandbox.Sandbox
	// GitGuard puts back what a hook changed of the workspace's git
	// repositories, as after a bash command; nil: none.
	GitGuard *tools.GitGuard
	// Redactor removes the session's secrets from what a hook is given
	// and what it prints; nil: none.
	Redactor *redact.Redactor
	// Session is the thread's ID, given to the hooks.
	Session string
}

// Of returns the hooks of event that run for the tool name ("" for
// turn_end).
func (r *Runner) Of(event Event, name string) []Hook {
	if r == nil {
		return nil
	}
	var hs []Hook
	for _, h := range r.Hooks {
		if h.Event == event && (event == TurnEnd || h.Matches(name)) {
			hs = append(hs, h)
		}
	}
	return hs
}

// BeforeTool runs the pre_tool hooks of call, in order, and stops at the
// first that fails: refused is then true, and the reports end with it.
// mutating says whether the call may change the workspace: its hooks may
// then write it too (they run after the round's snapshot, so that what
// they change is the turn's), otherwise they see it read-only.
func (r *Runner) BeforeTool(ctx context.Context, call chat.ToolCall, mutating bool, progress func(chat.ToolProgress)) (reports []Report, refused bool) {
	in := Input{Event: PreTool, Tool: call.Name, CallID: call.ID, Arguments: arguments(call)}
	for _, h := range r.Of(PreTool, call.Name) {
		rep := r.run(ctx, h, in, mutating, progress)
		reports = append(reports, rep)
		if rep.Err != nil {
			return reports, true
		}
	}
	return reports, false
}

// AfterTool runs the post_tool hooks of call, which ran with outcome,
// each whatever the one before it gave; it stops when ctx is done.
func (r *Runner) AfterTool(ctx context.Context, call chat.ToolCall, outcome chat.ToolOutcome, mutating bool, progress func(chat.ToolProgress)) []Report {
	in := Input{Event: PostTool, Tool: call.Name, CallID: call.ID, Arguments: arguments(call),
		Result: &Result{Content: outcome.Content, IsError: outcome.IsError}}
	var reports []Report
	for _, h := range r.Of(PostTool, call.Name) {
		if ctx.Err() != nil {
			break
		}
		reports = append(reports, r.run(ctx, h, in, mutating, progress))
	}
	return reports
}

// TurnEnded runs the turn_end hooks, each whatever the one before it
// gave, with the workspace read-only; reply is the turn's last reply.
func (r *Runner) TurnEnded(ctx context.Context, reply string, progress func(chat.ToolProgress)) []Report {
	in := Input{Event: TurnEnd, Reply: reply}
	var reports []Report
	for _, h := range r.Of(TurnEnd, "") {
		if ctx.Err() != nil {
			break
		}
		reports = append(reports, r.run(ctx, h, in, false, progress))
	}
	return reports
}

// run runs hook h with input in, within its timeout and ctx.
func (r *Runner) run(ctx context.Context, h Hook, in Input, writable bool, progress func(chat.ToolProgress)) Report {
	in.Session, in.Workspace = r.Session, r.Workspace.Root()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)               // "a > b" as it is, for jq and grep
	if err := enc.Encode(in); err != nil { // a tool's arguments are a JSON object: it cannot fail
		return Report{Hook: h, Err: fmt.Errorf("encode its input: %w", err)}
	}
	data := buf.Bytes()
	env := map[string]string{EnvEvent: string(h.Event), EnvSession: r.Session}
	if in.Tool != "" {
		env[EnvTool] = in.Tool
	}
	sb := r.ReadOnly
	if writable {
		sb = r.Sandbox
	}
	hctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	start := time.Now()
	var prog func(chat.ToolProgress)
	if progress != nil {
		// How long it has run, never its lines: a tool hook's progress
		// is its call's, whose output lines are the tool's own.
		prog = func(p chat.ToolProgress) {
			progress(chat.ToolProgress{Message: fmt.Sprintf("%s hook %q: %s", h.Event, short(h.Command, 40), p.Message)})
		}
	}
	out, err := tools.RunScript(hctx, r.Workspace, tools.Script{
		Command:     h.Command,
		Stdin:       r.redact(data),
		Env:         r.redactEnv(env),
		Sandbox:     sb,
		OutputLimit: OutputLimit,
		GitGuard:    r.GitGuard,
		Progress:    prog,
	})
	rep := Report{Hook: h, Output: r.redactString(out), Took: time.Since(start)}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		rep.Err = fmt.Errorf("stopped: %w", ctx.Err())
	case errors.Is(hctx.Err(), context.DeadlineExceeded):
		rep.Err = fmt.Errorf("timed out after %s and was stopped; raise its timeout in %s", h.Timeout, h.Source)
	case r.redactString(err.Error()) != err.Error():
		rep.Err = errors.New(r.redactString(err.Error()))
	default:
		rep.Err = err
	}
	return rep
}

// arguments returns call's arguments for a hook's input: the JSON object
// the model gave, or, when it is not one, the text as a JSON string.
func arguments(call chat.ToolCall) json.RawMessage {
	if len(call.Arguments) > 0 && json.Valid(call.Arguments) {
		return call.Arguments
	}
	s, _ := json.Marshal(string(call.Arguments))
	return s
}

// redact returns data without the session's secrets.
func (r *Runner) redact(data []byte) []byte {
	if r.Redactor == nil {
		return data
	}
	return r.Redactor.Bytes(data)
}

// redactString returns s without the session's secrets.
func (r *Runner) redactString(s string) string {
	if r.Redactor == nil {
		return s
	}
	return r.Redactor.String(s)
}

// redactEnv returns env with its values redacted.
func (r *Runner) redactEnv(env map[string]string) map[string]string {
	for k, v := range env {
		env[k] = r.redactString(v)
	}
	return env
}
