package tools

import (
	"fmt"
	"os"
	"testing"

	"github.com/fsmgen/fsmgen/internal/gittest"
)

// TestMain keeps the machine's git configuration out of every test (see
// gittest.Isolate), so that the tests may run in parallel.
func TestMain(m *testing.M) {
	cleanup, err := gittest.Isolate()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}
