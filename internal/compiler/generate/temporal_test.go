package generate_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// ticketV1 is a support ticket run as a Temporal workflow: its glue goes
// to ../flow, beside the generated package ./ticket.
const ticketV1 = `version: 2
machine: Ticket
package: ticket
output:
  go: .
  temporal: ../flow
states:
  Open:
    initial: true
    after: {delay: 24h, to: Escalated}
  Escalated: {}
  Closed:
    terminal: true
    reject: "*"
events:
  Answer:
    fields:
      text: string
  Close: {}
actions:
  Reply:
    fields:
      text: string
transitions:
  - from: [Open, Escalated]
    on: Answer
    action: Reply
  - from: [Open, Escalated]
    on: Close
    to: Closed
`

// writeTicket writes the spec into the ticket package of a module and
// returns its path.
func writeTicket(t *testing.T, root, src string) string {
	t.Helper()
	spec := filepath.Join(root, "ticket", "ticket.yaml")
	require.NoError(t, os.WriteFile(spec, []byte(src), 0o644))
	return spec
}

// generateTicket loads the spec as fsmgen generate does and writes its
// outputs; it returns the spec's errors.
func generateTicket(t *testing.T, spec string) []string {
	t.Helper()
	res, err := generate.Load(spec)
	require.NoError(t, err)
	var errs []string
	for _, d := range res.Diags {
		if d.Severity == diag.Error {
			errs = append(errs, d.String())
		}
	}
	if len(errs) == 0 {
		_, err := generate.Write(res.Outputs)
		require.NoError(t, err)
	}
	return errs
}

// revisions returns the revisions the glue declares, as written.
func revisions(t *testing.T, root string) string {
	t.Helper()
	glue, err := os.ReadFile(filepath.Join(root, "flow", "ticket_temporal_gen.go"))
	require.NoError(t, err)
	var out []string
	for line := range strings.SplitSeq(string(glue), "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[1] == "workflow.Version" {
			out = append(out, f[0]+"="+f[3])
		}
	}
	return strings.Join(out, " ")
}

// TestTemporalRevisions walks a spec through revisions and checks what
// the generated glue declares of each: the same revision while nothing
// changes, the next for a change running workflows may move to, the next
// as the oldest supported for a declared break, and an undeclared break
// refused with the diff's reason.
func TestTemporalRevisions(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/support\n\ngo 1.26\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "ticket"), 0o755))

	withEvent := strings.Replace(ticketV1, "  Close: {}\n", "  Close: {}\n  Reopen: {}\n", 1) +
		"  - from: [Open, Escalated, Closed]\n    on: Reopen\n    ignore: true\n"
	closing := strings.Replace(withEvent, "  - from: [Open, Escalated]\n    on: Answer\n",
		"  - from: Escalated\n    on: Answer\n    to: Closed\n    action: Reply\n  - from: Open\n    on: Answer\n", 1)
	declared := closing + "breaks:\n  - change: rule Escalated × Answer\n    why: an escalated ticket closes once answered.\n"
	pure := strings.Replace(closing, "  Reply:\n", "  Reply:\n    pure: true\n", 1)
	pureDeclared := pure + "breaks:\n  - change: action Reply\n    why: a reply is only recorded in the workflow now.\n"
	steps := []struct {
		name string
		src  string
		want string // revisions, or the error's text
		err  bool
	}{
		{"first revision", ticketV1, "Revision=1 MinRevision=1", false},
		{"generated again", ticketV1, "Revision=1 MinRevision=1", false},
		{"a doc changes nothing the diff sees", strings.Replace(ticketV1, "machine: Ticket\n", "machine: Ticket\ndoc: A support ticket.\n", 1), "Revision=1 MinRevision=1", false},
		{"an event added: running workflows move on", withEvent, "Revision=2 MinRevision=1", false},
		{"an undeclared break is refused", closing, "breaks the workflows running revision 2 of Ticket", true},
		{"a declared break leaves the older revisions behind", declared, "Revision=3 MinRevision=3", false},
		{"an action made pure, undeclared, is refused", pure, "action Reply: now pure breaks the workflows running revision 3 of Ticket: the Temporal glue's Pure interface gains the method Reply and Activities loses it", true},
		{"an action made pure, declared", pureDeclared, "Revision=4 MinRevision=4", false},
		{"no longer pure, declared", closing + "breaks:\n  - change: action Reply\n    why: replies are sent again.\n", "Revision=5 MinRevision=5", false},
	}
	for _, s := range steps {
		errs := generateTicket(t, writeTicket(t, root, s.src))
		if s.err {
			require.NotEmpty(t, errs, s.name)
			assert.Contains(t, strings.Join(errs, "\n"), s.want, s.name)
			assert.Contains(t, strings.Join(errs, "\n"), "declare it under breaks:", s.name)
			continue
		}
		require.Empty(t, errs, s.name)
		assert.Equal(t, s.want, revisions(t, root), s.name)
		res, err := generate.Load(filepath.Join(root, "ticket", "ticket.yaml"))
		require.NoError(t, err)
		stale, err := generate.Check(res.Outputs)
		require.NoError(t, err)
		assert.Empty(t, stale, "%s: generating again changes nothing", s.name)
	}
}

// recordOf is the revision record of revision 1 of spec.
func recordOf(spec string) string {
	data, err := json.Marshal(map[string]any{"machine": "Ticket", "revision": 1, "min_revision": 1, "spec": spec})
	if err != nil {
		panic(err) // a map of strings and numbers always encodes
	}
	return string(data)
}

// TestTemporalRefused checks the specs and records output.temporal
// cannot work with.
func TestTemporalRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		src    string
		record string // the revision record on disk, if any
		want   string
	}{
		{"no generated package", strings.Replace(ticketV1, "  go: .\n", "", 1), "", "output.temporal needs output.go"},
		{"a type the workflow cannot name", strings.ReplaceAll(ticketV1, "text: string", "text: note"), "", "has type note, which package ticket does not export"},
		{"not a package name", strings.Replace(ticketV1, "temporal: ../flow", "temporal: ../flow-2", 1), "", `"flow-2" names the workflow's package`},
		{"a corrupt record", ticketV1, `{"machine": "Ticket", "revision": "one"}`, "is not a revision record"},
		{"another machine's record", ticketV1, `{"machine": "Order", "revision": 1, "min_revision": 1}`, `records machine "Order", not Ticket`},
		{"revisions out of order", ticketV1, `{"machine": "Ticket", "revision": 1, "min_revision": 2}`, "records revisions 2 to 1"},
		{"an action made pure", strings.Replace(ticketV1, "  Reply:\n", "  Reply:\n    pure: true\n", 1), recordOf(ticketV1), "a durable engine now runs Reply inside the workflow, not as an activity"},
		{"a recorded spec that no longer checks", ticketV1, `{"machine": "Ticket", "revision": 4, "min_revision": 1, "spec": "version: 2\nmachine: Ticket\n"}`, "the spec of revision 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/support\n\ngo 1.26\n"), 0o644))
			require.NoError(t, os.MkdirAll(filepath.Join(root, "ticket"), 0o755))
			if tt.record != "" {
				require.NoError(t, os.MkdirAll(filepath.Join(root, "flow"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(root, "flow", "ticket_temporal_revision.json"), []byte(tt.record), 0o644))
			}
			if strings.Contains(tt.src, "text: note") {
				require.NoError(t, os.WriteFile(filepath.Join(root, "ticket", "note.go"), []byte("package ticket\n\ntype note string\n"), 0o644))
			}
			errs := generateTicket(t, writeTicket(t, root, tt.src))
			require.NotEmpty(t, errs)
			assert.Contains(t, strings.Join(errs, "\n"), tt.want)
			_, err := os.Stat(filepath.Join(root, "flow", "ticket_temporal_gen.go"))
			assert.ErrorIs(t, err, os.ErrNotExist, "nothing is written")
		})
	}
}
