package fsm_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSettledAnewOnce builds testdata/specs/backwater.yaml, on which the
// witness search settled a step anew from what the histories remember
// again and again (continueRegion and continueFinal calling each other)
// until the checker ran out of memory: it now builds, every rule with a
// witness path.
func TestSettledAnewOnce(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("testdata/specs/backwater.yaml")
	require.NoError(t, err)
	m, diags := built(t, "backwater.yaml", string(src))
	assert.False(t, diags.HasErrors(), "%s", diags)
	assert.Len(t, m.Paths, len(m.AllRules()), "a path for every rule")
}
