package memory_test

import (
	"testing"

	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/store/memory"
	"github.com/fsmgen/fsmgen/server/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Opener{New: func(t *testing.T) func() store.Store {
		return func() store.Store { return memory.New() }
	}})
}
