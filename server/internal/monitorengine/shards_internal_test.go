package monitorengine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// TestWriteBy checks when a fenced round's write must end: before the
// first of its leases may run out, and not at all once one may have.
func TestWriteBy(t *testing.T) {
	t.Parallel()
	now := time.Now()
	e := &Engine{held: map[int]time.Time{1: now.Add(time.Minute), 2: now.Add(time.Hour), 3: now.Add(-time.Millisecond)}}
	for _, tc := range []struct {
		name   string
		fence  *store.Fence
		by     time.Time
		mayRun bool
	}{
		{"no fence (one instance)", nil, time.Time{}, true},
		{"no shard", &store.Fence{Instance: "a"}, time.Time{}, true},
		{"one lease", &store.Fence{Instance: "a", Shards: []int{2}}, now.Add(time.Hour), true},
		{"the first to run out", &store.Fence{Instance: "a", Shards: []int{2, 1}}, now.Add(time.Minute), true},
		{"a lease that may have run out", &store.Fence{Instance: "a", Shards: []int{1, 3}}, now.Add(-time.Millisecond), false},
		{"a shard not held", &store.Fence{Instance: "a", Shards: []int{1, 4}}, time.Time{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			by, ok := e.writeBy(tc.fence)
			assert.Equal(t, tc.mayRun, ok)
			assert.True(t, tc.by.Equal(by), "by %s, want %s", by, tc.by)
		})
	}
}
