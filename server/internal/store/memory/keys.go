package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// AddKey adds k unless a key of its ID exists.
func (s *Store) AddKey(ctx context.Context, k *store.Key) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.keys[k.ID]; ok {
		return false, nil
	}
	if err := s.hashFree(k); err != nil {
		return false, err
	}
	s.keys[k.ID] = *k
	return true, nil
}

// ReplaceKey stores k as the key of its ID.
func (s *Store) ReplaceKey(ctx context.Context, k *store.Key) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.hashFree(k); err != nil {
		return err
	}
	s.keys[k.ID] = *k
	return nil
}

// hashFree refuses k when another key has its hash, as a database's
// unique index does.
func (s *Store) hashFree(k *store.Key) error {
	for id, o := range s.keys {
		if id != k.ID && o.Hash == k.Hash {
			return fmt.Errorf("store key %s: key %s has its hash", k.ID, id)
		}
	}
	return nil
}

// KeyByHash returns the key whose hash is hash, or nil.
func (s *Store) KeyByHash(ctx context.Context, hash string) (*store.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.keys {
		if k.Hash == hash {
			return &k, nil
		}
	}
	return nil, nil
}

// Keys returns every key, the oldest first.
func (s *Store) Keys(ctx context.Context) ([]*store.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*store.Key, 0, len(s.keys))
	for _, k := range s.keys {
		out = append(out, &k)
	}
	slices.SortFunc(out, func(a, b *store.Key) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// RevokeKey marks key id revoked at at, unless it is revoked already.
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) (*store.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	if !ok {
		return nil, nil
	}
	if k.RevokedAt.IsZero() {
		k.RevokedAt = at
		s.keys[id] = k
	}
	return &k, nil
}

// KeyUsed records that key id was used at at.
func (s *Store) KeyUsed(ctx context.Context, id string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, ok := s.keys[id]; ok && at.After(k.LastUsedAt) {
		k.LastUsedAt = at
		s.keys[id] = k
	}
	return nil
}
