// Package statelessagent is the agent machine on
// github.com/qmuntal/stateless, written as its README shows: states and
// triggers configured with Permit, PermitDynamic, InternalTransition,
// Ignore and SubstateOf; mutually exclusive guard clauses; effects in
// OnEntryFrom and internal-transition actions that take a context and the
// trigger's arguments; typed trigger parameters declared with
// SetTriggerParameters.
//
// The guards and effects are those of the floor (package agentcore). The
// spec's composite Running is a superstate whose ShutdownRequested every
// state inside takes. The transient state ProcessingLlmResponse is a
// dynamic destination of LlmCompleted, the way stateless expresses a
// choice: its guards read the reply and the conversation before it, which
// recording the reply does not change for them. PreparingRequest's guard
// reads the conversation its effects made, so it is a state of the
// library, whose entry fires a trigger of its own (prepared) that the
// machine's queue runs once the step that entered it has ended
// (stateless's default FiringQueued mode, run to completion).
package statelessagent

import (
	"context"
	"fmt"
	"reflect"

	"github.com/qmuntal/stateless"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/bench/agentcore"
)

// running is the spec's composite state Running, a superstate here.
const running agentcore.State = 0xff

// prepared is the trigger that leaves PreparingRequest.
const prepared = "prepared"

// Machine is the agent on qmuntal/stateless.
type Machine struct {
	c  agentcore.Core
	sm *stateless.StateMachine
}

// carries reports whether events of kind k carry a payload, passed as the
// trigger's argument.
func carries(k agentcore.EventKind) bool {
	switch k {
	case agentcore.RetryTimeoutFired, agentcore.ShutdownRequested, agentcore.Interrupt, agentcore.UndoTurn, agentcore.CompactRequested:
		return false
	}
	return true
}

// New returns a machine waiting for user input with conv, configured as b.
func New(b *behavior.Agent, conv chat.Conversation) *Machine {
	m := &Machine{}
	m.c.Init(b, conv)
	c := &m.c
	ev := func(args []any) *agentcore.Event { return args[0].(*agentcore.Event) }
	from := func(ctx context.Context) agentcore.State {
		return stateless.GetTransition(ctx).Source.(agentcore.State)
	}
	act := func(f func()) stateless.ActionFunc {
		return func(context.Context, ...any) error { f(); return nil }
	}
	actEv := func(f func(*agentcore.Event) *agentcore.Action) stateless.ActionFunc {
		return func(_ context.Context, args ...any) error { f(ev(args)); return nil }
	}
	guard := func(f func() bool) stateless.GuardFunc {
		return func(context.Context, ...any) bool { return f() }
	}
	not := func(f func() bool) stateless.GuardFunc {
		return func(context.Context, ...any) bool { return !f() }
	}
	canRetry := func(_ context.Context, args ...any) bool { return c.CanRetry(ev(args)) }
	cannotRetry := func(_ context.Context, args ...any) bool { return !c.CanRetry(ev(args)) }
	// The guards of ExecutingTools × ToolCompleted, mutually exclusive as
	// stateless requires; none holds for an unknown call, which is then
	// refused as an unhandled trigger.
	completes := func(want agentcore.ToolDone) stateless.GuardFunc {
		return func(_ context.Context, args ...any) bool {
			done, _ := c.Classify(ev(args))
			return done == want
		}
	}

	sm := stateless.NewStateMachine(agentcore.WaitingForUserInput)
	m.sm = sm
	evType := reflect.TypeFor[*agentcore.Event]()
	for k := agentcore.UserInput; k <= agentcore.QueryCompleted; k++ {
		if carries(k) {
			sm.SetTriggerParameters(k, evType)
		}
	}
	shutdown := act(func() { c.Shut() })

	sm.Configure(running).
		Permit(agentcore.ShutdownRequested, agentcore.ShuttingDown)

	sm.Configure(agentcore.WaitingForUserInput).SubstateOf(running).
		Permit(agentcore.UserInput, agentcore.PreparingRequest).
		Ignore(agentcore.Interrupt).
		InternalTransition(agentcore.UndoTurn, act(func() { c.UndoTurn() })).
		Permit(agentcore.CompactRequested, agentcore.Compacting, guard(c.CanCompact)).
		OnEntryFrom(agentcore.LLMCompleted, func(ctx context.Context, args ...any) error {
			e := ev(args)
			switch {
			case from(ctx) == agentcore.CallingLLM:
				c.RecordResponse(e)
				c.EndTurn()
			case c.EmptySummary(e):
				c.RefuseSummary(e)
			default:
				c.Compact(e)
			}
			return nil
		}).
		OnEntryFrom(agentcore.LLMError, func(ctx context.Context, args ...any) error {
			if from(ctx) == agentcore.Compacting {
				c.GiveUpCompaction(ev(args))
			} else {
				c.GiveUp(ev(args))
			}
			return nil
		}).
		OnEntryFrom(agentcore.Interrupt, func(ctx context.Context, _ ...any) error {
			switch s := from(ctx); {
			case s == agentcore.ExecutingTools:
				c.InterruptTools(false)
			case (s == agentcore.Error || s == agentcore.Compacting) && c.IsCompactCommand():
				c.StopCompactCommand()
			default:
				c.InterruptTurn()
			}
			return nil
		}).
		OnEntryFrom(agentcore.QueryDetected, actEv(c.RefuseQuery)).
		OnEntryFrom(agentcore.PostToolsHookCompleted, act(func() { c.EndStop() }))

	sm.Configure(agentcore.PreparingRequest).SubstateOf(running).
		Permit(prepared, agentcore.Compacting, guard(c.NeedsCompaction)).
		Permit(prepared, agentcore.CallingLLM, not(c.NeedsCompaction)).
		OnEntryFrom(agentcore.UserInput, func(_ context.Context, args ...any) error {
			c.StartTurn(ev(args))
			return nil
		}).
		OnEntryFrom(agentcore.LLMCompleted, func(_ context.Context, args ...any) error {
			c.RecordResponse(ev(args))
			c.ContinueReply()
			return nil
		}).
		OnEntryFrom(agentcore.ToolCompleted, func(_ context.Context, args ...any) error {
			e := ev(args)
			_, i := c.Classify(e)
			c.FinishTools(e, i)
			return nil
		}).
		OnEntryFrom(agentcore.PostToolsHookCompleted, act(c.ResumeAfterHook)).
		OnEntryFrom(agentcore.QueryCompleted, func(_ context.Context, args ...any) error {
			c.InjectQueryResult(ev(args))
			return nil
		}).
		OnEntry(func(ctx context.Context, _ ...any) error { return sm.FireCtx(ctx, prepared) })

	sm.Configure(agentcore.CallingLLM).SubstateOf(running).
		InternalTransition(agentcore.TextDelta, actEv(c.ShowDelta)).
		InternalTransition(agentcore.ToolCallDelta, act(func() { c.Wait() })).
		PermitDynamic(agentcore.LLMCompleted, func(_ context.Context, args ...any) (stateless.State, error) {
			switch e := ev(args); {
			case c.ReplyCut(e):
				return agentcore.PreparingRequest, nil
			case c.HasToolCalls(e):
				return agentcore.ExecutingTools, nil
			}
			return agentcore.WaitingForUserInput, nil
		}).
		Permit(agentcore.LLMError, agentcore.Error, canRetry).
		Permit(agentcore.LLMError, agentcore.WaitingForUserInput, cannotRetry).
		Permit(agentcore.Interrupt, agentcore.WaitingForUserInput).
		Permit(agentcore.QueryDetected, agentcore.WaitingForUserInput, guard(c.QueryLimitReached)).
		Permit(agentcore.QueryDetected, agentcore.RunningQuery, not(c.QueryLimitReached)).
		OnEntryFrom(prepared, act(func() { c.Send() })).
		OnEntryFrom(agentcore.RetryTimeoutFired, act(func() { c.RetryRequest() })).
		OnEntryFrom(agentcore.LLMCompleted, actEv(c.CompactAndResume))

	sm.Configure(agentcore.ExecutingTools).SubstateOf(running).
		InternalTransition(agentcore.ToolProgress, actEv(c.RecordProgress), func(_ context.Context, args ...any) bool { return c.IsKnownCall(ev(args)) }).
		Ignore(agentcore.ToolProgress, func(_ context.Context, args ...any) bool { return !c.IsKnownCall(ev(args)) }).
		InternalTransition(agentcore.ToolCompleted, func(_ context.Context, args ...any) error {
			e := ev(args)
			_, i := c.Classify(e)
			c.RecordOutcome(e, i)
			return nil
		}, completes(agentcore.OthersPending)).
		Permit(agentcore.ToolCompleted, agentcore.PostToolsHook, completes(agentcore.LastMutating)).
		Permit(agentcore.ToolCompleted, agentcore.PreparingRequest, completes(agentcore.Last)).
		Permit(agentcore.Interrupt, agentcore.StoppingTurn, guard(c.AnyMutating)).
		Permit(agentcore.Interrupt, agentcore.WaitingForUserInput, not(c.AnyMutating)).
		OnEntryFrom(agentcore.LLMCompleted, func(_ context.Context, args ...any) error {
			e := ev(args)
			c.RecordResponse(e)
			c.StartTools(e)
			return nil
		})

	sm.Configure(agentcore.PostToolsHook).SubstateOf(running).
		Permit(agentcore.PostToolsHookCompleted, agentcore.PreparingRequest).
		Permit(agentcore.Interrupt, agentcore.StoppingTurn).
		OnEntryFrom(agentcore.ToolCompleted, func(_ context.Context, args ...any) error {
			e := ev(args)
			_, i := c.Classify(e)
			c.FinishToolsWithHook(e, i)
			return nil
		})

	sm.Configure(agentcore.Error).SubstateOf(running).
		Permit(agentcore.RetryTimeoutFired, agentcore.Compacting, guard(c.IsCompaction)).
		Permit(agentcore.RetryTimeoutFired, agentcore.CallingLLM, not(c.IsCompaction)).
		Permit(agentcore.Interrupt, agentcore.WaitingForUserInput).
		OnEntryFrom(agentcore.LLMError, func(ctx context.Context, args ...any) error {
			if from(ctx) == agentcore.Compacting {
				c.ScheduleCompactionRetry(ev(args))
			} else {
				c.ScheduleRetry(ev(args))
			}
			return nil
		})

	sm.Configure(agentcore.StoppingTurn).SubstateOf(running).
		Permit(agentcore.PostToolsHookCompleted, agentcore.WaitingForUserInput).
		Ignore(agentcore.Interrupt).
		OnEntryFrom(agentcore.Interrupt, func(ctx context.Context, _ ...any) error {
			if from(ctx) == agentcore.PostToolsHook {
				c.StopHook()
			} else {
				c.InterruptTools(true)
			}
			return nil
		})

	sm.Configure(agentcore.Compacting).SubstateOf(running).
		Ignore(agentcore.TextDelta).
		Ignore(agentcore.ToolCallDelta).
		PermitDynamic(agentcore.LLMCompleted, func(_ context.Context, args ...any) (stateless.State, error) {
			if c.EmptySummary(ev(args)) || c.IsCompactCommand() {
				return agentcore.WaitingForUserInput, nil
			}
			return agentcore.CallingLLM, nil
		}).
		Permit(agentcore.LLMError, agentcore.Error, canRetry).
		Permit(agentcore.LLMError, agentcore.WaitingForUserInput, cannotRetry).
		Permit(agentcore.Interrupt, agentcore.WaitingForUserInput).
		OnEntryFrom(prepared, act(func() { c.StartCompaction() })).
		OnEntryFrom(agentcore.CompactRequested, act(func() { c.StartCompactCommand() })).
		OnEntryFrom(agentcore.RetryTimeoutFired, act(func() { c.RetryCompaction() }))

	sm.Configure(agentcore.RunningQuery).SubstateOf(running).
		Permit(agentcore.QueryCompleted, agentcore.PreparingRequest).
		Permit(agentcore.Interrupt, agentcore.WaitingForUserInput).
		OnEntryFrom(agentcore.QueryDetected, actEv(c.StartQuery))

	down := sm.Configure(agentcore.ShuttingDown).
		InternalTransition(agentcore.ShutdownRequested, shutdown).
		OnEntryFrom(agentcore.ShutdownRequested, shutdown)
	for k := agentcore.UserInput; k <= agentcore.QueryCompleted; k++ {
		if k != agentcore.ShutdownRequested {
			down.Ignore(k)
		}
	}

	sm.OnUnhandledTrigger(func(_ context.Context, state stateless.State, trigger stateless.Trigger, _ []string) error {
		return fmt.Errorf("%w: %v in %v", agentcore.ErrRejected, trigger, state)
	})
	return m
}

// State returns the current state.
func (m *Machine) State() agentcore.State {
	return m.sm.MustState().(agentcore.State)
}

// Core returns the machine's data, for tests.
func (m *Machine) Core() *agentcore.Core { return &m.c }

// HandleEvent feeds ev to the machine and returns the action to perform,
// or nil. The action points into the machine and is valid until the next
// call. A refused event returns an error wrapping agentcore.ErrRejected.
func (m *Machine) HandleEvent(ev *agentcore.Event) (*agentcore.Action, error) {
	c := &m.c
	from := m.State()
	if agentcore.Defers(from, ev.Kind) {
		c.Defer(ev)
		return nil, nil
	}
	act, err := m.handle(ev)
	if err != nil || m.State() == from || c.Deferred() == 0 {
		return act, err
	}
	return c.Recall(m.State, act, m.handle)
}

// handle is HandleEvent but for the events held (deferred).
func (m *Machine) handle(ev *agentcore.Event) (*agentcore.Action, error) {
	m.c.Act.Kind = 0
	var err error
	if carries(ev.Kind) {
		err = m.sm.Fire(ev.Kind, ev)
	} else {
		err = m.sm.Fire(ev.Kind)
	}
	if err != nil {
		return nil, err
	}
	if m.c.Act.Kind == 0 {
		return nil, nil
	}
	return &m.c.Act, nil
}
