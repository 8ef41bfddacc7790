package fsmtest

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// Accessor checks the two functions a generated package has for a field
// that a set of states shares: of reads the field and with sets it. states
// are every state of the machine, once each, as zero values; has lists
// the kinds of those with the field. of and with must answer true for
// exactly those, and false for the others and for a nil state; with must
// set the field to sample (read back with of) and keep the state's kind,
// and hand back a state without the field unchanged.
func Accessor[St Value[K], K fsmrt.Kind, T any](t *testing.T, field string, states []St, has []K, of func(St) (T, bool), with func(St, T) (St, bool), sample T) {
	t.Helper()
	var zero St
	if _, ok := of(zero); ok {
		t.Errorf("%s: a nil state has the field", field)
	}
	for _, s := range states {
		want := false
		for _, k := range has {
			want = want || s.Kind() == k
		}
		if _, ok := of(s); ok != want {
			t.Errorf("%s: reading state %v answers %v, want %v", field, s.Kind(), ok, want)
		}
		set, ok := with(s, sample)
		if ok != want {
			t.Errorf("%s: setting it in state %v answers %v, want %v", field, s.Kind(), ok, want)
		}
		if !want {
			assert.Equal(t, s, set, "%s: a state without the field is handed back as it was", field)
			continue
		}
		if set.Kind() != s.Kind() {
			t.Errorf("%s: setting it in state %v gives a state %v", field, s.Kind(), set.Kind())
			continue
		}
		got, _ := of(set)
		assert.Equal(t, sample, got, "%s: set in state %v, then read", field, s.Kind())
	}
}
