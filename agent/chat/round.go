package chat

import (
	"encoding/json"
	"fmt"
)

// ToolRound is the tool calls of one LLM reply and how far each has got:
// pending, running with a progress report, or completed with an outcome.
//
// A ToolRound is an immutable value, cheap to copy: Progress and Complete
// return the round with one more report and leave the receiver as it was,
// so a round handed out earlier (in a saved state, an action) never
// changes. Like a [Conversation], rounds keep their reports in storage
// that copies share while they are used in a line, as a state machine uses
// them: a round started from a conversation with [Conversation.StartRound]
// uses that conversation's storage, so that a session's rounds, one after
// another, allocate nothing once it has grown.
//
// The zero ToolRound has no calls.
type ToolRound struct {
	calls []ToolCall
	log   *messageLog
	start int // the round's first report in log.reports
	n     int // the round's number of reports
	// completed counts the completed calls; done has bit i set when call
	// i < 64 has completed, so that the common questions (is a call
	// pending, how many are) need no look at the reports.
	completed int
	done      uint64
}

// toolReport is one report of a round: call index, status and what came
// with it.
type toolReport struct {
	call     int
	status   ToolStatus
	progress ToolProgress
	outcome  ToolOutcome
}

// StartRound returns a round of calls, all pending, whose reports share
// the conversation's storage. The calls must not be modified afterwards.
func (c Conversation) StartRound(calls []ToolCall) ToolRound {
	r := ToolRound{calls: calls[:len(calls):len(calls)], log: c.log}
	if c.log != nil {
		r.start = len(c.log.reports)
	}
	return r
}

// NewToolRound returns a round of calls, all pending, with storage of its
// own. The calls must not be modified afterwards.
func NewToolRound(calls []ToolCall) ToolRound {
	return ToolRound{calls: calls[:len(calls):len(calls)]}
}

// Len returns the number of calls.
func (r *ToolRound) Len() int { return len(r.calls) }

// Calls returns the calls in the LLM's order. The slice shares memory with
// the round: read it, never modify it.
func (r *ToolRound) Calls() []ToolCall { return r.calls }

// reports returns the round's reports, oldest first.
func (r *ToolRound) reports() []toolReport {
	if r.log == nil {
		return nil
	}
	return r.log.reports[r.start : r.start+r.n]
}

// Execution returns call i and how far it has got.
func (r *ToolRound) Execution(i int) ToolExecution {
	e := ToolExecution{Call: r.calls[i], Status: ToolPending}
	reps := r.reports()
	for j := range reps {
		if rep := &reps[j]; rep.call == i {
			e.Status = rep.status
			if rep.status == ToolCompleted {
				e.Outcome = rep.outcome
			} else {
				e.Progress = rep.progress
			}
		}
	}
	return e
}

// status returns where call i stands.
func (r *ToolRound) status(i int) ToolStatus {
	s := ToolPending
	reps := r.reports()
	for j := range reps {
		if reps[j].call == i {
			s = reps[j].status
		}
	}
	return s
}

// outcome returns the outcome of call i, or nil when it has not
// completed. It points into the round's storage: read it, never modify it.
func (r *ToolRound) outcome(i int) *ToolOutcome {
	reps := r.reports()
	for j := len(reps) - 1; j >= 0; j-- {
		if rep := &reps[j]; rep.call == i {
			if rep.status == ToolCompleted {
				return &rep.outcome
			}
			return nil
		}
	}
	return nil
}

// Executions returns every call and how far it has got, in the LLM's
// order, in a new slice.
func (r ToolRound) Executions() []ToolExecution {
	out := make([]ToolExecution, len(r.calls))
	for i := range r.calls {
		out[i] = r.Execution(i)
	}
	return out
}

// isCompleted reports whether call i has completed.
func (r *ToolRound) isCompleted(i int) bool {
	if i < 64 {
		return r.done&(1<<i) != 0
	}
	return r.status(i) == ToolCompleted
}

// Pending returns the index of the first call with the given ID that has
// not completed, or -1: a reply may repeat an ID, and each completion
// completes the first still-pending call with it.
func (r *ToolRound) Pending(callID string) int {
	for i := range r.calls {
		if r.calls[i].ID == callID && !r.isCompleted(i) {
			return i
		}
	}
	return -1
}

// PendingCount returns the number of calls that have not completed.
func (r *ToolRound) PendingCount() int { return len(r.calls) - r.completed }

// Progress returns the round with call i running with progress p.
func (r ToolRound) Progress(i int, p ToolProgress) ToolRound {
	r.report(i, ToolRunning).progress = p
	return r
}

// Complete returns the round with call i completed with outcome o.
func (r ToolRound) Complete(i int, o ToolOutcome) ToolRound {
	if !r.isCompleted(i) {
		r.completed++
		if i < 64 {
			r.done |= 1 << i
		}
	}
	r.report(i, ToolCompleted).outcome = o
	return r
}

// report adds a report to r, a copy its caller returns, for call i with
// status, and returns that report, to fill in. It appends to the shared
// storage when the round is the last one written there; otherwise
// (another copy reported first, or there is no storage) it takes storage
// of its own. The report is filled where it lies: a report built elsewhere
// and copied in would cost more than the rest of the update. (It updates
// r in place, through a pointer, where returning the round would copy it
// twice more.)
func (r *ToolRound) report(i int, status ToolStatus) *toolReport {
	end := r.start + r.n
	switch {
	case r.log == nil || len(r.log.reports) != end:
		fresh := make([]toolReport, r.n, max(2*(r.n+1), 8))
		copy(fresh, r.reports())
		r.log, r.start, end = &messageLog{reports: fresh}, 0, r.n
	case end == cap(r.log.reports):
		// Full: double, keeping every round's reports where they were.
		grown := make([]toolReport, end, 2*end+8)
		copy(grown, r.log.reports)
		r.log.reports = grown
	}
	r.log.reports = r.log.reports[:end+1]
	rep := &r.log.reports[end]
	rep.call, rep.status = i, status
	rep.progress, rep.outcome = ToolProgress{}, ToolOutcome{}
	r.n++
	return rep
}

// Completed summarises the round's completed calls for the post-tools
// hook, in the LLM's order, in a new slice.
func (r ToolRound) Completed() []CompletedTool {
	var out []CompletedTool
	for i := range r.calls {
		if e := r.Execution(i); e.Status == ToolCompleted {
			out = append(out, CompletedTool{CallID: e.Call.ID, ToolName: e.Call.Name, Succeeded: !e.Outcome.IsError})
		}
	}
	return out
}

// Equal reports whether two rounds have the same calls, each as far on.
func (r ToolRound) Equal(o ToolRound) bool {
	if len(r.calls) != len(o.calls) {
		return false
	}
	for i := range r.calls {
		a, b := r.Execution(i), o.Execution(i)
		if a.Call.ID != b.Call.ID || a.Call.Name != b.Call.Name || string(a.Call.Arguments) != string(b.Call.Arguments) || a.Call.Malformed != b.Call.Malformed ||
			a.Status != b.Status || a.Progress != b.Progress || a.Outcome != b.Outcome {
			return false
		}
	}
	return true
}

// MarshalJSON encodes the round as the list of its executions.
func (r ToolRound) MarshalJSON() ([]byte, error) {
	if r.calls == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(r.Executions())
}

// UnmarshalJSON decodes the list MarshalJSON writes.
func (r *ToolRound) UnmarshalJSON(data []byte) error {
	var execs []ToolExecution
	if err := json.Unmarshal(data, &execs); err != nil {
		return fmt.Errorf("decode tool round: %w", err)
	}
	if len(execs) == 0 {
		*r = ToolRound{}
		return nil
	}
	calls := make([]ToolCall, len(execs))
	for i, e := range execs {
		calls[i] = e.Call
	}
	round := NewToolRound(calls)
	for i, e := range execs {
		switch e.Status {
		case ToolPending:
		case ToolRunning:
			round = round.Progress(i, e.Progress)
		case ToolCompleted:
			round = round.Complete(i, e.Outcome)
		default:
			return fmt.Errorf("decode tool round: call %d (%s) has status %q: want pending, running or completed", i, e.Call.ID, e.Status)
		}
	}
	*r = round
	return nil
}
