package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/store/sqlite"
	"github.com/fsmgen/fsmgen/server/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Opener{Persistent: true, New: func(t *testing.T) func() store.Store {
		path := filepath.Join(t.TempDir(), "s.db")
		return func() store.Store {
			s, err := sqlite.Open(context.Background(), path)
			require.NoError(t, err)
			return s
		}
	}})
}
