// Package timerset keeps the armed timers of many machines in one heap,
// as the server's engines run them: each entry points at its owner (a
// monitor, a job), an owner's armed timers are a short slice beside it,
// and the engine's loop takes the due ones in deadline order, those of
// equal deadlines in the order they were armed. A cancelled entry stays
// in the heap until it comes up, and is dropped then: cancelling costs no
// reordering.
package timerset

import (
	"container/heap"
	"math/bits"
	"slices"
	"time"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// Entry is an armed timer of an owner.
type Entry[O any] struct {
	Owner    O
	ID       fsmrt.TimerID
	Deadline time.Time

	seq       uint64 // arming order, for equal deadlines
	cancelled bool
}

// Armed is the list of an owner's armed timers, one entry per timer id.
type Armed[O any] []*Entry[O]

// index returns the index of timer id in a, or -1.
func (a Armed[O]) index(id fsmrt.TimerID) int {
	return slices.IndexFunc(a, func(t *Entry[O]) bool { return t.ID == id })
}

// Set is the timers of many owners. The zero Set is not ready: make one
// with New.
type Set[O any] struct {
	h     entries[O]
	armed func(O) *Armed[O]
	count int
}

// New returns an empty set whose owners keep their armed timers where
// armed says.
func New[O any](armed func(O) *Armed[O]) *Set[O] {
	return &Set[O]{armed: armed}
}

// Len reports how many timers are armed.
func (s *Set[O]) Len() int { return s.count }

// Reset forgets every timer: what the owners hold is left to them.
func (s *Set[O]) Reset() { s.h, s.count = entries[O]{}, 0 }

// Arm sets owner's timer id to fire at deadline, in place of the one of
// that id if it is armed.
func (s *Set[O]) Arm(owner O, id fsmrt.TimerID, deadline time.Time) {
	s.h.seq++
	t := &Entry[O]{Owner: owner, ID: id, Deadline: deadline, seq: s.h.seq}
	armed := s.armed(owner)
	if i := armed.index(id); i >= 0 {
		(*armed)[i].cancelled = true
		(*armed)[i] = t
	} else {
		*armed = append(*armed, t)
		s.count++
	}
	heap.Push(&s.h, t)
}

// Disarm cancels owner's timer id, if it is armed.
func (s *Set[O]) Disarm(owner O, id fsmrt.TimerID) {
	armed := s.armed(owner)
	if i := armed.index(id); i >= 0 {
		(*armed)[i].cancelled = true
		*armed = slices.Delete(*armed, i, i+1)
		s.count--
	}
}

// DisarmAll cancels every timer of owner.
func (s *Set[O]) DisarmAll(owner O) {
	armed := s.armed(owner)
	for _, t := range *armed {
		t.cancelled = true
	}
	s.count -= len(*armed)
	*armed = (*armed)[:0]
}

// Install arms the timers the owners hold already, made where their
// machines were loaded (none of them armed in s yet), in the owners'
// order: in one pass when they are many beside those armed (the heap is
// ordered again once rather than pushed into for each), else one by one.
func (s *Set[O]) Install(owners []O) {
	n := 0
	for _, o := range owners {
		n += len(*s.armed(o))
	}
	// A push costs about log2(size) comparisons, ordering again about
	// 2 × size.
	size := len(s.h.list) + n
	push := n*bits.Len(uint(size)) < 2*size
	for _, o := range owners {
		for _, t := range *s.armed(o) {
			s.h.seq++
			t.seq, t.cancelled = s.h.seq, false
			if push {
				heap.Push(&s.h, t)
			} else {
				s.h.list = append(s.h.list, t)
			}
		}
	}
	s.count += n
	if !push {
		heap.Init(&s.h)
	}
}

// Next returns the earliest armed timer, nil when none is.
func (s *Set[O]) Next() *Entry[O] {
	for len(s.h.list) > 0 {
		if t := s.h.list[0]; !t.cancelled {
			return t
		}
		heap.Pop(&s.h)
	}
	return nil
}

// Due disarms and returns the earliest timer whose deadline is at or
// before now; nil when none is.
func (s *Set[O]) Due(now time.Time) *Entry[O] {
	for {
		t := s.Next()
		if t == nil || t.Deadline.After(now) {
			return nil
		}
		heap.Pop(&s.h)
		armed := s.armed(t.Owner)
		if i := armed.index(t.ID); i >= 0 && (*armed)[i] == t {
			*armed = slices.Delete(*armed, i, i+1)
			s.count--
			return t
		}
		// Not armed any more (its owner was forgotten).
	}
}

// entries is the heap: by deadline, then by arming order.
type entries[O any] struct {
	list []*Entry[O]
	seq  uint64
}

func (h *entries[O]) Len() int { return len(h.list) }
func (h *entries[O]) Less(i, j int) bool {
	a, b := h.list[i], h.list[j]
	if !a.Deadline.Equal(b.Deadline) {
		return a.Deadline.Before(b.Deadline)
	}
	return a.seq < b.seq
}
func (h *entries[O]) Swap(i, j int) { h.list[i], h.list[j] = h.list[j], h.list[i] }
func (h *entries[O]) Push(x any)    { h.list = append(h.list, x.(*Entry[O])) }
func (h *entries[O]) Pop() any {
	last := h.list[len(h.list)-1]
	h.list[len(h.list)-1] = nil
	h.list = h.list[:len(h.list)-1]
	return last
}
