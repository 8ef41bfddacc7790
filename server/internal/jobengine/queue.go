package jobengine

import (
	"container/heap"
)

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
