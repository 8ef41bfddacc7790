package timerset_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
	"github.com/fsmgen/fsmgen/server/internal/timerset"
)

// owner is a machine with armed timers.
type owner struct {
	name   string
	timers timerset.Armed[*owner]
}

func armedOf(o *owner) *timerset.Armed[*owner] { return &o.timers }

// drain returns what fires up to now, as owner/id@seconds.
func drain(s *timerset.Set[*owner], t0, now time.Time) []string {
	var out []string
	for t := s.Due(now); t != nil; t = s.Due(now) {
		out = append(out, fmt.Sprintf("%s/%d@%d", t.Owner.name, t.ID, int(t.Deadline.Sub(t0).Seconds())))
	}
	return out
}

func TestSet(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for _, tt := range []struct {
		name  string
		steps func(s *timerset.Set[*owner], a, b *owner)
		until int
		want  []string
		armed int // left armed after the drain
	}{
		{"deadline order, equal deadlines in arming order", func(s *timerset.Set[*owner], a, b *owner) {
			s.Arm(a, 1, at(5))
			s.Arm(b, 1, at(3))
			s.Arm(b, 2, at(5))
			s.Arm(a, 2, at(1))
		}, 10, []string{"a/2@1", "b/1@3", "a/1@5", "b/2@5"}, 0},
		{"only what is due", func(s *timerset.Set[*owner], a, b *owner) {
			s.Arm(a, 1, at(5))
			s.Arm(b, 1, at(6))
		}, 5, []string{"a/1@5"}, 1},
		{"arming an id again replaces it", func(s *timerset.Set[*owner], a, b *owner) {
			s.Arm(a, 1, at(2))
			s.Arm(a, 1, at(7))
		}, 10, []string{"a/1@7"}, 0},
		{"a disarmed timer does not fire", func(s *timerset.Set[*owner], a, b *owner) {
			s.Arm(a, 1, at(2))
			s.Arm(a, 2, at(3))
			s.Disarm(a, 1)
			s.Disarm(b, 1) // not armed: nothing
		}, 10, []string{"a/2@3"}, 0},
		{"disarm all", func(s *timerset.Set[*owner], a, b *owner) {
			s.Arm(a, 1, at(2))
			s.Arm(a, 2, at(3))
			s.Arm(b, 1, at(4))
			s.DisarmAll(a)
		}, 10, []string{"b/1@4"}, 0},
		{"install: the owners' timers in their order", func(s *timerset.Set[*owner], a, b *owner) {
			s.Arm(b, 9, at(4))
			a.timers = append(a.timers, &timerset.Entry[*owner]{Owner: a, ID: 1, Deadline: at(4)}, &timerset.Entry[*owner]{Owner: a, ID: 2, Deadline: at(1)})
			s.Install([]*owner{a})
		}, 10, []string{"a/2@1", "b/9@4", "a/1@4"}, 0},
		{"reset forgets every timer", func(s *timerset.Set[*owner], a, b *owner) {
			s.Arm(a, 1, at(2))
			s.Reset()
			a.timers = nil
			s.Arm(b, 1, at(3))
		}, 10, []string{"b/1@3"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := timerset.New(armedOf)
			a, b := &owner{name: "a"}, &owner{name: "b"}
			tt.steps(s, a, b)
			assert.Equal(t, tt.want, drain(s, t0, at(tt.until)))
			assert.Equal(t, tt.armed, s.Len())
			assert.Len(t, append(a.timers, b.timers...), tt.armed, "what the owners hold")
		})
	}
}

// TestInstallMany installs many timers beside few (one pass, ordered
// again once) and few beside many (pushed one by one): both fire every
// timer, in deadline order.
func TestInstallMany(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name          string
		before, added int
	}{
		{"many beside few", 1, 1000},
		{"few beside many", 1000, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := timerset.New(armedOf)
			var owners []*owner
			for i := range tt.before {
				s.Arm(&owner{name: fmt.Sprint("old", i)}, 1, t0.Add(time.Duration(i%7)*time.Second))
			}
			for i := range tt.added {
				o := &owner{name: fmt.Sprint("new", i)}
				o.timers = append(o.timers, &timerset.Entry[*owner]{Owner: o, ID: fsmrt.TimerID(i % 3), Deadline: t0.Add(time.Duration(i%5) * time.Second)})
				owners = append(owners, o)
			}
			s.Install(owners)
			require.Equal(t, tt.before+tt.added, s.Len())
			var last *timerset.Entry[*owner]
			n := 0
			for e := s.Due(t0.Add(time.Hour)); e != nil; e = s.Due(t0.Add(time.Hour)) {
				if last != nil {
					require.False(t, e.Deadline.Before(last.Deadline), "deadline order")
				}
				last = e
				n++
			}
			assert.Equal(t, tt.before+tt.added, n)
			assert.Zero(t, s.Len())
		})
	}
}
