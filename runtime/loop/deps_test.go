package loop_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// module is the import path of this module.
const module = "github.com/fsmgen/fsmgen"

// agentOnly are the packages of the products (the coding agent, the
// server, their machines) that the generic loop, and a machine driven by
// it, must not need.
var agentOnly = []string{module + "/gen/agent", module + "/agent", module + "/gen/monitor", module + "/gen/job", module + "/server"}

// TestNoAgentDependencies lists the dependencies (tests included) of the
// loop and of the traffic light, a second machine it drives, and fails on
// any package of the agent or of an LLM SDK: the loop is generic.
func TestNoAgentDependencies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pkg string
	}{
		{module + "/runtime/loop"},
		{module + "/examples/trafficlight"},
	}
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command("go", "list", "-deps", "-test", tt.pkg).Output()
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				t.Fatalf("go list: %v\n%s", err, exit.Stderr)
			}
			require.NoError(t, err)
			deps := strings.Fields(string(out))
			require.Contains(t, deps, tt.pkg)
			for _, dep := range deps {
				assert.False(t, forbidden(dep), "%s depends on %s", tt.pkg, dep)
			}
		})
	}
}

// forbidden reports whether a package belongs to a product or to an LLM SDK.
func forbidden(pkg string) bool {
	for _, p := range agentOnly {
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return true
		}
	}
	lower := strings.ToLower(pkg)
	return strings.Contains(lower, "anthropic") || strings.Contains(lower, "openai")
}

// TestForbidden checks what forbidden catches.
func TestForbidden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pkg  string
		want bool
	}{
		{module + "/gen/agent", true},
		{module + "/agent/chat", true},
		{module + "/agent/behavior", true},
		{module + "/agent/internal/llm", true},
		{module + "/server/internal/jobengine", true},
		{module + "/gen/monitor", true},
		{"github.com/anthropics/anthropic-sdk-go/option", true},
		{"github.com/openai/openai-go", true},
		{module + "/runtime/loop", false},
		{module + "/agentx", false},
		{"context", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, forbidden(tt.pkg), tt.pkg)
	}
}
