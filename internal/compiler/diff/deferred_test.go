package diff_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
)

// linkSpec is a link that defers Send while it connects (the cases add
// and remove deferrals).
const linkSpec = `version: 2
machine: Link
package: link
output:
  go: .
states:
  Idle:
    initial: true
    ignore: [Up, Send]
  Connecting:
    defer: [Send]
  Online: {}
events:
  Open: {}
  Up: {}
  Send:
    fields:
      payload: string
actions:
  Transmit:
    fields:
      payload: string
transitions:
  - from: Idle
    on: Open
    to: Connecting
  - from: Connecting
    on: Up
    to: Online
  - from: Online
    on: Send
    action: Transmit
  - from: [Connecting, Online]
    on: Open
    ignore: true
  - from: Online
    on: Up
    to: Idle
`

// TestCompareDeferral checks how fsmgen diff classifies a deferral added
// (a change of behaviour; saved machines load) and removed (saved
// machines holding the event no longer load), declared or not.
func TestCompareDeferral(t *testing.T) {
	t.Parallel()
	idle := strings.Replace(linkSpec, "    ignore: [Up, Send]\n", "    ignore: [Up]\n    defer: [Send]\n", 1)
	undeclared := strings.Replace(linkSpec, "    defer: [Send]\n", "    reject: [Send]\n", 1)
	declared := undeclared + "breaks:\n  - change: rule Connecting × Send\n    why: a link that connects refuses messages now; none are held in saved links.\n"
	tests := []struct {
		name     string
		old, new string
		breaks   int
		want     []want
	}{
		{
			name: "a deferral added", old: linkSpec, new: idle, breaks: 1,
			want: []want{{subject: "rule Idle × Send", what: "now deferred, was ignored", verdicts: []string{"behaviour=breaks"}}},
		},
		{
			name: "a deferral removed", old: linkSpec, new: undeclared, breaks: 1,
			want: []want{{subject: "rule Connecting × Send", what: "now rejected, was deferred", verdicts: []string{"saved_states=breaks", "behaviour=breaks"}}},
		},
		{
			name: "a deferral removed, declared", old: linkSpec, new: declared, breaks: 0,
			want: []want{{subject: "rule Connecting × Send", what: "now rejected, was deferred", verdicts: []string{"saved_states=breaks", "behaviour=breaks"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := diff.Compare(machine(t, "old.yaml", tt.old), machine(t, "new.yaml", tt.new))
			assert.ElementsMatch(t, tt.want, changes(rep))
			assert.Equal(t, tt.breaks, rep.Breaks(), "breaking changes")
		})
	}
}
