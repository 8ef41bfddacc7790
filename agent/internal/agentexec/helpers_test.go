package agentexec_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/approval"
	"github.com/fsmgen/fsmgen/agent/internal/autocommit"
	"github.com/fsmgen/fsmgen/agent/internal/eventlog"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/agent/internal/query"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/gittest"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// testKey is the API key of every test; it must never be written anywhere.
const testKey = "sk-test-SECRET-KEY-5f4e3d2c1b0a"

// runTimeout bounds one run of the agent, so that a bug fails a test
// rather than hanging it.
const runTimeout = 30 * time.Second

// providers are the wire formats every end-to-end test runs against.
var providers = []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI}

// retry is one retry the display was told about.
type retry struct {
	Attempt int
	Delay   time.Duration
	Kind    chat.ErrorKind
}

// recorder is a Display that records what it is shown. Its hooks run on
// the loop goroutine, like the display itself.
type recorder struct {
	mu       sync.Mutex
	text     strings.Builder
	replies  []string
	calls    []string
	progress []string
	results  map[string]chat.ToolOutcome
	hooks    []autocommit.Result
	retries  []retry
	errors   []string
	notices  []string
	usage    []chat.Ledger
	turns    int
	// shown lists, in order, the replies ("reply"), tool calls ("call
	// NAME"), results ("result NAME"), hooks ("hook") and turn ends ("turn
	// end") shown.
	shown []string

	onText       func()
	onRetry      func()
	onToolResult func(call chat.ToolCall)
	onNotice     func(msg string)
	onTurnEnd    func()
	// asked are the questions shown (see Ask); onAsk is called after each.
	asked []approval.Question
	onAsk func(q approval.Question)
}

// Ask implements agentexec.Display.
func (r *recorder) Ask(q approval.Question) {
	r.mu.Lock()
	r.asked = append(r.asked, q)
	r.shown = append(r.shown, "ask "+q.Call.Name)
	r.mu.Unlock()
	if r.onAsk != nil {
		r.onAsk(q)
	}
}

var _ agentexec.Display = (*recorder)(nil)

// Text implements agentexec.Display.
func (r *recorder) Text(delta string) {
	r.mu.Lock()
	r.text.WriteString(delta)
	r.mu.Unlock()
	if r.onText != nil {
		r.onText()
	}
}

// Reply implements agentexec.Display.
func (r *recorder) Reply(msg chat.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.replies = append(r.replies, msg.Content)
	r.shown = append(r.shown, "reply")
}

// ToolCall implements agentexec.Display.
func (r *recorder) ToolCall(call chat.ToolCall) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call.Name)
	r.shown = append(r.shown, "call "+call.Name)
}

// ToolProgress implements agentexec.Display.
func (r *recorder) ToolProgress(call chat.ToolCall, p chat.ToolProgress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.progress = append(r.progress, call.Name+": "+p.Message)
}

// ToolResult implements agentexec.Display.
func (r *recorder) ToolResult(call chat.ToolCall, out chat.ToolOutcome) {
	r.mu.Lock()
	if r.results == nil {
		r.results = map[string]chat.ToolOutcome{}
	}
	r.results[call.Name] = out
	r.shown = append(r.shown, "result "+call.Name)
	r.mu.Unlock()
	if r.onToolResult != nil {
		r.onToolResult(call)
	}
}

// Hook implements agentexec.Display.
func (r *recorder) Hook(res autocommit.Result, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		res.Skipped = "error: " + err.Error()
	}
	r.hooks = append(r.hooks, res)
	r.shown = append(r.shown, "hook")
}

// Retry implements agentexec.Display.
func (r *recorder) Retry(attempt int, delay time.Duration, err chat.LLMError) {
	r.mu.Lock()
	r.retries = append(r.retries, retry{Attempt: attempt, Delay: delay, Kind: err.Kind})
	r.mu.Unlock()
	if r.onRetry != nil {
		r.onRetry()
	}
}

// Error implements agentexec.Display.
func (r *recorder) Error(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, msg)
}

// Notice implements agentexec.Display.
func (r *recorder) Notice(msg string) {
	r.mu.Lock()
	r.notices = append(r.notices, msg)
	r.mu.Unlock()
	if r.onNotice != nil {
		r.onNotice(msg)
	}
}

// Usage implements agentexec.Display.
func (r *recorder) Usage(l chat.Ledger) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.usage = append(r.usage, l)
}

// TurnEnd implements agentexec.Display.
func (r *recorder) TurnEnd() {
	r.mu.Lock()
	r.turns++
	r.shown = append(r.shown, "turn end")
	r.mu.Unlock()
	if r.onTurnEnd != nil {
		r.onTurnEnd()
	}
}

// session is an agent working in a temporary git repository against a
// fake LLM server, with its threads and event log in temporary files.
type session struct {
	srv      *fakellm.Server
	provider fakellm.Provider
	ws       string
	store    *thread.Store
	id       string
	logPath  string
}

// newSession starts a fake server of provider with the replies and makes
// a repository holding files.
func newSession(t *testing.T, provider fakellm.Provider, files map[string]string, replies ...fakellm.Reply) *session {
	t.Helper()
	store, err := thread.NewStore(filepath.Join(t.TempDir(), "threads"))
	require.NoError(t, err)
	s := &session{
		srv:      fakellm.New(t, provider, replies...),
		provider: provider,
		ws:       gittest.NewRepo(t, files),
		store:    store,
		id:       thread.NewID(time.Now()),
	}
	s.logPath = filepath.Join(store.Dir(), s.id+".events.jsonl")
	t.Cleanup(func() {
		if u := s.srv.Unexpected(); len(u) > 0 {
			t.Errorf("the agent made requests the test did not expect: %v", u)
		}
	})
	return s
}

// run holds what one run of the agent is given; zero fields get defaults.
type run struct {
	// bcfg changes the behaviour's configuration: the test's defaults
	// (behavior.DefaultConfig, the model "fake-model", retries after 1ms,
	// the tools' specs).
	bcfg    func(c *behavior.Config)
	tools   agentexec.ToolRunner
	display *recorder
	commits agentexec.Committer
	prompt  string
	input   io.Reader
	signals []os.Signal
	// interrupts stop the turn (see Config.Interrupts).
	interrupts []os.Signal
	// commands runs the slash commands, with the agent at hand.
	commands func(ctx context.Context, a *agentexec.Agent, line string)
	limits   agentexec.Limits
	// continueTurn is Config.ContinueTurn: a resumed turn goes on by itself.
	continueTurn bool
	// provider replaces the session's fake server.
	provider llm.Provider
	// saved is Config.Saved.
	saved func(t *threadwire.Thread)
	// approval is Config.Approval.
	approval approval.Policy
	// queries is Config.Queries: the replies are read for queries.
	queries query.Strategy
}

// defaultTools returns the standard tools working in the session's workspace.
func (s *session) defaultTools(t *testing.T) *tools.Set {
	t.Helper()
	ws, err := tools.NewWorkspace(s.ws)
	require.NoError(t, err)
	return tools.Default(ws, tools.Options{Timeout: 10 * time.Second})
}

// specs returns the specs of tools offered by r, or the default ones.
func specsOf(r agentexec.ToolRunner) []chat.ToolSpec {
	if set, ok := r.(interface{ Specs() []chat.ToolSpec }); ok {
		return set.Specs()
	}
	return nil
}

// run runs the agent on the session's thread (new, or saved by an
// earlier run) until it stops.
func (s *session) run(t *testing.T, r run) (agentexec.Result, error) {
	t.Helper()
	if r.tools == nil {
		r.tools = s.defaultTools(t)
	}
	if r.display == nil {
		r.display = &recorder{}
	}
	if r.commits == nil {
		c, err := autocommit.Open(context.Background(), s.ws, autocommit.Options{})
		require.NoError(t, err)
		r.commits = c
	}
	bcfg := behavior.DefaultConfig()
	bcfg.Model = "fake-model"
	bcfg.BaseDelay = time.Millisecond
	bcfg.Tools = specsOf(r.tools)
	bcfg.System = "You are a test."
	if r.bcfg != nil {
		r.bcfg(&bcfg)
	}
	b, err := behavior.New(bcfg)
	require.NoError(t, err)

	th, journal, err := s.store.Open(s.id)
	if err != nil {
		require.ErrorIs(t, err, thread.ErrNotFound)
		th = &threadwire.Thread{Version: threadwire.Version, ID: s.id, Created: time.Now(), Provider: string(s.provider), Model: bcfg.Model, Workspace: s.ws}
	}
	provider := r.provider
	if provider == nil {
		provider, err = llm.New(string(s.provider), llm.Config{APIKey: testKey, BaseURL: s.srv.BaseURL()})
		require.NoError(t, err)
	}
	elog, err := eventlog.Open(s.logPath)
	require.NoError(t, err)
	cfg := agentexec.Config{
		Behavior:   b,
		Provider:   provider,
		Tools:      r.tools,
		Workspace:  s.ws,
		Committer:  r.commits,
		Display:    r.display,
		Thread:     th,
		Store:      s.store,
		Journal:    journal,
		EventLog:   elog,
		Secrets:    []string{testKey},
		Prompt:     r.prompt,
		Signals:    r.signals,
		Interrupts: r.interrupts,
		Limits:     r.limits,

		ContinueTurn: r.continueTurn,
		Saved:        r.saved,
		Approval:     r.approval,
		Queries:      r.queries,
	}
	if r.input != nil {
		cfg.Input = r.input
	}
	var a *agentexec.Agent
	if r.commands != nil {
		cfg.Commands = func(ctx context.Context, line string) { r.commands(ctx, a, line) }
	}
	a, err = agentexec.New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	res, err := a.Run(ctx)
	require.NoError(t, elog.Close())
	if j := a.Journal(); j != nil {
		require.NoError(t, j.Close())
	}
	require.NoError(t, ctx.Err(), "the agent did not stop in time")
	return res, err
}

// thread loads the session's saved thread.
func (s *session) thread(t *testing.T) *threadwire.Thread {
	t.Helper()
	th, err := s.store.Load(s.id)
	require.NoError(t, err)
	return th
}

// state decodes the machine state the thread was saved in.
func (s *session) state(t *testing.T) agent.State {
	t.Helper()
	st, err := agentexec.ThreadState(s.thread(t))
	require.NoError(t, err)
	return st
}

// conversation returns the saved conversation as role: text lines.
func (s *session) conversation(t *testing.T) []string {
	t.Helper()
	st := s.state(t)
	c, ok := agent.ConversationOf(st)
	require.True(t, ok, "unexpected state %T", st)
	var out []string
	for _, m := range c.Messages() {
		out = append(out, describe(m))
	}
	return out
}

// describe renders a message on one line for comparisons.
func describe(m chat.Message) string {
	s := string(m.Role) + ": " + m.Content
	for _, tc := range m.ToolCalls {
		s += fmt.Sprintf(" [%s %s]", tc.Name, tc.Arguments)
	}
	if m.IsError {
		s += " (error)"
	}
	return s
}

// checkReplay replays the session's event log and fails unless it is exact.
func (s *session) checkReplay(t *testing.T) eventlog.Report {
	t.Helper()
	f, err := os.Open(s.logPath)
	require.NoError(t, err)
	defer f.Close()
	rep, err := agentexec.ReplayAgent(f)
	require.NoError(t, err)
	require.Nil(t, rep.Diff, "replay differs")
	require.Positive(t, rep.Events)
	return rep
}

// checkNoSecret fails if the API key is in the thread or the event log.
func (s *session) checkNoSecret(t *testing.T) {
	t.Helper()
	for _, p := range []string{s.store.Path(s.id), s.logPath} {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NotContains(t, string(b), testKey, "%s holds the API key", p)
	}
}

// records returns the event records of the session's log.
func (s *session) records(t *testing.T) []eventlog.Record {
	t.Helper()
	b, err := os.ReadFile(s.logPath)
	require.NoError(t, err)
	var out []eventlog.Record
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r eventlog.Record
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		if r.Type == eventlog.TypeEvent {
			out = append(out, r)
		}
	}
	return out
}

// toolFunc is a tool made of a function.
type toolFunc struct {
	name string
	run  func(ctx context.Context, args json.RawMessage, progress func(chat.ToolProgress)) (string, error)
}

// Spec implements tools.Tool.
func (f toolFunc) Spec() chat.ToolSpec {
	return chat.ToolSpec{Name: f.name, Description: "test tool " + f.name, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

// Run implements tools.Tool.
func (f toolFunc) Run(ctx context.Context, args json.RawMessage, progress func(chat.ToolProgress)) (string, error) {
	return f.run(ctx, args, progress)
}

// barrier runs the calls it is given only once n of them have started, so
// a round of n calls completes only if they run in parallel.
type barrier struct {
	inner agentexec.ToolRunner
	n     int

	mu      sync.Mutex
	started int
	all     chan struct{}
}

func newBarrier(inner agentexec.ToolRunner, n int) *barrier {
	return &barrier{inner: inner, n: n, all: make(chan struct{})}
}

// Specs returns the specs of the tools behind the barrier.
func (b *barrier) Specs() []chat.ToolSpec { return specsOf(b.inner) }

// Run implements agentexec.ToolRunner.
func (b *barrier) Run(ctx context.Context, call chat.ToolCall, progress func(chat.ToolProgress)) chat.ToolOutcome {
	b.mu.Lock()
	b.started++
	if b.started == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
	case <-time.After(10 * time.Second):
		return chat.ToolOutcome{Content: "the calls of the round did not run in parallel", IsError: true}
	case <-ctx.Done():
		return chat.ToolOutcome{Content: "cancelled", IsError: true}
	}
	return b.inner.Run(ctx, call, progress)
}

// signalSelf sends sig to the test process, as a user's Ctrl-C would.
func signalSelf(t *testing.T, sig os.Signal) {
	p, err := os.FindProcess(os.Getpid())
	if err == nil {
		err = p.Signal(sig)
	}
	if err != nil {
		t.Errorf("signal self: %v", err)
	}
}

// assertConversation checks that each message of got starts with the line
// of want at its index.
func assertConversation(t *testing.T, want, got []string) {
	t.Helper()
	if !assert.Len(t, got, len(want), "conversation: %q", got) {
		return
	}
	for i := range want {
		assert.True(t, strings.HasPrefix(got[i], want[i]), "message %d:\n got %q\nwant %q...", i, got[i], want[i])
	}
}
