package monitorengine

import (
	"container/heap"
	"slices"
	"time"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// timerEntry is an armed timer. A cancelled entry stays in the heap until
// it comes up, and is then dropped.
type timerEntry struct {
	mon       *mon
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
		if e := h.entries[0]; !e.cancelled {
			return e
		}
		heap.Pop(h)
	}
	return nil
}

// armed returns the index of m's timer id in m.timers, or -1.
func (m *mon) armed(id fsmrt.TimerID) int {
	for i, t := range m.timers {
		if t.id == id {
			return i
		}
	}
	return -1
}

// arm sets m's timer id to fire at deadline, replacing one of that id.
func (e *Engine) arm(m *mon, id fsmrt.TimerID, deadline time.Time) {
	e.timers.seq++
	t := &timerEntry{mon: m, id: id, deadline: deadline, seq: e.timers.seq}
	if i := m.armed(id); i >= 0 {
		m.timers[i].cancelled = true
		m.timers[i] = t
	} else {
		m.timers = append(m.timers, t)
		e.armedCount.Add(1)
	}
	heap.Push(&e.timers, t)
}

// disarm cancels m's timer id, if it is armed.
func (e *Engine) disarm(m *mon, id fsmrt.TimerID) {
	if i := m.armed(id); i >= 0 {
		m.timers[i].cancelled = true
		m.timers = slices.Delete(m.timers, i, i+1)
		e.armedCount.Add(-1)
	}
}

// disarmAll cancels every timer of m.
func (e *Engine) disarmAll(m *mon) {
	for len(m.timers) > 0 {
		e.disarm(m, m.timers[0].id)
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
		m := t.mon
		i := m.armed(t.id)
		if i < 0 || m.timers[i] != t {
			continue // not armed any more (its monitor was deleted)
		}
		m.timers = slices.Delete(m.timers, i, i+1)
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
