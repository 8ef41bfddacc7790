package apikey_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/server/internal/apikey"
	"github.com/fsmgen/fsmgen/server/internal/pgtest"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/store/memory"
	"github.com/fsmgen/fsmgen/server/internal/store/postgres"
	"github.com/fsmgen/fsmgen/server/internal/store/sqlite"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// BenchmarkCheck measures what checking a request's token costs: a read
// of the store for every request (lookup: what the server would do without
// the cache), and the Checker, which reads the store once a TTL (cached).
// docs/performance.md writes the results up.
func BenchmarkCheck(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"memory", func(b *testing.B) store.Store { return memory.New() }},
		{"sqlite", func(b *testing.B) store.Store {
			st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "s.db"))
			if err != nil {
				b.Fatal(err)
			}
			return st
		}},
		{"postgres", func(b *testing.B) store.Store {
			st, err := postgres.Open(context.Background(), pgtest.DB(b))
			if err != nil {
				b.Fatal(err)
			}
			return st
		}},
	}
	ctx := context.Background()
	for _, s := range stores {
		st := s.open(b)
		// A store with a few hundred keys, as a busy server has.
		var token string
		for i := range 300 {
			tok, k := apikey.Make(apikey.NewID(), "key", apikey.ScopeReadWrite, time.Now())
			if _, err := st.AddKey(ctx, k); err != nil {
				b.Fatal(err)
			}
			if i == 150 {
				token = tok
			}
		}
		hash := apikey.Hash(token)
		b.Run(s.name+"/lookup", func(b *testing.B) {
			for b.Loop() {
				if k, err := st.KeyByHash(ctx, hash); err != nil || k == nil {
					b.Fatal(k, err)
				}
			}
		})
		b.Run(s.name+"/cached", func(b *testing.B) {
			c := apikey.NewChecker(st, nil, nil)
			for b.Loop() {
				if k, err := c.Check(ctx, token); err != nil || k == nil {
					b.Fatal(k, err)
				}
			}
		})
		st.Close()
	}
}
