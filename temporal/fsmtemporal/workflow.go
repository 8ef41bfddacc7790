package fsmtemporal

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// The names the workflow answers to; the client helpers use them.
const (
	// EventSignal is the signal that carries an event, as its JSON.
	EventSignal = "fsm.event"
	// EventUpdate is the update that carries an event and answers with the
	// machine's state after it, or the machine's refusal.
	EventUpdate = "fsm.event"
	// StateQuery answers with the machine's state as JSON.
	StateQuery = "fsm.state"
)

// Input is what a run of the workflow starts from: nothing for a new
// machine; after continue-as-new, the machine as Save saved it and the
// events that had arrived and were not handled yet.
type Input struct {
	Saved   json.RawMessage   `json:"saved,omitempty"`
	Pending []json.RawMessage `json:"pending,omitempty"`
}

// Options says how the workflow runs a machine's actions and when it
// continues as new. The zero value is usable.
type Options[E, A any] struct {
	// Activity are the options of every action's activity; zero fields
	// take the defaults (a start-to-close timeout of one minute, Temporal's
	// retry policy: retried until it succeeds).
	Activity workflow.ActivityOptions
	// Actions overrides Activity per action, by the action's name (the
	// ActionName of the Def): its retry policy, timeouts, task queue (the
	// host the action needs), heartbeat timeout.
	Actions map[string]workflow.ActivityOptions
	// InWorkflow lists actions performed inside the workflow instead of by
	// an activity, by name: pure bookkeeping, which must be deterministic
	// and do no I/O. Such an action writes nothing to the history.
	InWorkflow map[string]func(ctx workflow.Context, a A) error
	// ActionFailed, when set, turns an action that failed for good (its
	// retry policy gave up) into an event for the machine, as a Handler
	// reports a result; without it, or when it returns false, the failure
	// is logged and the workflow goes on.
	ActionFailed func(a A, err error) (E, bool)
	// MaxHistory continues the workflow as new once its history holds this
	// many events, besides when Temporal suggests it; zero leaves it to
	// Temporal.
	MaxHistory int
}

// WorkflowRegistry is where RegisterWorkflow registers the workflow: a
// worker.Worker, or the SDK's test environment.
type WorkflowRegistry interface {
	RegisterWorkflowWithOptions(w any, opts workflow.RegisterOptions)
}

// RegisterWorkflow registers the workflow that runs def's machine, under
// def.Name.
func RegisterWorkflow[M Machine[E], E, A, X any](r WorkflowRegistry, def *Def[M, E, A, X], opts Options[E, A]) {
	r.RegisterWorkflowWithOptions(Workflow(def, opts), workflow.RegisterOptions{Name: def.Name})
}

// Workflow returns the workflow function that runs def's machine: one
// workflow a machine, its events from signals and updates, its actions as
// activities, its timers as workflow timers, its state answered by a
// query. It completes with the machine's Save JSON once def.Terminal says
// the machine has ended.
func Workflow[M Machine[E], E, A, X any](def *Def[M, E, A, X], opts Options[E, A]) func(workflow.Context, Input) (json.RawMessage, error) {
	return func(ctx workflow.Context, in Input) (json.RawMessage, error) {
		r, err := start(ctx, def, opts, in)
		if err != nil {
			return nil, err
		}
		return r.run(ctx, in.Pending)
	}
}

// changeID is the change workflow.GetVersion keys the spec's revision by.
func changeID(name string) string { return "fsmgen/" + name }

// run is one run of the workflow: the machine, its timers and the updates
// waiting for their step. Only the workflow's main coroutine steps the
// machine; an update hands its event over through inbox.
type run[M Machine[E], E, A, X any] struct {
	def  *Def[M, E, A, X]
	opts Options[E, A]
	m    M
	rec  Recorder[A]
	// timers are the machine's running timers, by id; ids keeps them in
	// order, so that the selector sees them in the same order on replay.
	timers map[fsmrt.TimerID]*wtimer
	ids    []fsmrt.TimerID
	inbox  workflow.Channel // of request
	// signals is the channel of EventSignal: a signal still in it is an
	// event the machine has yet to take.
	signals workflow.ReceiveChannel
	// stepping is true while a step performs its actions.
	stepping bool
	// waiting counts the updates sending to inbox, not yet received.
	waiting int
	// reported are the events the activities of the steps so far reported
	// (see Report), which the machine has not taken yet.
	reported []E
}

// wtimer is a running workflow timer.
type wtimer struct {
	deadline time.Time
	fired    workflow.Future
	cancel   workflow.CancelFunc
}

// request is an update's event, and where its step's outcome goes.
type request[E any] struct {
	ev    E
	reply workflow.Settable
}

// start checks the revision, opens the machine, registers the query and
// the update and arms the machine's timers.
func start[M Machine[E], E, A, X any](ctx workflow.Context, def *Def[M, E, A, X], opts Options[E, A], in Input) (*run[M, E, A, X], error) {
	if err := def.Check(); err != nil {
		// A bug of the code, not of the workflow: the task fails, and is
		// retried by a worker with a Def that is whole.
		panic(err.Error())
	}
	// Once per run: a marker in the history, and the refusal of a history
	// recorded under a revision this code cannot continue.
	workflow.GetVersion(ctx, changeID(def.Name), def.MinRevision, def.Revision)
	var saved []byte
	if len(in.Saved) > 0 {
		saved = in.Saved
	}
	m, rec, err := def.Open(saved)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("fsmtemporal: %s: the saved machine does not load: %v (start the workflow with data this revision's Load reads)", def.Name, err),
			"fsmtemporal.Load", err)
	}
	r := &run[M, E, A, X]{def: def, opts: opts, m: m, rec: rec, timers: map[fsmrt.TimerID]*wtimer{}, inbox: workflow.NewChannel(ctx),
		signals: workflow.GetSignalChannel(ctx, EventSignal)}
	if err := workflow.SetQueryHandler(ctx, StateQuery, r.state); err != nil {
		return nil, fmt.Errorf("fsmtemporal: register the query %s: %w", StateQuery, err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, EventUpdate, r.update, workflow.UpdateHandlerOptions{Validator: r.validate}); err != nil {
		return nil, fmt.Errorf("fsmtemporal: register the update %s: %w", EventUpdate, err)
	}
	if def.Timers != nil {
		for _, id := range def.Timers(m) {
			r.arm(ctx, id, def.Deadline(m, id))
		}
	}
	return r, nil
}

// run handles events until the machine ends or the run continues as new.
func (r *run[M, E, A, X]) run(ctx workflow.Context, pending []json.RawMessage) (json.RawMessage, error) {
	for _, raw := range pending {
		r.signal(ctx, raw)
	}
	// The loop waits on a condition, never blocked receiving from the
	// signal channel: a signal then stays in the channel's buffer until the
	// machine takes it, where an update's validator sees it (see settled).
	// Cancelling the workflow does not end the wait: the machine decides
	// when its run ends, as it did when the loop waited on a selector.
	wait, _ := workflow.NewDisconnectedContext(ctx)
	for {
		if len(r.reported) == 0 {
			if r.ended() {
				return r.finish(ctx)
			}
			if r.tooLong(ctx) {
				return nil, r.continueAsNew(ctx)
			}
		}
		if err := workflow.Await(wait, r.pending); err != nil {
			return nil, fmt.Errorf("fsmtemporal: %s: wait for the next event: %w", r.def.Name, err)
		}
		r.next(ctx)
	}
}

// pending reports whether an event waits for the machine: a signal, an
// update's event, a timer that fired, or an event an activity reported.
func (r *run[M, E, A, X]) pending() bool {
	return r.signals.Len() > 0 || r.waiting > 0 || r.fired() != nil || len(r.reported) > 0
}

// fired returns the id of the first of the machine's timers, in id order,
// that has fired and that the machine has not taken yet, or nil.
func (r *run[M, E, A, X]) fired() *fsmrt.TimerID {
	for i, id := range r.ids {
		if r.timers[id].fired.IsReady() {
			return &r.ids[i]
		}
	}
	return nil
}

// next hands the machine the next event: a signal, else an update's event,
// else a timer's firing, else what an activity reported. Events that
// arrived while an activity ran go before what it reported, as on
// runtime/loop, where a Handler's result queues behind them (the user's
// interrupt while a command ran, say).
func (r *run[M, E, A, X]) next(ctx workflow.Context) {
	var raw json.RawMessage
	if r.signals.ReceiveAsync(&raw) {
		r.signal(ctx, raw)
		return
	}
	var req request[E]
	if r.inbox.ReceiveAsync(&req) {
		r.answer(ctx, req)
		return
	}
	if p := r.fired(); p != nil {
		id := *p
		t := r.timers[id]
		r.drop(id)
		if t.fired.Get(ctx, nil) != nil {
			return // the workflow is being cancelled
		}
		// A timer the machine no longer runs is ignored, never rejected.
		_ = r.step(ctx, r.def.TimerFired(id, t.deadline, workflow.Now(ctx).UTC()))
		return
	}
	if len(r.reported) > 0 {
		r.takeOneReported(ctx)
	}
}

// takeReported hands the machine the events its activities reported, in
// order, with those their steps' activities report in turn, before the
// run ends or continues as new.
func (r *run[M, E, A, X]) takeReported(ctx workflow.Context) {
	for len(r.reported) > 0 {
		r.takeOneReported(ctx)
	}
}

// takeOneReported hands the machine the first event reported and not yet
// taken; one it rejects is logged by step and dropped.
func (r *run[M, E, A, X]) takeOneReported(ctx workflow.Context) {
	ev := r.reported[0]
	r.reported = r.reported[1:]
	_ = r.step(ctx, ev)
}

// signal handles an event that came as a signal: one that does not decode,
// or that the machine rejects, is logged and dropped (a signal has no one
// to answer).
func (r *run[M, E, A, X]) signal(ctx workflow.Context, raw json.RawMessage) {
	ev, err := r.def.UnmarshalEvent(raw)
	if err != nil {
		workflow.GetLogger(ctx).Warn("fsmtemporal: dropped a signal that is not an event of the machine", "machine", r.def.Name, "error", err)
		return
	}
	_ = r.step(ctx, ev) // a rejection is logged by step
}

// answer handles an update's event and settles its reply: the state after
// the step, or the machine's refusal.
func (r *run[M, E, A, X]) answer(ctx workflow.Context, req request[E]) {
	r.waiting--
	if err := r.step(ctx, req.ev); err != nil {
		req.reply.SetError(rejected(err))
		return
	}
	req.reply.Set(r.state())
}

// step hands ev to the machine and performs the actions of its step, in
// order. A rejected event returns the machine's error (wrapping
// fsmrt.ErrRejected), which only an update reports; any other error of the
// machine's is a bug of the machine's code and fails the workflow task,
// which Temporal retries once the code is fixed.
func (r *run[M, E, A, X]) step(ctx workflow.Context, ev E) error {
	r.rec.Begin(workflow.Now(ctx).UTC())
	if err := r.m.HandleEvent(ev); err != nil {
		if errors.Is(err, fsmrt.ErrRejected) {
			workflow.GetLogger(ctx).Info("fsmtemporal: the machine rejected an event", "machine", r.def.Name, "reason", err.Error())
			return err
		}
		panic(fmt.Sprintf("fsmtemporal: %s: HandleEvent: %v (a machine fails only on a bug in its code; fix it and the workflow task is retried)", r.def.Name, err))
	}
	r.stepping = true
	defer func() { r.stepping = false }()
	for _, a := range slices.Clone(r.rec.Actions()) {
		r.perform(ctx, a)
	}
	return nil
}

// perform performs one action of a step: a timer's start or cancel, an
// action inside the workflow, or an activity, waited for.
func (r *run[M, E, A, X]) perform(ctx workflow.Context, a A) {
	var id fsmrt.TimerID
	op := NotTimer
	if r.def.Timer != nil {
		id, op = r.def.Timer(a)
	}
	switch op {
	case StartTimer:
		r.arm(ctx, id, r.def.Deadline(r.m, id))
		return
	case CancelTimer:
		if t := r.timers[id]; t != nil {
			t.cancel()
			r.drop(id)
		}
		return
	}
	name := r.def.ActionName(a)
	var err error
	pure := false
	if r.def.InWorkflow != nil {
		pure, err = r.def.InWorkflow(ctx, a)
	}
	switch fn := r.opts.InWorkflow[name]; {
	case pure:
	case fn != nil:
		err = fn(ctx, a)
	default:
		var evs []E
		evs, err = r.activity(ctx, name, a)
		r.reported = append(r.reported, evs...)
	}
	if err == nil {
		return
	}
	if r.opts.ActionFailed != nil {
		if ev, ok := r.opts.ActionFailed(a, err); ok {
			// The event's own rejection is the machine's word on it.
			_ = r.step(ctx, ev)
			return
		}
	}
	workflow.GetLogger(ctx).Error("fsmtemporal: an action failed for good", "machine", r.def.Name, "action", name, "error", err)
}

// activity runs action a as the activity Name.name, waits for it and
// returns the events it reported.
func (r *run[M, E, A, X]) activity(ctx workflow.Context, name string, a A) ([]E, error) {
	data, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("fsmtemporal: encode action %s: %w", name, err)
	}
	o := r.opts.Activity
	if ao, ok := r.opts.Actions[name]; ok {
		o = ao
	}
	if o.StartToCloseTimeout == 0 && o.ScheduleToCloseTimeout == 0 {
		o.StartToCloseTimeout = time.Minute
	}
	var raws []json.RawMessage
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, o), ActivityName(r.def.Name, name), json.RawMessage(data)).Get(ctx, &raws); err != nil {
		return nil, err
	}
	evs := make([]E, 0, len(raws))
	for _, raw := range raws {
		ev, err := r.def.UnmarshalEvent(raw)
		if err != nil {
			// The worker checked it: a worker of another revision sent it.
			workflow.GetLogger(ctx).Warn("fsmtemporal: dropped a reported event that is not an event of the machine", "machine", r.def.Name, "action", name, "error", err)
			continue
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// arm starts a workflow timer for timer id at deadline (at once when it has
// passed), replacing any the id had.
func (r *run[M, E, A, X]) arm(ctx workflow.Context, id fsmrt.TimerID, deadline time.Time) {
	if t := r.timers[id]; t != nil {
		t.cancel()
		r.drop(id)
	}
	tctx, cancel := workflow.WithCancel(ctx)
	d := max(deadline.Sub(workflow.Now(ctx)), 0)
	r.timers[id] = &wtimer{deadline: deadline, fired: workflow.NewTimer(tctx, d), cancel: cancel}
	i, _ := slices.BinarySearch(r.ids, id)
	r.ids = slices.Insert(r.ids, i, id)
}

// drop forgets timer id.
func (r *run[M, E, A, X]) drop(id fsmrt.TimerID) {
	delete(r.timers, id)
	if i, ok := slices.BinarySearch(r.ids, id); ok {
		r.ids = slices.Delete(r.ids, i, i+1)
	}
}
