package fsmtemporal

import (
	"context"
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/client"
)

// Start starts the workflow of machine machine (its Def's Name) with a new
// machine, or with saved (a machine as Save saved it, read strictly) when it
// is not nil: to move a machine from runtime/loop to Temporal with its state
// and its timers' deadlines.
func Start(ctx context.Context, c client.Client, opts client.StartWorkflowOptions, machine string, saved []byte) (client.WorkflowRun, error) {
	run, err := c.ExecuteWorkflow(ctx, opts, machine, Input{Saved: saved})
	if err != nil {
		return nil, fmt.Errorf("fsmtemporal: start workflow %s of %s: %w", opts.ID, machine, err)
	}
	return run, nil
}

// Signal sends event ev (a generated event, encoded as its JSON) to the
// machine of workflow id, without waiting for it to be handled: the machine
// takes it in its turn, and a rejected event is only logged by the worker.
func Signal(ctx context.Context, c client.Client, id string, ev any) error {
	data, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("fsmtemporal: encode the event for workflow %s: %w", id, err)
	}
	if err := c.SignalWorkflow(ctx, id, "", EventSignal, json.RawMessage(data)); err != nil {
		return fmt.Errorf("fsmtemporal: signal workflow %s: %w", id, err)
	}
	return nil
}

// Send sends event ev to the machine of workflow id as an update, and waits
// until it is handled and its actions performed: it returns the machine's
// state after it, as JSON. An event the machine rejects returns the
// machine's reason as an error (a *temporal.ApplicationError of type
// RejectedType) and leaves no trace in the workflow's history.
func Send(ctx context.Context, c client.Client, id string, ev any) (json.RawMessage, error) {
	data, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("fsmtemporal: encode the event for workflow %s: %w", id, err)
	}
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   id,
		UpdateName:   EventUpdate,
		Args:         []any{json.RawMessage(data)},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return nil, fmt.Errorf("fsmtemporal: update workflow %s: %w", id, err)
	}
	var st json.RawMessage
	if err := h.Get(ctx, &st); err != nil {
		return nil, fmt.Errorf("fsmtemporal: update workflow %s: %w", id, err)
	}
	return st, nil
}

// State returns the state of the machine of workflow id, as JSON.
func State(ctx context.Context, c client.Client, id string) (json.RawMessage, error) {
	v, err := c.QueryWorkflow(ctx, id, "", StateQuery)
	if err != nil {
		return nil, fmt.Errorf("fsmtemporal: query workflow %s: %w", id, err)
	}
	var st json.RawMessage
	if err := v.Get(&st); err != nil {
		return nil, fmt.Errorf("fsmtemporal: decode the state of workflow %s: %w", id, err)
	}
	return st, nil
}
