package generate_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/generate"
)

// TestAgentSpecForgottenTransition removes each transition of
// spec/agent.yaml in turn and checks that the spec then fails with the
// state × event pair it no longer handles, at the state's position.
func TestAgentSpecForgottenTransition(t *testing.T) {
	src, err := os.ReadFile("../../spec/agent.yaml")
	require.NoError(t, err)
	lines := strings.SplitAfter(string(src), "\n")
	var starts []int
	for i, l := range lines {
		if strings.HasPrefix(l, "  - from: ") {
			starts = append(starts, i)
		}
	}
	require.NotEmpty(t, starts)
	fromRE := regexp.MustCompile(`^  - from: "?([^"\n]+)"?`)
	onRE := regexp.MustCompile(`^    on: (\w+)`)
	for n, start := range starts {
		end := len(lines)
		if n+1 < len(starts) {
			end = starts[n+1]
		}
		from := fromRE.FindStringSubmatch(lines[start])[1]
		on := onRE.FindStringSubmatch(lines[start+1])
		if on == nil {
			continue // the eventless choice of a transient state: removing it is a different error
		}
		t.Run(from+"×"+on[1], func(t *testing.T) {
			edited := strings.Join(append(append([]string(nil), lines[:start]...), lines[end:]...), "")
			dir := tempModule(t)
			path := filepath.Join(dir, "agent.yaml")
			require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
			res, err := generate.Load(path)
			require.NoError(t, err)
			require.Nil(t, res.Machine, "the spec must fail without the transition")
			msg := res.Diags.Error()
			state := from
			if from == "*" {
				state = "ShuttingDown"
			}
			want := regexp.MustCompile(regexp.QuoteMeta(path) + `:\d+:3: state ` + state + ` does not handle event ` + on[1])
			assert.Regexp(t, want, msg)
		})
	}
}
