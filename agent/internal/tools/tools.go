// Package tools implements the coding agent's tools — read_file, list_files,
// edit_file and bash, and task, whose runner the caller gives (a subagent:
// see [Task]) — and [Set], which runs one tool call to completion with a
// per-tool timeout, cancellation and progress reports.
//
// The file tools are confined to a [Workspace]: a path that leads outside
// it, lexically or through a symbolic link, is refused. The bash tool runs
// with the workspace root as its working directory, confined by a
// [sandbox.Sandbox] (bubblewrap by default: writes only in the workspace, no
// network, secrets hidden, every process it started killed when it ends).
//
// A [GitGuard], given to the bash tool, puts back after every command what
// it changed of the workspace's git repositories other than its own .git.
//
// A tool may carry its own approval setting and say that it only reads
// ([Approvable]; the MCP servers' tools do, as their config entries say):
// [Set.Approval] returns it for the code that asks the user before a call.
//
// Every failure of a call — an unknown tool, bad arguments, a tool error, a
// panic, a timeout, a cancellation — becomes a [chat.ToolOutcome] with
// IsError set, written for the LLM to read and act on.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
)

// Tool is one tool the LLM can call.
type Tool interface {
	// Spec describes the tool to the LLM: its name, what it does, and the
	// JSON Schema of its arguments.
	Spec() chat.ToolSpec
	// Run runs the tool with the JSON object of arguments the LLM wrote.
	// It must return promptly once ctx is done. progress, which is never
	// nil, may be called from any goroutine while Run runs, never after.
	// When Run returns an error, the output it returns with it (possibly
	// empty) is shown to the LLM after the error text.
	Run(ctx context.Context, args json.RawMessage, progress func(chat.ToolProgress)) (string, error)
}

// Mutator is implemented by a tool that says whether its calls may change
// anything (files, the world outside): the agent asks the user before
// such calls under an approval policy that asks (see agent/internal/approval),
// runs them one after another, and commits what they changed. A tool that
// does not implement Mutator counts as mutating: read-only must be said.
type Mutator interface {
	// Mutating reports whether the tool's calls may change anything.
	Mutating() bool
}

// Mutating reports whether t's calls may change anything (see [Mutator]).
func Mutating(t Tool) bool {
	m, ok := t.(Mutator)
	return !ok || m.Mutating()
}

// Defaults for [Options].
const (
	DefaultTimeout         = 2 * time.Minute
	DefaultBashOutputLimit = 64 << 10
	DefaultProgressEvery   = 2 * time.Second
	// OutputEvery is how often a running bash command's new output is
	// reported (see chat.ToolProgress.Output); a command that prints
	// nothing reports every ProgressEvery.
	OutputEvery = 250 * time.Millisecond
	// OutputLines is how many of a running command's last lines a
	// progress report holds.
	OutputLines = 5
)

// abandonGrace is how long Set.Run waits, once a call's context is done, for
// a tool that does not return before it gives up on it.
const abandonGrace = 5 * time.Second

// Options configures a [Set]. The zero value gives the defaults.
type Options struct {
	// Timeout limits each tool call; 0 means DefaultTimeout.
	Timeout time.Duration
	// BashOutputLimit caps the bytes of output the bash tool returns;
	// 0 means DefaultBashOutputLimit.
	BashOutputLimit int
	// ProgressEvery is how often a running bash command reports progress;
	// 0 means DefaultProgressEvery.
	ProgressEvery time.Duration
	// Logger receives debug records of every call and warnings for panics
	// and timeouts; nil discards them.
	Logger *slog.Logger
	// MaxArgBytes caps the size of a call's JSON arguments: a larger call is
	// refused, without being decoded, with an error saying the size and the
	// limit; 0 means DefaultMaxArgBytes.
	MaxArgBytes int
	// MaxEditBytes is the largest file edit_file edits; a larger file is
	// refused with a hint to use bash; 0 means DefaultMaxEditBytes.
	MaxEditBytes int64
	// Sandbox confines the bash tool's commands; nil means a sandbox with
	// the default options (mode auto), detected at the first call.
	Sandbox *sandbox.Sandbox
	// GitGuard, when set, puts back what a bash command changed of the
	// workspace's git repositories (see [GitGuard]).
	GitGuard *GitGuard
	// Search adds search_files (see [SearchFiles]) to the default set:
	// the agent runs the search queries of a model without tool calling
	// with it (see agent/internal/query).
	Search bool
}

// withDefaults returns o with zero fields replaced by their defaults.
func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.BashOutputLimit <= 0 {
		o.BashOutputLimit = DefaultBashOutputLimit
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = DefaultProgressEvery
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Set is the agent's tools with a per-tool timeout. It is safe for
// concurrent use: the agent runs the calls of one round in parallel.
type Set struct {
	tools   map[string]Tool
	names   []string // sorted
	timeout time.Duration
	grace   time.Duration
	log     *slog.Logger
	maxArgs int // Options.MaxArgBytes; 0 means DefaultMaxArgBytes
	// refused are tools not offered whose calls are answered with the
	// reason given (see Refuse), by name.
	refused map[string]string
}

// Default returns the agent's standard tools — read_file, list_files,
// edit_file and bash, and search_files with Options.Search — working in
// ws.
func Default(ws *Workspace, opt Options) *Set {
	opt = opt.withDefaults()
	set := []Tool{
		ReadFile(ws),
		ListFiles(ws),
		EditFile(ws, EditOptions{MaxBytes: opt.MaxEditBytes}),
		Bash(ws, BashOptions{OutputLimit: opt.BashOutputLimit, ProgressEvery: opt.ProgressEvery, Sandbox: opt.Sandbox, GitGuard: opt.GitGuard}),
	}
	if opt.Search {
		set = append(set, SearchFiles(ws))
	}
	s, err := NewSet(opt, set...)
	if err != nil {
		panic(fmt.Sprintf("tools: the default set is inconsistent: %v", err)) // a bug in this package
	}
	return s
}

// NewSet returns a set of the given tools. Tool names must be non-empty and
// distinct.
func NewSet(opt Options, tools ...Tool) (*Set, error) {
	opt = opt.withDefaults()
	s := &Set{
		tools:   make(map[string]Tool, len(tools)),
		timeout: opt.Timeout,
		grace:   abandonGrace,
		log:     opt.Logger,
		maxArgs: opt.MaxArgBytes,
	}
	if err := s.add(tools); err != nil {
		return nil, err
	}
	return s, nil
}

// add adds tools to s, keeping its names sorted; their names must be
// non-empty and not in s yet.
func (s *Set) add(tools []Tool) error {
	for _, t := range tools {
		name := t.Spec().Name
		if name == "" {
			return errors.New("a tool has an empty name; give every tool a name")
		}
		if _, dup := s.tools[name]; dup {
			return fmt.Errorf("two tools are named %q; give each tool its own name", name)
		}
		s.tools[name] = t
		s.names = append(s.names, name)
	}
	slices.Sort(s.names)
	return nil
}

// Refuse returns a set without the named tools: they are not offered
// (Names, Specs) and a call of one is not run but answered with an error
// holding why, e.g. "plan mode: edit_file is not available". Names the
// set does not hold are refused all the same.
func (s *Set) Refuse(why string, names ...string) *Set {
	r := *s
	r.tools = maps.Clone(s.tools)
	r.refused = maps.Clone(s.refused)
	if r.refused == nil {
		r.refused = map[string]string{}
	}
	for _, n := range names {
		delete(r.tools, n)
		r.refused[n] = why
	}
	r.names = slices.DeleteFunc(slices.Clone(s.names), func(n string) bool { _, gone := r.refused[n]; return gone })
	return &r
}

// Mutating reports whether the calls of the tool name may change
// anything (see [Mutator]); false for a tool the set does not run.
func (s *Set) Mutating(name string) bool {
	t, ok := s.tools[name]
	return ok && Mutating(t)
}

// MutatingNames returns the names of the set's mutating tools, sorted.
func (s *Set) MutatingNames() []string {
	return slices.DeleteFunc(s.Names(), func(n string) bool { return !s.Mutating(n) })
}

// Timeout returns how long one call may run (Options.Timeout).
func (s *Set) Timeout() time.Duration { return s.timeout }

// Names returns the tools' names, sorted.
func (s *Set) Names() []string { return slices.Clone(s.names) }

// Specs returns the tools' specs, sorted by name.
func (s *Set) Specs() []chat.ToolSpec {
	specs := make([]chat.ToolSpec, 0, len(s.names))
	for _, n := range s.names {
		specs = append(specs, s.tools[n].Spec())
	}
	return specs
}

// result is what a tool's goroutine hands back to Run.
type result struct {
	out string
	err error
}

// DefaultMaxArgBytes is the default of Options.MaxArgBytes: 1 MiB.
const DefaultMaxArgBytes = 1 << 20

// Run runs one call to completion and never panics. An unknown tool,
// arguments over Options.MaxArgBytes (refused before they are decoded), bad
// JSON arguments, a tool error, a panic inside the tool, the timeout and the
// cancellation of ctx all become an outcome with IsError set and a message
// saying what went wrong.
//
// progress, which may be nil, receives the tool's progress reports; it may
// be called from another goroutine, and never after Run returns. A tool
// that ignores its context is abandoned a few seconds after the timeout so
// that Run still returns.
func (s *Set) Run(ctx context.Context, call chat.ToolCall, progress func(chat.ToolProgress)) chat.ToolOutcome {
	start := time.Now()
	log := s.log.With("tool", call.Name, "call_id", call.ID)
	if why, ok := s.refused[call.Name]; ok {
		log.Debug("refused tool requested")
		return errorOutcome(fmt.Sprintf("%s was not run: %s", call.Name, why), "")
	}
	tool, ok := s.tools[call.Name]
	if !ok {
		log.Debug("unknown tool requested") // the result says so; shown with it
		return errorOutcome(fmt.Sprintf("unknown tool %q; use one of: %s", call.Name, strings.Join(s.names, ", ")), "")
	}
	limit := s.maxArgs
	if limit <= 0 {
		limit = DefaultMaxArgBytes
	}
	if n := len(call.Arguments); n > limit {
		log.Debug("tool arguments over the limit", "bytes", n, "limit", limit)
		return errorOutcome(fmt.Sprintf("the arguments of this %s call are %s, over the limit of %s, so the call was not run; "+
			"make the change in smaller steps (several edit_file calls with shorter old_str and new_str, or bash)",
			call.Name, sizeString(int64(n)), sizeString(int64(limit))), "")
	}
	if err := ctx.Err(); err != nil {
		return errorOutcome(fmt.Sprintf("tool %s was not run: %v", call.Name, err), "")
	}

	tctx, cancel := context.WithTimeout(withCall(ctx, call), s.timeout)
	defer cancel()
	guard := newProgressGuard(progress)
	defer guard.close()

	done := make(chan result, 1) // buffered: an abandoned tool can still finish
	go func() {
		defer func() {
			if r := recover(); r != nil {
				log.Warn("tool panicked", "panic", r, "stack", string(debug.Stack()))
				done <- result{err: fmt.Errorf("tool %s crashed (panic: %v); this is a bug in the tool, try another approach", call.Name, r)}
			}
		}()
		out, err := tool.Run(tctx, call.Arguments, guard.report)
		done <- result{out: out, err: err}
	}()

	var res result
	select {
	case res = <-done:
	case <-tctx.Done():
		grace := time.NewTimer(s.grace)
		select {
		case res = <-done:
			grace.Stop()
		case <-grace.C:
			log.Warn("tool ignored its context and was abandoned", "grace", s.grace)
			return errorOutcome(fmt.Sprintf("tool %s did not stop within %s of being told to (%v) and was abandoned; it may still be running, so check its effects before trying again",
				call.Name, s.grace, context.Cause(tctx)), "")
		}
	}

	log.Debug("tool finished", "elapsed", time.Since(start), "error", res.err)
	if res.err == nil {
		return chat.ToolOutcome{Content: res.out}
	}
	msg := res.err.Error()
	var why string
	switch {
	case ctx.Err() != nil:
		why = fmt.Sprintf("tool %s was cancelled (%v)", call.Name, context.Cause(ctx))
	case errors.Is(tctx.Err(), context.DeadlineExceeded):
		log.Debug("tool timed out", "timeout", s.timeout)
		why = timeoutMessage(call, s.timeout)
	}
	if why != "" {
		if msg == context.Canceled.Error() || msg == context.DeadlineExceeded.Error() {
			msg = why
		} else {
			msg = why + ": " + msg
		}
	}
	return errorOutcome(msg, res.out)
}

// errorOutcome is a failed call's outcome: the message, then any output.
func errorOutcome(msg, out string) chat.ToolOutcome {
	if out != "" {
		msg += "\n\n" + out
	}
	return chat.ToolOutcome{Content: msg, IsError: true}
}

// progressGuard forwards progress reports until it is closed, so that a
// tool's late reports never reach the caller after Run has returned.
type progressGuard struct {
	mu     sync.Mutex
	fn     func(chat.ToolProgress)
	closed bool
}

// newProgressGuard returns a guard forwarding to fn, which may be nil.
func newProgressGuard(fn func(chat.ToolProgress)) *progressGuard {
	return &progressGuard{fn: fn}
}

// report forwards p unless the guard is closed.
func (g *progressGuard) report(p chat.ToolProgress) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || g.fn == nil {
		return
	}
	g.fn(p)
}

// close stops forwarding; it waits for a report in flight to finish.
func (g *progressGuard) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// decodeArgs decodes a tool's JSON arguments into dst, a pointer to a
// struct, refusing unknown fields, non-objects and trailing data. Missing
// or null arguments count as the empty object. usage describes the expected
// object for the error message.
func decodeArgs(raw json.RawMessage, dst any, usage string) error {
	data := bytes.TrimSpace(raw)
	if len(data) == 0 || string(data) == "null" {
		data = []byte("{}")
	}
	if data[0] != '{' {
		return fmt.Errorf("invalid arguments: expected a JSON object like %s", usage)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("invalid arguments: %w; expected a JSON object like %s", err, usage)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("invalid arguments: extra data after the JSON object; expected a single object like %s", usage)
	}
	return nil
}

// missingArg is the error for a required argument that was not given.
func missingArg(name, usage string) error {
	return fmt.Errorf("invalid arguments: missing required field %q; expected a JSON object like %s", name, usage)
}

// timeoutMessage says what timed out (a command by its text), after how
// long, and what the user can change: the limit is the agent's
// -tool-timeout flag, which only the user sets.
func timeoutMessage(call chat.ToolCall, limit time.Duration) string {
	what := "tool " + call.Name
	var args struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(call.Arguments, &args) == nil && args.Command != "" {
		cmd := strings.Join(strings.Fields(args.Command), " ")
		if r := []rune(cmd); len(r) > 80 {
			cmd = string(r[:80]) + "…"
		}
		what = fmt.Sprintf("%s command %q", call.Name, cmd)
	}
	return fmt.Sprintf("%s timed out after %s, the time limit of one tool call, and was stopped; "+
		"the user can raise the limit with the agent's -tool-timeout flag (e.g. -tool-timeout 10m); "+
		"otherwise do less in one call (one package, one test, a build before its tests)", what, limit)
}
