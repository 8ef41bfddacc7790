package monitors

import (
	"container/heap"
	"time"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// timerKey names a running timer: its monitor's id and the machine's id
// for it.
type timerKey struct {
	monitor int64
	id      fsmrt.TimerID
}

// timerEntry is an armed timer. A cancelled entry stays in the heap until
// it comes up, and is then dropped.
type timerEntry struct {
	key       timerKey
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
		if e := h.entries[0]; !e.cancelled {
			return e
		}
		heap.Pop(h)
	}
	return nil
}

// arm sets m's timer id to fire at deadline, replacing one of that id.
func (e *Engine) arm(m *mon, id fsmrt.TimerID, deadline time.Time) {
	if old := m.timers[id]; old != nil {
		old.cancelled = true
	} else {
		e.armedCount.Add(1)
	}
	if m.timers == nil {
		m.timers = map[fsmrt.TimerID]*timerEntry{}
	}
	e.timers.seq++
	t := &timerEntry{key: timerKey{m.row.ID, id}, deadline: deadline, seq: e.timers.seq}
	m.timers[id] = t
	heap.Push(&e.timers, t)
}

// disarm cancels m's timer id, if it is armed.
func (e *Engine) disarm(m *mon, id fsmrt.TimerID) {
	if t := m.timers[id]; t != nil {
		t.cancelled = true
		delete(m.timers, id)
		e.armedCount.Add(-1)
	}
}

// disarmAll cancels every timer of m.
func (e *Engine) disarmAll(m *mon) {
	for id := range m.timers {
		e.disarm(m, id)
	}
}

// due pops up to limit timers whose deadline is at or before now, in
// deadline order, each with its monitor.
func (e *Engine) due(now time.Time, limit int) []dueTimer {
	var out []dueTimer
	for len(out) < limit {
		t := e.timers.peek()
		if t == nil || t.deadline.After(now) {
			break
		}
		heap.Pop(&e.timers)
		m := e.byID[t.key.monitor]
		if m == nil || m.timers[t.key.id] != t {
			continue // its monitor was deleted
		}
		delete(m.timers, t.key.id)
		e.armedCount.Add(-1)
		out = append(out, dueTimer{m, t})
	}
	return out
}

// dueTimer is a timer that fires, with its monitor.
type dueTimer struct {
	mon   *mon
	entry *timerEntry
}
