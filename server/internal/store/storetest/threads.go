package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// threadRow is a thread's row at revision rev, updated at t0 plus rev
// seconds, whose body says what it is.
func threadRow(id string, rev int64, content string) *store.Thread {
	body := fmt.Sprintf(`{"id":%q,"rev":%d,"content":%q}`, id, rev, content)
	return &store.Thread{
		Owner: "k1", ID: id, Revision: rev, Digest: fmt.Sprintf("digest-%d-%s", rev, content),
		Workspace: "/work/" + id, Provider: "anthropic", Model: "m", FirstPrompt: "fix " + id,
		Tokens: 1000 + rev, Messages: int(rev), Created: t0, Updated: t0.Add(time.Duration(rev) * time.Second),
		SyncedAt: t0.Add(time.Minute), Body: []byte(body),
	}
}

// owned is t as owner's.
func owned(owner string, t *store.Thread) *store.Thread {
	t.Owner = owner
	return t
}

// threads checks PutThread's revision rule and the reads of threads, and
// that the threads of two owners are apart.
func threads(o Opener) func(t *testing.T) {
	return func(t *testing.T) {
		ctx := context.Background()
		s, reopen := o.open(t)
		none, err := s.Thread(ctx, "k1", "absent")
		require.NoError(t, err)
		assert.Nil(t, none)
		list, err := s.Threads(ctx, "k1", 10)
		require.NoError(t, err)
		assert.Empty(t, list)

		steps := []struct {
			name    string
			row     *store.Thread
			want    store.PutOutcome
			wantRev int64
			stored  *store.Thread // what Thread reads after
		}{
			{"new", threadRow("a", 5, "five"), store.ThreadStored, 5, threadRow("a", 5, "five")},
			{"same again", threadRow("a", 5, "five"), store.ThreadUnchanged, 5, threadRow("a", 5, "five")},
			{"same revision, other content", threadRow("a", 5, "other"), store.ThreadStale, 5, threadRow("a", 5, "five")},
			{"older", threadRow("a", 3, "three"), store.ThreadStale, 5, threadRow("a", 5, "five")},
			{"newer", threadRow("a", 7, "seven"), store.ThreadStored, 7, threadRow("a", 7, "seven")},
			{"older than the newer", threadRow("a", 6, "six"), store.ThreadStale, 7, threadRow("a", 7, "seven")},
			{"another thread", threadRow("b", 2, "two"), store.ThreadStored, 2, threadRow("b", 2, "two")},
			// Another key's thread of the same ID, at an older revision,
			// then at a newer one: its own, which leaves k1's alone.
			{"another owner's a", owned("k2", threadRow("a", 1, "k2's")), store.ThreadStored, 1, owned("k2", threadRow("a", 1, "k2's"))},
			{"another owner's a, newer", owned("k2", threadRow("a", 9, "k2's")), store.ThreadStored, 9, owned("k2", threadRow("a", 9, "k2's"))},
		}
		for _, st := range steps {
			got, rev, err := s.PutThread(ctx, st.row)
			require.NoError(t, err, st.name)
			assert.Equal(t, st.want, got, st.name)
			assert.Equal(t, st.wantRev, rev, st.name)
			read, err := s.Thread(ctx, st.row.Owner, st.row.ID)
			require.NoError(t, err, st.name)
			assert.Equal(t, st.stored, read, st.name)
		}

		check := func(s store.Store) {
			list, err := s.Threads(ctx, "k1", 10)
			require.NoError(t, err)
			// a (updated t0+7s) before b (t0+2s); no bodies in a list.
			want := []*store.Thread{threadRow("a", 7, "seven"), threadRow("b", 2, "two")}
			for _, w := range want {
				w.Body = nil
			}
			assert.Equal(t, want, list)
			one, err := s.Threads(ctx, "k1", 1)
			require.NoError(t, err)
			require.Len(t, one, 1)
			assert.Equal(t, "a", one[0].ID)
			mine, err := s.Thread(ctx, "k1", "a")
			require.NoError(t, err)
			assert.Equal(t, threadRow("a", 7, "seven"), mine, "k1's a, whatever k2 pushed")
			list, err = s.Threads(ctx, "k2", 10)
			require.NoError(t, err)
			other := owned("k2", threadRow("a", 9, "k2's"))
			other.Body = nil
			assert.Equal(t, []*store.Thread{other}, list, "k2 lists its own only")
			none, err := s.Thread(ctx, "k2", "b")
			require.NoError(t, err)
			assert.Nil(t, none, "k2 reads no thread of k1")
			list, err = s.Threads(ctx, "nobody", 10)
			require.NoError(t, err)
			assert.Empty(t, list)
		}
		check(s)
		if o.Persistent {
			require.NoError(t, s.Close())
			again := reopen()
			t.Cleanup(func() { again.Close() })
			check(again)
		}
	}
}
