package generate_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExamplesCatchABrokenGuard breaks a hand-written guard of the agent in
// a copy of the module (canRetry then retries errors that are not
// retryable) and checks that the generated example tests fail, naming the
// rule the spec gives the example and the example.
func TestExamplesCatchABrokenGuard(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a copy of the module")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	dir := t.TempDir()
	for _, sub := range []string{"go.mod", "go.sum", "gen", "behavior", "chat", "runtime/fsmrt"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, sub)), 0o755))
		out, err := exec.Command("cp", "-r", filepath.Join(root, sub), filepath.Join(dir, sub)).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	guard := filepath.Join(dir, "behavior", "agent.go")
	src, err := os.ReadFile(guard)
	require.NoError(t, err)
	const right = "return err.Retryable() && retries < a.cfg.MaxRetries"
	require.Contains(t, string(src), right, "canRetry as the test expects to find it")
	broken := strings.Replace(string(src), right, "return retries < a.cfg.MaxRetries", 1)
	require.NoError(t, os.WriteFile(guard, []byte(broken), 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-run", "TestExamples", "./gen/agent/")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the example tests must fail: %s", out)
	assert.Contains(t, string(out), "--- FAIL: TestExamples/CallingLlm_--LlmError_[else]-->_WaitingForUserInput_{giveUp}_/_DisplayError:_a_bad_request_is_not_retried", "the failing example, by name")
	assert.Contains(t, string(out), "the spec says this example takes CallingLlm --LlmError [else]--> WaitingForUserInput {giveUp} / DisplayError; the behaviour made the machine take")
}
