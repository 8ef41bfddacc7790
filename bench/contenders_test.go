package bench_test

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/bench/agentcore"
	"github.com/fsmgen/fsmgen/bench/floor"
	"github.com/fsmgen/fsmgen/bench/looplabagent"
	"github.com/fsmgen/fsmgen/bench/safefloor"
	"github.com/fsmgen/fsmgen/bench/statelessagent"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// outcome is what one event did: the state the machine rests in, the
// action it returned (with what the action carries), and whether the
// event was refused.
type outcome struct {
	State    string
	Action   string
	Detail   string
	Rejected bool
	ConvLen  int
	// Last is the conversation's last message, in brief.
	Last    string
	Retries int
	// Origin is what the error was of (Error), or who asked for the
	// compaction (Compacting).
	Origin chat.ErrorOrigin
}

func (o outcome) String() string {
	s := fmt.Sprintf("%s / %s", o.State, o.Action)
	if o.Rejected {
		s += " (rejected)"
	}
	return fmt.Sprintf("%s [%s] conv=%d last=%s retries=%d origin=%s", s, o.Detail, o.ConvLen, o.Last, o.Retries, o.Origin)
}

// describeConversation records the length and last message of c in o.
func describeConversation(o *outcome, c chat.Conversation) {
	o.ConvLen = c.Len()
	if m, ok := c.Last(); ok {
		o.Last = fmt.Sprintf("%s:%q", m.Role, m.Content)
	}
}

// runner is one contender's machine with its events loaded in its own
// form: the benchmark feeds them all (a turn), the equivalence test one at
// a time.
type runner interface {
	// turn feeds every loaded event in order and fails on the first error.
	turn() error
	// step feeds event i and describes what it did.
	step(i int) outcome
}

// contender makes a runner: a machine in WaitingForUserInput with conv,
// and evs converted to the contender's event type.
type contender struct {
	name string
	make func(cfg behavior.Config, conv chat.Conversation, evs []agentcore.Event) runner
}

var contenders = []contender{
	{"generated", newGenerated},
	{"handwritten", newFloor},
	{"safe-handwritten", newSafeFloor},
	{"looplab", newLooplab},
	{"stateless", newStateless},
}

var errNoAction = errors.New("the turn's event returned no action")

// generated: gen/agent with agent.New and the agent's behaviour. In the
// benchmark its Handler counts the actions it is handed (the others'
// runners check that they got one); in the equivalence test a Recorder
// keeps them, for their data.

type generated struct {
	m   *agent.Machine
	h   *countHandler
	rec *agent.Recorder
	evs []agent.Event
}

// countHandler is the generated machine's Handler in the benchmark.
type countHandler struct {
	n   int
	rec *agent.Recorder // set in the equivalence test
}

var _ agent.Handler = (*countHandler)(nil)

func (h *countHandler) SendLLMRequest(request chat.Request) {
	h.n++
	if h.rec != nil {
		h.rec.SendLLMRequest(request)
	}
}

func (h *countHandler) ExecuteTools(calls []chat.ToolCall) {
	h.n++
	if h.rec != nil {
		h.rec.ExecuteTools(calls)
	}
}

func (h *countHandler) RunPostToolsHook(completedTools chat.ToolRound) {
	h.n++
	if h.rec != nil {
		h.rec.RunPostToolsHook(completedTools)
	}
}

func (h *countHandler) WaitForInput() {
	h.n++
	if h.rec != nil {
		h.rec.WaitForInput()
	}
}

func (h *countHandler) DisplayMessage(content string) {
	h.n++
	if h.rec != nil {
		h.rec.DisplayMessage(content)
	}
}

func (h *countHandler) DisplayError(message string) {
	h.n++
	if h.rec != nil {
		h.rec.DisplayError(message)
	}
}

func (h *countHandler) ScheduleRetry(delay time.Duration, attempt int, err chat.LLMError) {
	h.n++
	if h.rec != nil {
		h.rec.ScheduleRetry(delay, attempt, err)
	}
}

func (h *countHandler) Shutdown() {
	h.n++
	if h.rec != nil {
		h.rec.Shutdown()
	}
}

func (h *countHandler) CancelTurn() {
	h.n++
	if h.rec != nil {
		h.rec.CancelTurn()
	}
}

func (h *countHandler) RunQuery(query chat.Query) {
	h.n++
	if h.rec != nil {
		h.rec.RunQuery(query)
	}
}

// mustBehavior returns the agent's behaviour for cfg, which must be valid.
func mustBehavior(cfg behavior.Config) *behavior.Agent {
	b, err := behavior.New(cfg)
	if err != nil {
		panic(err)
	}
	return b
}

func newGenerated(cfg behavior.Config, conv chat.Conversation, evs []agentcore.Event) runner {
	r := &generated{h: &countHandler{}, rec: &agent.Recorder{}}
	r.h.rec = r.rec
	m, err := agent.New(agent.Config{Behavior: mustBehavior(cfg), Handler: r.h, Initial: agent.WaitingForUserInput{Conversation: conv}})
	if err != nil {
		panic(err)
	}
	r.m = m
	for i := range evs {
		r.evs = append(r.evs, toAgent(&evs[i]))
	}
	return r
}

// toAgent converts an event to gen/agent's form.
func toAgent(e *agentcore.Event) agent.Event {
	switch e.Kind {
	case agentcore.UserInput:
		return &agent.UserInput{Message: e.Message}
	case agentcore.TextDelta:
		return &agent.TextDelta{Content: e.Content}
	case agentcore.ToolCallDelta:
		return &agent.ToolCallDelta{CallID: e.CallID, ToolName: e.ToolName, ArgumentsFragment: e.ArgumentsFragment}
	case agentcore.LLMCompleted:
		return &agent.LLMCompleted{Response: e.Response}
	case agentcore.LLMError:
		return &agent.LLMError{Error: e.Error}
	case agentcore.ToolProgress:
		return &agent.ToolProgress{CallID: e.CallID, Progress: e.Progress}
	case agentcore.ToolCompleted:
		return &agent.ToolCompleted{CallID: e.CallID, Outcome: e.Outcome}
	case agentcore.PostToolsHookCompleted:
		return &agent.PostToolsHookCompleted{ActionTaken: e.ActionTaken}
	case agentcore.RetryTimeoutFired:
		return &agent.RetryTimeoutFired{}
	case agentcore.ShutdownRequested:
		return &agent.ShutdownRequested{}
	case agentcore.Interrupt:
		return &agent.Interrupt{}
	case agentcore.UndoTurn:
		return &agent.UndoTurn{}
	case agentcore.CompactRequested:
		return &agent.CompactRequested{}
	case agentcore.QueryDetected:
		return &agent.QueryDetected{Query: e.Query, Text: e.Text, Usage: e.Usage}
	case agentcore.QueryCompleted:
		return &agent.QueryCompleted{Outcome: e.Outcome}
	}
	panic(fmt.Sprintf("unknown event kind %d", e.Kind))
}

func (r *generated) turn() error {
	r.h.rec = nil
	m, h := r.m, r.h
	for _, ev := range r.evs {
		n := h.n
		if err := m.HandleEvent(ev); err != nil {
			return err
		}
		if h.n == n {
			return errNoAction
		}
	}
	return nil
}

func (r *generated) step(i int) outcome {
	r.h.rec = r.rec
	before := len(r.rec.Actions)
	err := r.m.HandleEvent(r.evs[i])
	// The agent's rules emit one action each; a step that ends a turn
	// and takes a message the machine held (deferred) emits the turn's
	// last and the next turn's first: the last is what the hand-written
	// contenders return.
	var act agent.Action
	if acts := r.rec.Actions[before:]; len(acts) > 0 {
		act = acts[len(acts)-1]
	}
	o := outcome{State: r.m.Kind().String(), Rejected: errors.Is(err, fsmrt.ErrRejected)}
	if err != nil && !o.Rejected {
		o.Detail = "error: " + err.Error()
	}
	st := r.m.State()
	if c, ok := agent.ConversationOf(st); ok {
		describeConversation(&o, c)
	}
	switch s := st.(type) {
	case agent.CallingLLM:
		o.Retries = s.Retries
	case agent.Error:
		o.Retries, o.Origin = s.Retries, s.Origin
	case agent.Compacting:
		o.Retries, o.Origin = s.Retries, s.Origin
	}
	if act != nil {
		describeAction(&o, act)
	}
	return o
}

// describeAction records a generated action and what it carries in o.
func describeAction(o *outcome, act agent.Action) {
	o.Action = act.Kind().String()
	switch a := act.(type) {
	case *agent.SendLLMRequest:
		o.Detail = describeRequest(a.Request)
	case *agent.ExecuteTools:
		o.Detail = describeCalls(a.Calls)
	case *agent.RunPostToolsHook:
		o.Detail = fmt.Sprint(a.CompletedTools.Completed())
	case *agent.DisplayMessage:
		o.Detail = a.Content
	case *agent.DisplayError:
		o.Detail = a.Message
	case *agent.ScheduleRetry:
		o.Detail = fmt.Sprintf("attempt %d after %s: %s", a.Attempt, a.Delay, a.Error.Kind)
	case *agent.RunQuery:
		o.Detail = a.Query.String()
	}
}

// describeRequest summarises a request: its settings and every message.
func describeRequest(r chat.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%q/%d tools/%d max/%d thinking/no cache %t:", r.Model, r.System, len(r.Tools), r.MaxTokens, r.Thinking, r.NoCache)
	for _, m := range r.Messages {
		fmt.Fprintf(&b, " %s:%q", m.Role, m.Content)
		if m.ToolCallID != "" {
			fmt.Fprintf(&b, "(%s %s err=%t)", m.ToolCallID, m.ToolName, m.IsError)
		}
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "[%s %s]", c.ID, c.Name)
		}
	}
	return b.String()
}

func describeCalls(calls []chat.ToolCall) string {
	ids := make([]string, len(calls))
	for i, c := range calls {
		ids[i] = c.ID + ":" + c.Name
	}
	return strings.Join(ids, ",")
}

// The hand-written contenders share agentcore's events and actions.

type coreMachine interface {
	HandleEvent(*agentcore.Event) (*agentcore.Action, error)
	State() agentcore.State
	Core() *agentcore.Core
}

type core[M coreMachine] struct {
	m   M
	evs []agentcore.Event
}

// safeFloor: the machine written by hand to the generated one's contract
// (package safefloor).

type safeFloor struct {
	m   *safefloor.Machine
	h   *countHandler
	rec *agent.Recorder
	evs []agent.Event
}

func newSafeFloor(cfg behavior.Config, conv chat.Conversation, evs []agentcore.Event) runner {
	r := &safeFloor{h: &countHandler{}, rec: &agent.Recorder{}}
	r.h.rec = r.rec
	r.m = safefloor.New(mustBehavior(cfg), r.h, conv)
	for i := range evs {
		r.evs = append(r.evs, toAgent(&evs[i]))
	}
	return r
}

// turn is generated.turn for the safe floor's machine: the runners call
// HandleEvent directly, as the floor's does (a shared helper would call it
// through a function value or an interface, a cost neither would pay).
func (r *safeFloor) turn() error {
	r.h.rec = nil
	m, h := r.m, r.h
	for _, ev := range r.evs {
		n := h.n
		if err := m.HandleEvent(ev); err != nil {
			return err
		}
		if h.n == n {
			return errNoAction
		}
	}
	return nil
}

func (r *safeFloor) step(i int) outcome {
	r.h.rec = r.rec
	before := len(r.rec.Actions)
	err := r.m.HandleEvent(r.evs[i])
	o := outcome{State: r.m.Kind().String(), Rejected: errors.Is(err, safefloor.ErrRejected)}
	if err != nil && !o.Rejected {
		o.Detail = "error: " + err.Error()
	}
	if k := r.m.Kind(); k != agent.StateShuttingDown {
		describeConversation(&o, r.m.Conversation())
	}
	switch r.m.Kind() {
	case agent.StateCallingLLM:
		o.Retries = r.m.Retries()
	case agent.StateError, agent.StateCompacting:
		o.Retries, o.Origin = r.m.Retries(), r.m.Origin()
	}
	if acts := r.rec.Actions[before:]; len(acts) > 0 {
		describeAction(&o, acts[len(acts)-1]) // the last, as generated.step
	}
	return o
}

func newFloor(cfg behavior.Config, conv chat.Conversation, evs []agentcore.Event) runner {
	return &floorRunner{core[*floor.Machine]{m: floor.New(mustBehavior(cfg), conv), evs: evs}}
}

// floorRunner feeds the floor its events with direct calls. The generic
// core calls HandleEvent through its instantiation's dictionary (every
// pointer type shares one shape), an indirect call that the generated
// contender, whose runner calls *agent.Machine directly, does not pay.
type floorRunner struct {
	core[*floor.Machine]
}

func (r *floorRunner) turn() error {
	m, evs := r.m, r.evs
	for i := range evs {
		act, err := m.HandleEvent(&evs[i])
		if err != nil {
			return err
		}
		if act == nil {
			return errNoAction
		}
	}
	return nil
}

func newLooplab(cfg behavior.Config, conv chat.Conversation, evs []agentcore.Event) runner {
	return &core[*looplabagent.Machine]{m: looplabagent.New(mustBehavior(cfg), conv), evs: evs}
}

func newStateless(cfg behavior.Config, conv chat.Conversation, evs []agentcore.Event) runner {
	return &core[*statelessagent.Machine]{m: statelessagent.New(mustBehavior(cfg), conv), evs: evs}
}

func (r *core[M]) turn() error {
	for i := range r.evs {
		act, err := r.m.HandleEvent(&r.evs[i])
		if err != nil {
			return err
		}
		if act == nil {
			return errNoAction
		}
	}
	return nil
}

func (r *core[M]) step(i int) outcome {
	act, err := r.m.HandleEvent(&r.evs[i])
	st := r.m.State()
	o := outcome{State: st.String(), Rejected: errors.Is(err, agentcore.ErrRejected)}
	if err != nil && !o.Rejected {
		o.Detail = "error: " + err.Error()
	}
	c := r.m.Core()
	if st != agentcore.ShuttingDown {
		describeConversation(&o, c.Conversation())
	}
	switch st {
	case agentcore.CallingLLM:
		o.Retries = c.Retries()
	case agentcore.Error, agentcore.Compacting:
		o.Retries, o.Origin = c.Retries(), c.Origin()
	}
	if act == nil {
		return o
	}
	o.Action = act.Kind.String()
	switch act.Kind {
	case agentcore.SendLLMRequest:
		o.Detail = describeRequest(act.Request)
	case agentcore.ExecuteTools:
		o.Detail = describeCalls(act.Calls)
	case agentcore.RunPostToolsHook:
		o.Detail = fmt.Sprint(act.CompletedTools)
	case agentcore.DisplayMessage:
		o.Detail = act.Content
	case agentcore.DisplayError:
		o.Detail = act.Message
	case agentcore.ScheduleRetry:
		o.Detail = fmt.Sprintf("attempt %d after %s: %s", act.Attempt, act.Delay, act.Error.Kind)
	case agentcore.RunQuery:
		o.Detail = act.Query.String()
	}
	return o
}
