package fsmtemporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// ActivityName is the name of the activity that performs action action of
// machine machine: machine + "." + action.
func ActivityName(machine, action string) string { return machine + "." + action }

// ActivityRegistry is where RegisterActivities registers the activities: a
// worker.Worker, or the SDK's test environment.
type ActivityRegistry interface {
	RegisterActivityWithOptions(a any, opts activity.RegisterOptions)
}

// RegisterActivities registers, on a worker, one activity for each of def's
// actions, which performs it with x through def.Perform. A worker of a task
// queue that Options.Actions sends some actions to registers them all too:
// Temporal only schedules there the ones sent there.
func RegisterActivities[M Machine[E], E, A, X any](r ActivityRegistry, def *Def[M, E, A, X], x X) {
	for _, name := range def.Actions {
		r.RegisterActivityWithOptions(perform(def, x, name), activity.RegisterOptions{Name: ActivityName(def.Name, name)})
	}
}

// perform returns the activity of action name: it decodes the action and
// hands it to x, and returns the events x reported (see Report), each
// checked to decode as one of the machine's. An action that does not
// decode, or a reported value that is no event of the machine, is a bug of
// the code, not a passing fault, and is not retried.
func perform[M Machine[E], E, A, X any](def *Def[M, E, A, X], x X, name string) func(context.Context, json.RawMessage) ([]json.RawMessage, error) {
	return func(ctx context.Context, raw json.RawMessage) ([]json.RawMessage, error) {
		a, err := def.UnmarshalAction(raw)
		if err != nil {
			return nil, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("fsmtemporal: %s: activity %s: the action does not decode: %v (run workers of one revision of the spec)", def.Name, name, err),
				"fsmtemporal.Action", err)
		}
		if got := def.ActionName(a); got != name {
			return nil, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("fsmtemporal: %s: activity %s was given the action %s", def.Name, name, got), "fsmtemporal.Action", nil)
		}
		rep := &reports{}
		if err := def.Perform(context.WithValue(ctx, reportsKey{}, rep), x, a); err != nil {
			return nil, err // what it reported is dropped: the next attempt reports again
		}
		for _, ev := range rep.events {
			if _, err := def.UnmarshalEvent(ev); err != nil {
				return nil, temporal.NewNonRetryableApplicationError(
					fmt.Sprintf("fsmtemporal: %s: activity %s reported %s, which is no event of the machine: %v", def.Name, name, ev, err),
					"fsmtemporal.Report", err)
			}
		}
		return rep.events, nil
	}
}

// reportsKey is the context key of an activity's reports.
type reportsKey struct{}

// reports are the events an attempt of an activity reported, as JSON.
type reports struct {
	mu     sync.Mutex
	events []json.RawMessage
}

// Report hands ev, one of the machine's events, to the machine whose
// action the activity performs: the result of the action, as a Handler
// reports one on runtime/loop (an LLM's reply, a command's output). The
// events an activity reports go into its result, written to the history
// once with it, and the machine takes them in order once the activity has
// returned and the step that asked for it has ended, after those reported
// before them. An attempt that fails reports nothing: the next attempt
// reports again. ctx is the one Perform was given; elsewhere Report
// returns an error.
func Report(ctx context.Context, ev any) error {
	rep, ok := ctx.Value(reportsKey{}).(*reports)
	if !ok {
		return errors.New("fsmtemporal: Report was called outside an action's activity: give it the context the activity's method was called with")
	}
	data, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("fsmtemporal: encode the reported event %T: %w", ev, err)
	}
	rep.mu.Lock()
	rep.events = append(rep.events, data)
	rep.mu.Unlock()
	return nil
}
