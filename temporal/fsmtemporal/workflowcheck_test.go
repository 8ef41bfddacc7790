package fsmtemporal_test

import (
	"os/exec"
	"testing"
)

// TestWorkflowCheck runs the SDK's static determinism check, workflowcheck
// (a tool of this module), over the module: no workflow function of the
// adapter, nor anything it calls, reads the clock, draws random numbers,
// starts goroutines, uses Go channels or ranges over a map. The generated
// machine, called through the Def, is checked by replaying recorded
// histories (orderflow's TestReplay) instead.
func TestWorkflowCheck(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("workflowcheck type-checks the module and the SDK from source: a while")
	}
	cmd := exec.Command("go", "tool", "workflowcheck", "-config", "workflowcheck.yaml", "./...")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("workflowcheck: %v\n%s", err, out)
	}
}
