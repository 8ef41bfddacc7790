package fsmtemporal

import (
	"encoding/json"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// RejectedType is the type of the application error an update fails with
// when the machine rejects its event; its message is the machine's reason.
const RejectedType = "fsmtemporal.Rejected"

// rejected is the error an update reports for the machine's refusal.
func rejected(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), RejectedType, err)
}

// validate is the update's validator: it accepts the event when the machine,
// as it is now, would take it. It steps a copy of the machine (Save, then
// Open), so that a rejected update changes nothing and, refused before it is
// accepted, writes nothing to the history. When events are still to come
// before the update's (see settled), the state it would meet is not known
// yet: the validator accepts it, and the handler answers with the machine's
// refusal if its turn brings one.
func (r *run[M, E, A, X]) validate(ctx workflow.Context, raw json.RawMessage) error {
	ev, err := r.def.UnmarshalEvent(raw)
	if err != nil {
		return fmt.Errorf("fsmtemporal: %s: the update is not an event of the machine: %w", r.def.Name, err)
	}
	if !r.settled(ctx) {
		return nil
	}
	saved, err := r.m.Save()
	if err != nil {
		return fmt.Errorf("fsmtemporal: %s: save the machine to check the event: %w", r.def.Name, err)
	}
	c, rec, err := r.def.Open(saved)
	if err != nil {
		return fmt.Errorf("fsmtemporal: %s: load a copy of the machine to check the event: %w", r.def.Name, err)
	}
	rec.Begin(workflow.Now(ctx).UTC())
	if err := c.HandleEvent(ev); err != nil {
		if errors.Is(err, fsmrt.ErrRejected) {
			return rejected(err)
		}
		return fmt.Errorf("fsmtemporal: %s: %w", r.def.Name, err)
	}
	return nil
}

// settled reports whether the machine has taken every event that came
// before: no signal left in its channel, no update accepted and not yet
// answered, no step performing its actions, no event an activity reported
// and no timer fired that it has yet to take. A signal and an update that
// reach the workflow in one task are both delivered before its code runs,
// so that the machine has not yet taken the signal when the update's
// validator asks.
func (r *run[M, E, A, X]) settled(ctx workflow.Context) bool {
	return !r.stepping && !r.pending()
}

// update is the update's handler: the event, validated, waits its turn in
// the inbox; the answer is the state after its step.
func (r *run[M, E, A, X]) update(ctx workflow.Context, raw json.RawMessage) (json.RawMessage, error) {
	ev, err := r.def.UnmarshalEvent(raw)
	if err != nil { // the validator let it through: it decoded there
		return nil, fmt.Errorf("fsmtemporal: %s: the update is not an event of the machine: %w", r.def.Name, err)
	}
	f, set := workflow.NewFuture(ctx)
	r.waiting++
	r.inbox.Send(ctx, request[E]{ev: ev, reply: set})
	var st json.RawMessage
	err = f.Get(ctx, &st)
	return st, err
}

// state answers the query: the machine's state as JSON.
func (r *run[M, E, A, X]) state() (json.RawMessage, error) {
	data, err := json.Marshal(r.def.State(r.m))
	if err != nil {
		return nil, fmt.Errorf("fsmtemporal: %s: encode the state: %w", r.def.Name, err)
	}
	return data, nil
}

// ended reports whether the machine has ended.
func (r *run[M, E, A, X]) ended() bool { return r.def.Terminal != nil && r.def.Terminal(r.m) }

// tooLong reports whether the run should continue as new.
func (r *run[M, E, A, X]) tooLong(ctx workflow.Context) bool {
	info := workflow.GetInfo(ctx)
	return info.GetContinueAsNewSuggested() || (r.opts.MaxHistory > 0 && info.GetCurrentHistoryLength() >= r.opts.MaxHistory)
}

// settle hands every update still waiting to the machine and waits until
// every handler has returned, so that none is left unanswered when the run
// ends.
func (r *run[M, E, A, X]) settle(ctx workflow.Context) error {
	for {
		for {
			var req request[E]
			if !r.inbox.ReceiveAsync(&req) {
				break
			}
			r.answer(ctx, req)
		}
		if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) || r.waiting > 0 }); err != nil {
			return err
		}
		if r.waiting == 0 {
			return nil
		}
	}
}

// finish completes the run of an ended machine: the updates waiting are
// answered (with the machine's refusal, as a rule), the signals left are
// handed to it (and logged as rejected), and the result is its Save JSON.
func (r *run[M, E, A, X]) finish(ctx workflow.Context) (json.RawMessage, error) {
	if err := r.settle(ctx); err != nil {
		return nil, err
	}
	r.takeReported(ctx)
	for {
		var raw json.RawMessage
		if !r.signals.ReceiveAsync(&raw) {
			break
		}
		r.signal(ctx, raw)
	}
	saved, err := r.m.Save()
	if err != nil {
		return nil, fmt.Errorf("fsmtemporal: %s: save the ended machine: %w", r.def.Name, err)
	}
	return saved, nil
}

// continueAsNew ends the run with a new one that carries the machine as Save
// saves it, and the signals that arrived and were not handled.
func (r *run[M, E, A, X]) continueAsNew(ctx workflow.Context) error {
	if err := r.settle(ctx); err != nil {
		return err
	}
	// What the updates' activities reported is the machine's before it is
	// saved: the next run starts from its Save alone.
	r.takeReported(ctx)
	saved, err := r.m.Save()
	if err != nil {
		return fmt.Errorf("fsmtemporal: %s: save the machine to continue as new: %w", r.def.Name, err)
	}
	in := Input{Saved: saved}
	for {
		var raw json.RawMessage
		if !r.signals.ReceiveAsync(&raw) {
			break
		}
		in.Pending = append(in.Pending, raw)
	}
	workflow.GetLogger(ctx).Info("fsmtemporal: continuing as new", "machine", r.def.Name, "history", workflow.GetInfo(ctx).GetCurrentHistoryLength(), "pending", len(in.Pending))
	return workflow.NewContinueAsNewError(ctx, r.def.Name, in)
}
