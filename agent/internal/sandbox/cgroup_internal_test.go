package sandbox

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestOutsideCommand checks which cgroup a sandbox takes for the agent's
// from the one /proc/self/cgroup shows: not the cgroup of a command this
// process is starting at that moment, but that of another agent's command
// (an agent run inside another's sandbox), or any other, as it is.
func TestOutsideCommand(t *testing.T) {
	t.Parallel()
	own := fmt.Sprintf("%s%d-7", cgroupPrefix, os.Getpid())
	other := fmt.Sprintf("%s%d-7", cgroupPrefix, os.Getpid()+1)
	tests := []struct {
		name, shown, want string
	}{
		{"the agent's own", "/user.slice", "/user.slice"},
		{"a command this agent is starting", "/user.slice/" + own, "/user.slice"},
		{"a command of this agent at the root", "/" + own, "/"},
		{"another agent's command, which holds this agent", "/user.slice/" + other, "/user.slice/" + other},
		{"a name that only starts alike", "/user.slice/fsmgen-sandbox-x", "/user.slice/fsmgen-sandbox-x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, outsideCommand(tt.shown))
		})
	}
}
