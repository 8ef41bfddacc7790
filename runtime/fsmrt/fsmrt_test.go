package fsmrt_test

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// The kinds of a two-state machine, as a generated package declares them.
type (
	stateKind  uint8
	eventKind  uint8
	actionKind uint8
)

func (k stateKind) String() string  { return fsmrt.KindName(k, "stateKind", []string{"Idle", "Busy"}) }
func (k eventKind) String() string  { return fsmrt.KindName(k, "eventKind", []string{"Go", "Stop"}) }
func (k actionKind) String() string { return fsmrt.KindName(k, "actionKind", []string{"Beep"}) }

var desc = fsmrt.Desc[stateKind, eventKind, actionKind]{
	Package: "toy",
	Machine: "Toy",
	Rules: []fsmrt.Rule[stateKind, eventKind, actionKind]{
		{Kind: fsmrt.RuleTransition, From: 1, Event: 1, To: 2, Actions: []actionKind{1}, Label: "Idle --Go--> Busy / Beep"},
		{Kind: fsmrt.RuleIgnore, From: 2, Event: 1, Label: "Busy --Go--> ignored"},
		{Kind: fsmrt.RuleReject, From: 1, Event: 2, Reason: "not busy", Label: "Idle --Stop--> rejected: not busy"},
	},
}

func TestKindName(t *testing.T) {
	tests := []struct {
		k             stateKind
		want, inState string
	}{
		{1, "Idle", "Idle"},
		{2, "Busy", "Busy"},
		{0, "stateKind(0)", "no state"},
		{3, "stateKind(3)", "stateKind(3)"},
		{255, "stateKind(255)", "stateKind(255)"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.k.String())
		assert.Equal(t, tt.inState, fsmrt.InState(tt.k))
	}
}

func TestRuleKindString(t *testing.T) {
	assert.Equal(t, []string{"transition", "ignore", "reject", "RuleKind(9)"},
		[]string{fsmrt.RuleTransition.String(), fsmrt.RuleIgnore.String(), fsmrt.RuleReject.String(), fsmrt.RuleKind(9).String()})
}

// observe makes c's observer record the steps it is told of, and check
// that c is busy while it runs.
func observe(t *testing.T, c *fsmrt.Core[stateKind, eventKind, actionKind]) *[]fsmrt.Step[stateKind, eventKind] {
	steps := &[]fsmrt.Step[stateKind, eventKind]{}
	c.SetObserver(func(s fsmrt.Step[stateKind, eventKind]) {
		assert.True(t, c.Busy, "the observer runs while the step is handed out")
		*steps = append(*steps, s)
	})
	return steps
}

// TestCoreSteps checks what the core tells the observer and returns for
// each kind of rule, and the busy flag that refuses a reentrant call.
func TestCoreSteps(t *testing.T) {
	c := fsmrt.NewCore(&desc, 1)
	steps := observe(t, &c)

	c.State = 2
	c.Start(0, 1)
	require.NoError(t, c.Finish())
	assert.False(t, c.Busy)
	require.NoError(t, c.Ignore(1))
	c.State = 1
	err := c.Reject(2)
	assert.False(t, c.Busy, "a rejection leaves the machine free")
	assert.Equal(t, []fsmrt.Step[stateKind, eventKind]{
		{From: 1, Event: 1, Rule: 0, To: 2},
		{From: 2, Event: 1, Rule: 1, To: 2},
		{From: 1, Event: 2, Rule: 2, To: 1},
	}, *steps)

	require.ErrorIs(t, err, fsmrt.ErrRejected)
	var rej *fsmrt.RejectedError[stateKind, eventKind]
	require.ErrorAs(t, err, &rej)
	assert.Equal(t, stateKind(1), rej.State)
	assert.Equal(t, eventKind(2), rej.Event)
	assert.Equal(t, "toy: Idle rejects Stop: not busy", err.Error())
	assert.Equal(t, "Busy rejects Go: why", (&fsmrt.RejectedError[stateKind, eventKind]{State: 2, Event: 1, Reason: "why"}).Error())

	c.SetObserver(nil)
	c.Start(0, 1) // no observer: nothing to tell
	assert.True(t, c.Busy)
	assert.ErrorIs(t, c.Reentrant(), fsmrt.ErrReentrant)
	assert.ErrorContains(t, c.Reentrant(), "toy: HandleEvent called from")
}

// TestCoreBeside checks the steps of the ignores that regions of a
// parallel state take: beside a transition (Beside leaves the busy flag
// as it found it) and all together (IgnoreAll, which skips a region that
// picked none).
func TestCoreBeside(t *testing.T) {
	c := fsmrt.NewCore(&desc, 2)
	steps := observe(t, &c)
	c.Beside(1)
	assert.False(t, c.Busy, "an ignore alone starts no step")
	c.Start(0, 2)
	c.Beside(1)
	assert.True(t, c.Busy, "beside a transition the step goes on")
	require.NoError(t, c.Finish())
	require.NoError(t, c.IgnoreAll(-1, 1, 1))
	assert.False(t, c.Busy)
	step := fsmrt.Step[stateKind, eventKind]{From: 2, Event: 1, Rule: 1, To: 2}
	assert.Equal(t, []fsmrt.Step[stateKind, eventKind]{step, {From: 2, Event: 1, Rule: 0, To: 2}, step, step, step}, *steps)

	c.SetObserver(nil)
	c.Beside(1)
	assert.False(t, c.Busy, "without an observer there is nothing to tell")
}

func TestCoreErrors(t *testing.T) {
	c := fsmrt.NewCore(&desc, 1)
	var none *struct{ X int }
	assert.EqualError(t, c.NilEvent(none), "toy: Idle cannot handle a nil *struct { X int }: an event must point to a value")
	assert.EqualError(t, c.Unhandled(42), "toy: Idle cannot handle int: it is not an event of the Toy machine")
	var zero fsmrt.Core[stateKind, eventKind, actionKind]
	assert.ErrorContains(t, zero.Unhandled(42), "not initialised")
	assert.ErrorContains(t, zero.Reentrant(), "fsmgen: HandleEvent called from")
	assert.EqualError(t, desc.NoDependency("Handler"), "toy: Config.Handler is nil: the Toy machine needs one")
	assert.EqualError(t, desc.Unrestorable(nil), "toy: cannot restore <nil>: it is not a state of the Toy machine")
	assert.EqualError(t, desc.Transient("Deciding"), "toy: cannot restore the transient state Deciding: it is never at rest")
}

func TestCopyRules(t *testing.T) {
	rules := desc.CopyRules()
	require.Equal(t, desc.Rules, rules)
	rules[0].Actions[0] = 9
	rules[1].Label = "changed"
	assert.Equal(t, actionKind(1), desc.Rules[0].Actions[0], "the copy shares no memory with the table")
	assert.Equal(t, "Busy --Go--> ignored", desc.Rules[1].Label)
}

func TestCoverage(t *testing.T) {
	cov := fsmrt.NewCoverage(desc.Rules)
	assert.Equal(t, "0 of 3 rules fired (0.0%)\nnever fired: Idle --Go--> Busy / Beep\nnever fired: Busy --Go--> ignored\nnever fired: Idle --Stop--> rejected: not busy", cov.String())
	var wg sync.WaitGroup
	for _, rule := range []int{0, 2, 2, -1, 7} {
		wg.Go(func() { cov.Observe(fsmrt.Step[stateKind, eventKind]{Rule: rule}) })
	}
	wg.Wait()
	assert.InDelta(t, 200.0/3, cov.Percent(), 1e-9)
	assert.Equal(t, []string{"Idle --Go--> Busy / Beep", "Idle --Stop--> rejected: not busy"}, labels(cov.Fired()))
	assert.Equal(t, []string{"Busy --Go--> ignored"}, labels(cov.Missed()))
	fired := cov.Fired()
	fired[0].Actions[0] = 9
	assert.Equal(t, actionKind(1), desc.Rules[0].Actions[0], "Fired's rules share no memory with the table")
	assert.InDelta(t, 100.0, fsmrt.NewCoverage[stateKind, eventKind, actionKind](nil).Percent(), 1e-9)
}

func labels(rules []fsmrt.Rule[stateKind, eventKind, actionKind]) []string {
	var out []string
	for _, r := range rules {
		out = append(out, r.Label)
	}
	return out
}

// value and pointer stand for a generated state (a value) and event (a
// pointer), with the interface they implement.
type (
	kinded  interface{ isKinded() }
	value   struct{ N int }
	pointer struct {
		S string `json:"s"`
	}
)

func (value) isKinded()    {}
func (*pointer) isKinded() {}

func TestJSON(t *testing.T) {
	tests := []struct {
		kind   string
		fields any
		want   string
	}{
		{"idle", struct{}{}, `{"kind":"idle"}`},
		{"calling_llm", struct {
			Retries int `json:"retries"`
		}{2}, `{"kind":"calling_llm","retries":2}`},
		{`say "hi"`, struct {
			A, B string
		}{"a", "b"}, `{"kind":"say \"hi\"","A":"a","B":"b"}`},
	}
	for _, tt := range tests {
		got, err := fsmrt.MarshalKind(tt.kind, tt.fields)
		require.NoError(t, err)
		assert.Equal(t, tt.want, string(got))
		assert.True(t, json.Valid(got))
	}
	_, err := fsmrt.MarshalKind("bad", struct{ C chan int }{})
	assert.Error(t, err)

	assert.EqualError(t, desc.UnknownKind("event", "nope"), `toy: decode event: unknown kind "nope"`)

	decoders := map[string]fsmrt.Decoder[kinded]{
		"busy": fsmrt.Value[value, kinded](&desc, "state busy"),
		"go":   fsmrt.Pointer[pointer, kinded](&desc, "event go"),
	}
	for _, bad := range []string{`[`, `{"kind":""}`, `{}`, `{"kind":3}`, `{"Kind":"busy"}`, `{"kind":"busy"} {}`} {
		_, err := fsmrt.Unmarshal(&desc, "state", []byte(bad), decoders)
		assert.ErrorContains(t, err, "toy: decode state:", bad)
	}
	v, err := fsmrt.Unmarshal(&desc, "state", []byte(`{"kind":"busy","N":3}`), decoders)
	require.NoError(t, err)
	assert.Equal(t, value{N: 3}, v)
	p, err := fsmrt.Unmarshal(&desc, "event", []byte(`{"kind":"go","s":"x"}`), decoders)
	require.NoError(t, err)
	assert.Equal(t, &pointer{S: "x"}, p)
	_, err = fsmrt.Unmarshal(&desc, "state", []byte(`{"kind":"busy","N":"three"}`), decoders)
	assert.ErrorContains(t, err, "toy: decode state busy:")
	_, err = fsmrt.Unmarshal(&desc, "state", []byte(`{"kind":"idle"}`), decoders)
	assert.EqualError(t, err, `toy: decode state: unknown kind "idle"`)
	_, err = fsmrt.Unmarshal(&desc, "state", []byte(`{"N":3}`), decoders)
	assert.EqualError(t, err, `toy: decode state: no "kind"`)
	_, err = fsmrt.Unmarshal(&desc, "event", []byte(`{"kind":"go","s":1}`), decoders)
	var typeErr *json.UnmarshalTypeError
	assert.True(t, errors.As(err, &typeErr), "the decoding error is wrapped: %v", err)
}
