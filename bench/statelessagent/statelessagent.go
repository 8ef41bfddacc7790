// Package statelessagent is the agent machine on
// github.com/qmuntal/stateless, written as its README shows: states and
// triggers configured with Permit, PermitDynamic, InternalTransition and
// Ignore; mutually exclusive guard clauses; effects in OnEntryFrom and
// internal-transition actions that take a context and the trigger's
// arguments; typed trigger parameters declared with SetTriggerParameters.
//
// The guards and effects are those of the floor (package agentcore). The
// transient state ProcessingLlmResponse is a dynamic destination of
// LlmCompleted, the way stateless expresses a choice.
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

// Machine is the agent on qmuntal/stateless.
type Machine struct {
	c  agentcore.Core
	sm *stateless.StateMachine
}

// New returns a machine waiting for user input with conv, configured as
// behavior.New(cfg).
func New(cfg behavior.Config, conv chat.Conversation) *Machine {
	m := &Machine{}
	m.c.Init(cfg, conv)
	c := &m.c
	ev := func(args []any) *agentcore.Event { return args[0].(*agentcore.Event) }
	// The guards of ExecutingTools × ToolCompleted, mutually exclusive as
	// stateless requires; none holds for an unknown call, which is then
	// refused as an unhandled trigger.
	completes := func(want agentcore.ToolDone) stateless.GuardFunc {
		return func(_ context.Context, args ...any) bool {
			done, _ := c.Classify(ev(args))
			return done == want
		}
	}
	complete := func(effect func(*agentcore.Event, int) *agentcore.Action) stateless.ActionFunc {
		return func(_ context.Context, args ...any) error {
			e := ev(args)
			_, i := c.Classify(e)
			effect(e, i)
			return nil
		}
	}

	sm := stateless.NewStateMachine(agentcore.WaitingForUserInput)
	evType := reflect.TypeFor[*agentcore.Event]()
	for k := agentcore.UserInput; k <= agentcore.ShutdownRequested; k++ {
		if k != agentcore.RetryTimeoutFired && k != agentcore.ShutdownRequested {
			sm.SetTriggerParameters(k, evType)
		}
	}
	shutdown := func(_ context.Context, _ ...any) error { c.Shut(); return nil }

	sm.Configure(agentcore.WaitingForUserInput).
		Permit(agentcore.UserInput, agentcore.CallingLLM).
		Permit(agentcore.ShutdownRequested, agentcore.ShuttingDown).
		OnEntryFrom(agentcore.LLMCompleted, func(_ context.Context, args ...any) error {
			c.RecordResponse(ev(args))
			c.EndTurn()
			return nil
		}).
		OnEntryFrom(agentcore.LLMError, func(_ context.Context, args ...any) error {
			c.GiveUp(ev(args))
			return nil
		})

	sm.Configure(agentcore.CallingLLM).
		InternalTransition(agentcore.TextDelta, func(_ context.Context, args ...any) error {
			c.ShowDelta(ev(args))
			return nil
		}).
		InternalTransition(agentcore.ToolCallDelta, func(_ context.Context, _ ...any) error {
			c.Wait()
			return nil
		}).
		PermitDynamic(agentcore.LLMCompleted, func(_ context.Context, args ...any) (stateless.State, error) {
			if c.HasToolCalls(ev(args)) {
				return agentcore.ExecutingTools, nil
			}
			return agentcore.WaitingForUserInput, nil
		}).
		Permit(agentcore.LLMError, agentcore.Error, func(_ context.Context, args ...any) bool { return c.CanRetry(ev(args)) }).
		Permit(agentcore.LLMError, agentcore.WaitingForUserInput, func(_ context.Context, args ...any) bool { return !c.CanRetry(ev(args)) }).
		Permit(agentcore.ShutdownRequested, agentcore.ShuttingDown).
		OnEntryFrom(agentcore.UserInput, func(_ context.Context, args ...any) error {
			c.StartTurn(ev(args))
			return nil
		}).
		OnEntryFrom(agentcore.ToolCompleted, complete(c.FinishTools)).
		OnEntryFrom(agentcore.PostToolsHookCompleted, func(_ context.Context, _ ...any) error {
			c.ResumeAfterHook()
			return nil
		}).
		OnEntryFrom(agentcore.RetryTimeoutFired, func(_ context.Context, _ ...any) error {
			c.RetryRequest()
			return nil
		})

	sm.Configure(agentcore.ExecutingTools).
		InternalTransition(agentcore.ToolProgress, func(_ context.Context, args ...any) error {
			c.RecordProgress(ev(args))
			return nil
		}, func(_ context.Context, args ...any) bool { return c.IsKnownCall(ev(args)) }).
		Ignore(agentcore.ToolProgress, func(_ context.Context, args ...any) bool { return !c.IsKnownCall(ev(args)) }).
		InternalTransition(agentcore.ToolCompleted, complete(c.RecordOutcome), completes(agentcore.OthersPending)).
		Permit(agentcore.ToolCompleted, agentcore.PostToolsHook, completes(agentcore.LastMutating)).
		Permit(agentcore.ToolCompleted, agentcore.CallingLLM, completes(agentcore.Last)).
		Permit(agentcore.ShutdownRequested, agentcore.ShuttingDown).
		OnEntryFrom(agentcore.LLMCompleted, func(_ context.Context, args ...any) error {
			e := ev(args)
			c.RecordResponse(e)
			c.StartTools(e)
			return nil
		})

	sm.Configure(agentcore.PostToolsHook).
		Permit(agentcore.PostToolsHookCompleted, agentcore.CallingLLM).
		Permit(agentcore.ShutdownRequested, agentcore.ShuttingDown).
		OnEntryFrom(agentcore.ToolCompleted, complete(c.FinishToolsWithHook))

	sm.Configure(agentcore.Error).
		Permit(agentcore.RetryTimeoutFired, agentcore.CallingLLM).
		Permit(agentcore.ShutdownRequested, agentcore.ShuttingDown).
		OnEntryFrom(agentcore.LLMError, func(_ context.Context, args ...any) error {
			c.ScheduleRetry(ev(args))
			return nil
		})

	down := sm.Configure(agentcore.ShuttingDown).
		InternalTransition(agentcore.ShutdownRequested, shutdown).
		OnEntryFrom(agentcore.ShutdownRequested, shutdown)
	for k := agentcore.UserInput; k < agentcore.ShutdownRequested; k++ {
		down.Ignore(k)
	}

	sm.OnUnhandledTrigger(func(_ context.Context, state stateless.State, trigger stateless.Trigger, _ []string) error {
		return fmt.Errorf("%w: %v in %v", agentcore.ErrRejected, trigger, state)
	})
	m.sm = sm
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
	m.c.Act.Kind = 0
	var err error
	if ev.Kind == agentcore.RetryTimeoutFired || ev.Kind == agentcore.ShutdownRequested {
		err = m.sm.Fire(ev.Kind)
	} else {
		err = m.sm.Fire(ev.Kind, ev)
	}
	if err != nil {
		return nil, err
	}
	if m.c.Act.Kind == 0 {
		return nil, nil
	}
	return &m.c.Act, nil
}
