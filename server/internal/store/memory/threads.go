package memory

import (
	"cmp"
	"context"
	"slices"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// PutThread stores t unless a newer revision (or the same) of its owner's
// thread is stored.
func (s *Store) PutThread(ctx context.Context, t *store.Thread) (store.PutOutcome, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := threadKey{t.Owner, t.ID}
	old, has := s.threads[k]
	out := store.ThreadOutcome(has, old.Revision, old.Digest, t.Revision, t.Digest)
	if out != store.ThreadStored {
		return out, old.Revision, nil
	}
	row := *t
	row.Body = slices.Clone(t.Body)
	s.threads[k] = row
	return out, t.Revision, nil
}

// Threads returns up to limit threads of owner without their bodies, the
// most recently updated first.
func (s *Store) Threads(ctx context.Context, owner string, limit int) ([]*store.Thread, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*store.Thread, 0, len(s.threads))
	for k, t := range s.threads {
		if k.owner != owner {
			continue
		}
		t.Body = nil
		out = append(out, &t)
	}
	slices.SortFunc(out, func(a, b *store.Thread) int {
		return cmp.Or(b.Updated.Compare(a.Updated), cmp.Compare(b.ID, a.ID))
	})
	return out[:min(limit, len(out))], nil
}

// Thread returns owner's thread id, or nil.
func (s *Store) Thread(ctx context.Context, owner, id string) (*store.Thread, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.threads[threadKey{owner, id}]
	if !ok {
		return nil, nil
	}
	t.Body = slices.Clone(t.Body)
	return &t, nil
}
