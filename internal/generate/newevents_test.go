package generate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/generate"
)

// doorSpec is a door whose Broken states ignore every other event with
// "*"; extra adds events.
func doorSpec(extra string) string {
	return `version: 2
machine: Door
package: door
output:
  go: .
states:
  Closed:
    initial: true
    ignore: [Close]
  Opened:
    ignore: [Open]
  Broken:
    states:
      Jammed:
        initial: true
    ignore: "*"
  Gone:
    terminal: true
    reject: "*"
events:
  Open: {}
  Close: {}
  Kick: {}
` + extra + `transitions:
  - from: Closed
    on: Open
    to: Opened
  - from: Opened
    on: Close
    to: Closed
  - from: [Closed, Opened]
    on: Kick
    to: Broken
  - from: Broken
    on: Kick
    to: Gone
`
}

// TestNewEventsThroughStar generates a spec, adds an event that states
// resolve with "ignore: *" or "reject: *", and checks that the next load
// names each such state and the new event once, until the code is
// regenerated.
func TestNewEventsThroughStar(t *testing.T) {
	const added = "  Paint: {}\n"
	// Closed and Opened must decide Paint themselves; Broken and Gone take it by "*".
	withRules := strings.Replace(doorSpec(added), "    ignore: [Close]\n", "    ignore: [Close, Paint]\n", 1)
	withRules = strings.Replace(withRules, "    ignore: [Open]\n", "    ignore: [Open, Paint]\n", 1)
	tests := []struct {
		name      string
		generated string // the spec the code on disk was generated from; "" for none
		spec      string
		want      []string
	}{
		{name: "never generated", spec: withRules},
		{name: "event added", generated: doorSpec(""), spec: withRules, want: []string{
			`state Broken ignores the new event Paint through "*"`,
			`state Gone rejects the new event Paint through "*"`,
		}},
		{name: "regenerated since", generated: withRules, spec: withRules},
		{name: "no event added", generated: doorSpec(""), spec: doorSpec("")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "door.yaml")
			if tt.generated != "" {
				require.NoError(t, os.WriteFile(path, []byte(tt.generated), 0o644))
				res, err := generate.Load(path)
				require.NoError(t, err)
				require.NotNil(t, res.Machine, "%s", res.Diags)
				_, err = generate.Write(res.Outputs)
				require.NoError(t, err)
			}
			require.NoError(t, os.WriteFile(path, []byte(tt.spec), 0o644))
			res, err := generate.Load(path)
			require.NoError(t, err)
			require.NotNil(t, res.Machine, "%s", res.Diags)
			var got []string
			for _, d := range res.Diags.Warnings() {
				if strings.Contains(d.Msg, "new event") {
					got = append(got, d.Msg)
				}
			}
			require.Len(t, got, len(tt.want), "%s", res.Diags)
			for i, w := range tt.want {
				assert.Contains(t, got[i], w)
			}
		})
	}
}
