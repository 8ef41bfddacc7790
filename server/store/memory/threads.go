package memory

import (
	"cmp"
	"context"
	"slices"

	"github.com/fsmgen/fsmgen/server/store"
)

// PutThread stores t unless a newer revision (or the same) is stored.
func (s *Store) PutThread(ctx context.Context, t *store.Thread) (store.PutOutcome, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, has := s.threads[t.ID]
	out := store.ThreadOutcome(has, old.Revision, old.Digest, t.Revision, t.Digest)
	if out != store.ThreadStored {
		return out, old.Revision, nil
	}
	row := *t
	row.Body = slices.Clone(t.Body)
	s.threads[t.ID] = row
	return out, t.Revision, nil
}

// Threads returns up to limit threads without their bodies, the most
// recently updated first.
func (s *Store) Threads(ctx context.Context, limit int) ([]*store.Thread, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*store.Thread, 0, len(s.threads))
	for _, t := range s.threads {
		t.Body = nil
		out = append(out, &t)
	}
	slices.SortFunc(out, func(a, b *store.Thread) int {
		return cmp.Or(b.Updated.Compare(a.Updated), cmp.Compare(b.ID, a.ID))
	})
	return out[:min(limit, len(out))], nil
}

// Thread returns the thread id, or nil.
func (s *Store) Thread(ctx context.Context, id string) (*store.Thread, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.threads[id]
	if !ok {
		return nil, nil
	}
	t.Body = slices.Clone(t.Body)
	return &t, nil
}
