package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/pgtest"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/store/postgres"
	"github.com/fsmgen/fsmgen/server/internal/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var opener = storetest.Opener{Persistent: true, New: func(t *testing.T) func() store.Store {
	url := pgtest.DB(t)
	return func() store.Store {
		s, err := postgres.Open(context.Background(), url)
		require.NoError(t, err)
		return s
	}
}}

func TestConformance(t *testing.T) { storetest.Run(t, opener) }

func TestShared(t *testing.T) { storetest.RunShared(t, opener) }

// TestMigrateTwice opens a database from several instances at once: one
// migrates it, the others find it migrated.
func TestMigrateTwice(t *testing.T) {
	url := pgtest.DB(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			s, err := postgres.Open(context.Background(), url)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		require.NoError(t, <-errs)
	}
}
