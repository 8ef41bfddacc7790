package emit

import (
	"fmt"
	"testing"

	"github.com/dave/jennifer/jen"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/fsm"
	"github.com/fsmgen/fsmgen/internal/spec"
)

// reentrySpec has a state, Busy, entered by two rows that carry different
// fields over: note by both, count and addr by one, items by none.
const reentrySpec = `version: 1
machine: Reentry
package: reentry
imports:
  netip: net/netip
states:
  Idle:
    initial: true
    fields:
      note: string
      count: int
    reject: [Again, Stop]
  Busy:
    fields:
      note: string
      count: int
      addr: netip.AddrPort
      items: "[]string"
    reject: [Start, Again]
  Done:
    fields:
      note: string
    reject: [Start, Stop]
events:
  Start:
    fields:
      addr: netip.AddrPort
  Again: {}
  Stop: {}
effects:
  begin:
    doc: fills the rest of Busy.
  resume:
    doc: fills the rest of Busy again.
transitions:
  - {from: Idle, on: Start, to: Busy, effect: begin}
  - {from: Done, on: Again, to: Busy, effect: resume}
  - {from: Busy, on: Stop, to: Done}
`

// TestClearSlot checks what leaving each state of reentrySpec clears: a
// field that some row into the state does not carry over is zeroed (the
// next visit must find it zero), a kept slice is truncated, a field every
// row carries over is left for the next row to overwrite, and the initial
// state, which no row enters, is cleared whole.
func TestClearSlot(t *testing.T) {
	sf, diags := spec.Parse("reentry.yaml", []byte(reentrySpec))
	require.False(t, diags.HasErrors(), "%s", diags)
	m, diags := fsm.Build(sf)
	require.NotNil(t, m, "%s", diags)
	g := &goGen{m: m, kept: keptFields(m), set: entrySets(m)}

	tests := []struct {
		state string
		want  []string
	}{
		{"Idle", []string{"m.st.Idle = Idle{}"}},
		{"Busy", []string{
			"m.st.Busy.Count = 0",
			"m.st.Busy.Addr = *new(netip.AddrPort)",
			"m.st.Busy.Items = m.st.Busy.Items[:0]",
		}},
		{"Done", nil},
	}
	for _, tt := range tests {
		t.Run(tt.state, func(t *testing.T) {
			var s *fsm.State
			for _, st := range m.States {
				if st.Name == tt.state {
					s = st
				}
			}
			require.NotNil(t, s)
			var got []string
			for _, c := range g.clearSlot(s) {
				got = append(got, fmt.Sprintf("%#v", c.(*jen.Statement)))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestZeroValue checks the zero value written for each kind of field type.
func TestZeroValue(t *testing.T) {
	m := &fsm.Machine{Imports: []fsm.Import{{Alias: "chat", Path: "example.com/chat"}}}
	tests := []struct{ typ, want string }{
		{"string", `""`},
		{"bool", "false"},
		{"int", "0"},
		{"float64", "0"},
		{"rune", "0"},
		{"[]string", "nil"},
		{"[4]byte", "*new([4]byte)"},
		{"map[string]int", "nil"},
		{"*chat.Message", "nil"},
		{"func()", "nil"},
		{"chan int", "nil"},
		{"any", "nil"},
		{"error", "nil"},
		{"chat.Request", "*new(chat.Request)"},
		{"[]chat.Message", "nil"},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			assert.Equal(t, tt.want, fmt.Sprintf("%#v", zeroValue(m, tt.typ).(*jen.Statement)))
		})
	}
}
