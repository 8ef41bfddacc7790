package fsmtemporal

import (
	"context"
	"encoding/json"
	"fmt"

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
// hands it to x. An action that does not decode is a bug of the code, not
// a passing fault, and is not retried.
func perform[M Machine[E], E, A, X any](def *Def[M, E, A, X], x X, name string) func(context.Context, json.RawMessage) error {
	return func(ctx context.Context, raw json.RawMessage) error {
		a, err := def.UnmarshalAction(raw)
		if err != nil {
			return temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("fsmtemporal: %s: activity %s: the action does not decode: %v (run workers of one revision of the spec)", def.Name, name, err),
				"fsmtemporal.Action", err)
		}
		if got := def.ActionName(a); got != name {
			return temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("fsmtemporal: %s: activity %s was given the action %s", def.Name, name, got), "fsmtemporal.Action", nil)
		}
		return def.Perform(ctx, x, a)
	}
}
