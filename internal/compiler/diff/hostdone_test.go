package diff_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
)

// hostRestSpec holds, in region Work of On, a parallel state Edit whose
// done transition has a guard and, with %QELSE%, an else, and inside its
// region Text a composite state Loading whose done transition has a guard
// and, with %ELSE%, an else: without them, Text rests in Pulled, and Edit
// with every region final, when Ok does not hold.
const hostRestSpec = `version: 2
machine: Host
package: host
states:
  Idle:
    initial: true
    ignore: [Fin, Show, Stop]
  On:
    parallel: true
    ignore: [Go, Fin, Show]
    states:
      Work:
        states:
          Browse: {initial: true}
          Edit:
            parallel: true
            done:
              guards:
                - if: Ok
                  to: Browse
%QELSE%            states:
              Text:
                states:
                  Loading:
                    initial: true
                    done:
                      guards:
                        - if: Ok
                          to: Printed
%ELSE%                    states:
                      Pulling: {initial: true}
                      Pulled: {final: true}
                  Printed: {final: true}
              View:
                states:
                  Hidden: {initial: true}
                  Shown: {final: true}
      Net:
        states:
          N1: {initial: true}
events:
  Go: {}
  Fin: {}
  Show: {}
  Stop: {}
guards:
  Ok: {}
transitions:
  - {from: Idle, on: Go, to: On}
  - {from: Browse, on: Go, to: Edit}
  - {from: Pulling, on: Fin, to: Pulled}
  - {from: Loading, on: Show, to: Printed}
  - {from: Hidden, on: Show, to: Shown}
  - {from: On, on: Stop, to: Idle}
`

// TestCompareHostedDoneElse is TestCompareRegionDoneElse and
// TestCompareParallelDoneElse inside a parallel state inside a region:
// losing the else lets Text rest in Pulled, or Edit with every region
// final, and every saved machine loads; gaining it breaks the machines
// saved resting so.
func TestCompareHostedDoneElse(t *testing.T) {
	t.Parallel()
	spec := func(elses ...string) string {
		return strings.NewReplacer("%ELSE%", elses[0], "%QELSE%", elses[1]).Replace(hostRestSpec)
	}
	withElse := spec("                        - else: true\n                          to: Printed\n", "                - else: true\n                  to: Browse\n")
	without := spec("", "")
	tests := []struct {
		name     string
		old, new string
		want     want
	}{
		{name: "Loading's lost", old: withElse, new: without,
			want: want{subject: "state Pulled", what: "may rest now: the done transition of Loading may be refused by every guard"}},
		{name: "Edit's lost", old: withElse, new: without,
			want: want{subject: "state Edit", what: "may rest with every region final now: its done transition may be refused by every guard"}},
		{name: "Loading's gained", old: without, new: withElse,
			want: want{subject: "state Pulled", what: "left at once: the done transition of Loading now has an else", verdicts: []string{"saved_states=breaks"}}},
		{name: "Edit's gained", old: without, new: withElse,
			want: want{subject: "state Edit", what: "no longer rests with every region final: its done transition now has an else", verdicts: []string{"saved_states=breaks"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := diff.Compare(machine(t, "old.yaml", tt.old), machine(t, "new.yaml", tt.new))
			got := changes(rep)
			assert.Contains(t, got, tt.want, fmt.Sprint(got))
		})
	}
}

// TestCompareHostedDoneGained is the "done added" case of
// TestCompareParallelDone inside a parallel state inside a region: Edit
// gaining a done transition that always leaves it breaks the machines
// saved with Work in Edit and every region of Edit final; one whose
// guards may all fail breaks none.
func TestCompareHostedDoneGained(t *testing.T) {
	t.Parallel()
	spec := func(qdone string) string {
		return strings.NewReplacer("%ELSE%", "", "            done:\n              guards:\n                - if: Ok\n                  to: Browse\n%QELSE%", qdone).Replace(hostRestSpec)
	}
	none := spec("")
	tests := []struct {
		name string
		new  string
		want want
	}{
		{name: "without guards", new: spec("            done: {to: Browse}\n"),
			want: want{subject: "state Edit", what: "gained a done transition", verdicts: []string{"saved_states=breaks"}}},
		{name: "with an else", new: spec("            done:\n              guards:\n                - if: Ok\n                  to: Browse\n                - else: true\n                  to: Browse\n"),
			want: want{subject: "state Edit", what: "gained a done transition", verdicts: []string{"saved_states=breaks"}}},
		{name: "guards without else", new: spec("            done:\n              guards:\n                - if: Ok\n                  to: Browse\n"),
			want: want{subject: "state Edit", what: "gained a done transition that every guard may refuse"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := diff.Compare(machine(t, "old.yaml", none), machine(t, "new.yaml", tt.new))
			got := changes(rep)
			assert.Contains(t, got, tt.want, fmt.Sprint(got))
		})
	}
}
