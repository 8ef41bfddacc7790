package jobengine

import (
	"container/heap"
	"slices"
	"time"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// The jobs' timers are one heap for all jobs, as the monitors' are
// (server/internal/monitorengine): each entry points at its job, a job's armed timers
// are a short slice (one at most, in the job machine), and a round takes
// every due one at once. A cancelled entry stays in the heap until it
// comes up, and is then dropped.

// timerEntry is an armed timer.
type timerEntry struct {
	job       *jobState
	id        fsmrt.TimerID
	deadline  time.Time
	seq       uint64 // arming order, for equal deadlines
	cancelled bool
}

// timerHeap orders the armed timers by deadline, then by arming order.
type timerHeap struct {
	entries []*timerEntry
	seq     uint64
}

func (h *timerHeap) Len() int { return len(h.entries) }
func (h *timerHeap) Less(i, j int) bool {
	a, b := h.entries[i], h.entries[j]
	if !a.deadline.Equal(b.deadline) {
		return a.deadline.Before(b.deadline)
	}
	return a.seq < b.seq
}
func (h *timerHeap) Swap(i, j int) { h.entries[i], h.entries[j] = h.entries[j], h.entries[i] }
func (h *timerHeap) Push(x any)    { h.entries = append(h.entries, x.(*timerEntry)) }
func (h *timerHeap) Pop() any {
	last := h.entries[len(h.entries)-1]
	h.entries[len(h.entries)-1] = nil
	h.entries = h.entries[:len(h.entries)-1]
	return last
}

// peek returns the earliest live timer, dropping cancelled ones; nil when
// none is armed.
func (h *timerHeap) peek() *timerEntry {
	for len(h.entries) > 0 {
		if t := h.entries[0]; !t.cancelled {
			return t
		}
		heap.Pop(h)
	}
	return nil
}

// armed returns the index of j's timer id in j.timers, or -1.
func (j *jobState) armed(id fsmrt.TimerID) int {
	return slices.IndexFunc(j.timers, func(t *timerEntry) bool { return t.id == id })
}

// arm sets j's timer id to fire at deadline, replacing one of that id.
func (e *Engine) arm(j *jobState, id fsmrt.TimerID, deadline time.Time) {
	e.timers.seq++
	t := &timerEntry{job: j, id: id, deadline: deadline, seq: e.timers.seq}
	if i := j.armed(id); i >= 0 {
		j.timers[i].cancelled = true
		j.timers[i] = t
	} else {
		j.timers = append(j.timers, t)
	}
	heap.Push(&e.timers, t)
}

// disarm cancels j's timer id, if it is armed.
func (e *Engine) disarm(j *jobState, id fsmrt.TimerID) {
	if i := j.armed(id); i >= 0 {
		j.timers[i].cancelled = true
		j.timers = slices.Delete(j.timers, i, i+1)
	}
}

// disarmAll cancels every timer of j.
func (e *Engine) disarmAll(j *jobState) {
	for _, t := range j.timers {
		t.cancelled = true
	}
	j.timers = j.timers[:0]
}

// armAll arms j's timers as its machine has them, at their deadlines, in
// place of those armed before.
func (e *Engine) armAll(j *jobState) {
	e.disarmAll(j)
	for _, t := range j.machine.Timers() {
		deadline := j.machine.Deadline(t.Timer)
		if deadline.IsZero() {
			deadline = e.now().Add(t.Delay)
		}
		e.arm(j, t.Timer, deadline)
	}
}

// armLoaded arms the timers decode made for the jobs it loaded (none
// armed before: a start, or a takeover after forget), in the jobs' order:
// in one pass, the heap ordered again once rather than pushed into for
// each timer.
func (e *Engine) armLoaded() {
	for _, j := range e.list {
		for _, t := range j.timers {
			if t.deadline.IsZero() {
				// Saved without its deadline: as armAll does.
				for _, mt := range j.machine.Timers() {
					if mt.Timer == t.id {
						t.deadline = e.now().Add(mt.Delay)
					}
				}
			}
			e.timers.seq++
			t.seq = e.timers.seq
			e.timers.entries = append(e.timers.entries, t)
		}
	}
	heap.Init(&e.timers)
}

// due pops the first timer whose deadline is at or before now, and
// disarms it; nil when none is due.
func (e *Engine) due(now time.Time) *timerEntry {
	for {
		t := e.timers.peek()
		if t == nil || t.deadline.After(now) {
			return nil
		}
		heap.Pop(&e.timers)
		j := t.job
		i := j.armed(t.id)
		if i < 0 || j.timers[i] != t {
			continue // not armed any more
		}
		j.timers = slices.Delete(j.timers, i, i+1)
		return t
	}
}

// runQueue holds the jobs whose run waits for a free slot, in the order
// their runs were queued (queueSeq). An entry whose job's run started or
// was cancelled since, or was queued again, is dropped when it comes up.
type runQueue []queued

// queued is an entry of the run queue.
type queued struct {
	job *jobState
	seq uint64
}

func (q runQueue) Len() int           { return len(q) }
func (q runQueue) Less(i, j int) bool { return q[i].seq < q[j].seq }
func (q runQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *runQueue) Push(x any)        { *q = append(*q, x.(queued)) }
func (q *runQueue) Pop() any {
	old := *q
	last := old[len(old)-1]
	old[len(old)-1] = queued{}
	*q = old[:len(old)-1]
	return last
}

// live reports whether the entry is its job's run still waiting.
func (x queued) live() bool { return x.job.waiting != nil && x.job.queueSeq == x.seq }

// peek returns the first job still waiting, dropping the other entries;
// nil when none waits.
func (q *runQueue) peek() *jobState {
	for q.Len() > 0 {
		if x := (*q)[0]; x.live() {
			return x.job
		}
		heap.Pop(q)
	}
	return nil
}

// enqueue puts j's waiting run at the end of the queue.
func (e *Engine) enqueue(j *jobState) {
	e.queueSeq++
	j.queueSeq = e.queueSeq
	heap.Push(&e.queue, queued{job: j, seq: j.queueSeq})
}

// requeueAt puts j's waiting run back in the queue at its place (a round
// that started it failed to write).
func (e *Engine) requeueAt(j *jobState) {
	heap.Push(&e.queue, queued{job: j, seq: j.queueSeq})
}
