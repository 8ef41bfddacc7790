package phonecalls_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/bench/cpuclock"
	"github.com/fsmgen/fsmgen/bench/phonecalls"
	"github.com/fsmgen/fsmgen/examples/phonecall"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// newGenerated makes the generated machine in its initial state, handing
// its actions to h. It is the one place that calls the generated
// constructor.
func newGenerated(h phonecall.Handler) (*phonecall.Machine, error) {
	return phonecall.New(phonecall.Config{Handler: h})
}

// callCycle is the call the benchmark repeats, from OffHook back to
// OffHook: dial, dial again while it rings, connect, mute, set the volume,
// switch to the speakerphone, unmute, hold, set the volume on hold, unhold
// (back on the speakerphone: Talking's history), back to the handset, dial
// while connected (ignored), hold, hold again (ignored), leave a message.
// Every event is accepted or ignored, none refused.
func callCycle() []phonecall.Event {
	return []phonecall.Event{
		&phonecall.CallDialed{Callee: "qmuntal"},
		&phonecall.CallDialed{Callee: "looplab"},
		&phonecall.CallConnected{},
		&phonecall.MuteMicrophone{},
		&phonecall.SetVolume{Volume: 7},
		&phonecall.SpeakerOn{},
		&phonecall.UnmuteMicrophone{},
		&phonecall.PlacedOnHold{},
		&phonecall.SetVolume{Volume: 3},
		&phonecall.TakenOffHold{},
		&phonecall.SpeakerOff{},
		&phonecall.CallDialed{Callee: "nobody"},
		&phonecall.PlacedOnHold{},
		&phonecall.PlacedOnHold{},
		&phonecall.LeftMessage{},
	}
}

// cycleActions are the actions of one callCycle, in order.
var cycleActions = []phonecall.Action{
	&phonecall.Dial{Callee: "qmuntal"},
	&phonecall.StartRingingTone{},
	&phonecall.StopRingingTone{},
	&phonecall.Dial{Callee: "looplab"},
	&phonecall.StartRingingTone{},
	&phonecall.StopRingingTone{},
	&phonecall.StartCallTimer{},
	&phonecall.Mute{},
	&phonecall.ChangeVolume{Volume: 7},
	&phonecall.RouteToSpeaker{},
	&phonecall.Unmute{},
	&phonecall.PlayHoldMusic{},
	&phonecall.ChangeVolume{Volume: 3},
	&phonecall.StopHoldMusic{},
	&phonecall.RouteToHandset{},
	&phonecall.PlayHoldMusic{},
	&phonecall.StopHoldMusic{},
	&phonecall.StopCallTimer{},
}

// machine is a contender's phone fed the generated package's events,
// converted to its own form where it has one.
type machine interface {
	handle(ev phonecall.Event) error
	kind() phonecall.StateKind
}

type generatedMachine struct{ m *phonecall.Machine }

func (g generatedMachine) handle(ev phonecall.Event) error { return g.m.HandleEvent(ev) }
func (g generatedMachine) kind() phonecall.StateKind       { return g.m.Kind() }

type switchMachine struct{ m *phonecalls.Switch }

func (s switchMachine) handle(ev phonecall.Event) error { return s.m.HandleEvent(ev) }
func (s switchMachine) kind() phonecall.StateKind       { return s.m.Kind() }

type statelessMachine struct{ m *phonecalls.Stateless }

func (s statelessMachine) handle(ev phonecall.Event) error {
	trigger, args := phonecalls.Trigger(ev)
	return s.m.Fire(trigger, args...)
}
func (s statelessMachine) kind() phonecall.StateKind { return s.m.Kind() }

type looplabMachine struct{ m *phonecalls.Looplab }

func (l looplabMachine) handle(ev phonecall.Event) error {
	name, args := phonecalls.Trigger(ev)
	return l.m.Event(name, args...)
}
func (l looplabMachine) kind() phonecall.StateKind { return l.m.Kind() }

// contenders are the four phones; the generated one comes first, as the
// reference the others are compared with.
var contenders = []struct {
	name string
	make func(h phonecall.Handler) (machine, error)
}{
	{"generated", func(h phonecall.Handler) (machine, error) {
		m, err := newGenerated(h)
		return generatedMachine{m}, err
	}},
	{"handwritten", func(h phonecall.Handler) (machine, error) { return switchMachine{phonecalls.NewSwitch(h)}, nil }},
	{"stateless", func(h phonecall.Handler) (machine, error) { return statelessMachine{phonecalls.NewStateless(h)}, nil }},
	{"looplab", func(h phonecall.Handler) (machine, error) { return looplabMachine{phonecalls.NewLooplab(h)}, nil }},
}

// step is what one event did to a phone.
type step struct {
	Event    phonecall.EventKind
	State    phonecall.StateKind
	Actions  []phonecall.Action
	Rejected bool
}

// run feeds evs to a phone newPhone makes, one at a time, and returns
// what each did. An error other than a refusal fails the test.
func run(t *testing.T, newPhone func(phonecall.Handler) (machine, error), evs []phonecall.Event) []step {
	t.Helper()
	rec := &phonecall.Recorder{}
	m, err := newPhone(rec)
	require.NoError(t, err)
	var steps []step
	for i, ev := range evs {
		rec.Actions = nil
		err := m.handle(ev)
		rejected := errors.Is(err, fsmrt.ErrRejected)
		if !rejected {
			require.NoError(t, err, "event %d (%s)", i, ev.Kind())
		}
		steps = append(steps, step{Event: ev.Kind(), State: m.kind(), Actions: rec.Actions, Rejected: rejected})
	}
	return steps
}

// every is one event of each kind.
func every() []phonecall.Event {
	return []phonecall.Event{
		&phonecall.CallDialed{Callee: "someone"},
		&phonecall.CallConnected{},
		&phonecall.LeftMessage{},
		&phonecall.PlacedOnHold{},
		&phonecall.TakenOffHold{},
		&phonecall.PhoneHurledAgainstWall{},
		&phonecall.MuteMicrophone{},
		&phonecall.UnmuteMicrophone{},
		&phonecall.SetVolume{Volume: 4},
		&phonecall.SpeakerOn{},
		&phonecall.SpeakerOff{},
	}
}

// TestSameSteps drives the four phones with the same events and checks
// that each takes the generated machine's steps: the same state, the
// same actions with the same values in the same order, and the same
// events refused. The scripts send every event in every state (reached
// from OffHook), the benchmark's call twice over, and stateless's own
// example.
func TestSameSteps(t *testing.T) {
	paths := []struct {
		state phonecall.StateKind
		path  []phonecall.Event
	}{
		{phonecall.StateOffHook, nil},
		{phonecall.StateRinging, []phonecall.Event{&phonecall.CallDialed{Callee: "a"}}},
		{phonecall.StateHandset, []phonecall.Event{&phonecall.CallDialed{Callee: "a"}, &phonecall.CallConnected{}}},
		{phonecall.StateSpeakerphone, []phonecall.Event{&phonecall.CallDialed{Callee: "a"}, &phonecall.CallConnected{}, &phonecall.SpeakerOn{}}},
		{phonecall.StateOnHold, []phonecall.Event{&phonecall.CallDialed{Callee: "a"}, &phonecall.CallConnected{}, &phonecall.PlacedOnHold{}}},
		{phonecall.StateOnHold, []phonecall.Event{&phonecall.CallDialed{Callee: "a"}, &phonecall.CallConnected{}, &phonecall.SpeakerOn{}, &phonecall.PlacedOnHold{}}},
		{phonecall.StatePhoneDestroyed, []phonecall.Event{&phonecall.CallDialed{Callee: "a"}, &phonecall.CallConnected{}, &phonecall.PlacedOnHold{}, &phonecall.PhoneHurledAgainstWall{}}},
	}
	type script struct {
		name string
		evs  []phonecall.Event
	}
	var scripts []script
	for _, p := range paths {
		for _, ev := range every() {
			scripts = append(scripts, script{p.state.String() + "/" + ev.Kind().String(), append(append([]phonecall.Event{}, p.path...), ev)})
		}
	}
	scripts = append(scripts,
		script{"the benchmark's call, twice", append(callCycle(), callCycle()...)},
		script{"stateless's example", []phonecall.Event{
			&phonecall.CallDialed{Callee: "qmuntal"},
			&phonecall.CallConnected{},
			&phonecall.SetVolume{Volume: 2},
			&phonecall.PlacedOnHold{},
			&phonecall.MuteMicrophone{},
			&phonecall.UnmuteMicrophone{},
			&phonecall.TakenOffHold{},
			&phonecall.SetVolume{Volume: 11},
			&phonecall.PlacedOnHold{},
			&phonecall.PhoneHurledAgainstWall{},
		}},
	)
	rejections := 0
	for _, s := range scripts {
		t.Run(s.name, func(t *testing.T) {
			want := run(t, contenders[0].make, s.evs)
			for _, st := range want {
				if st.Rejected {
					rejections++
				}
			}
			for _, c := range contenders[1:] {
				assert.Equal(t, want, run(t, c.make, s.evs), "%s takes other steps than the generated machine", c.name)
			}
		})
	}
	assert.Greater(t, rejections, 20, "the scripts send events the phone refuses")
}

// TestCycle checks the benchmark's call on each phone: it comes back to
// OffHook having handed out cycleActions, refusing nothing.
func TestCycle(t *testing.T) {
	for _, c := range contenders {
		t.Run(c.name, func(t *testing.T) {
			steps := run(t, c.make, callCycle())
			var acts []phonecall.Action
			for _, st := range steps {
				assert.False(t, st.Rejected, "%s is refused", st.Event)
				acts = append(acts, st.Actions...)
			}
			assert.Equal(t, phonecall.StateOffHook, steps[len(steps)-1].State)
			assert.Equal(t, cycleActions, acts)
		})
	}
}

// discard is the benchmark's Handler: it performs nothing, so that what is
// timed is the machine.
type discard struct{}

func (discard) Dial(string)       {}
func (discard) StartRingingTone() {}
func (discard) StopRingingTone()  {}
func (discard) StartCallTimer()   {}
func (discard) StopCallTimer()    {}
func (discard) Mute()             {}
func (discard) Unmute()           {}
func (discard) ChangeVolume(int)  {}
func (discard) PlayHoldMusic()    {}
func (discard) StopHoldMusic()    {}
func (discard) ReportDestroyed()  {}
func (discard) RouteToSpeaker()   {}
func (discard) RouteToHandset()   {}

var _ phonecall.Handler = discard{}

// TestNoAllocations checks that the generated and the hand-written phones
// allocate nothing per event over the benchmark's call.
func TestNoAllocations(t *testing.T) {
	evs := callCycle()
	g, err := newGenerated(discard{})
	require.NoError(t, err)
	s := phonecalls.NewSwitch(discard{})
	tests := []struct {
		name   string
		handle func(phonecall.Event) error
	}{
		{"generated", g.HandleEvent},
		{"handwritten", s.HandleEvent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allocs := testing.AllocsPerRun(100, func() {
				for _, ev := range evs {
					if err := tt.handle(ev); err != nil {
						t.Fatal(err)
					}
				}
			})
			assert.Zero(t, allocs, "allocations per call of %d events", len(evs))
		})
	}
}

// cpuPerOp starts counting the process's processor time and returns the
// function that reports it per op as cpu-ns/op, which the benchmark defers:
// on a shared machine the wall clock of ns/op also counts the time the
// benchmark waits for a CPU (see package cpuclock). The libraries'
// figures include their collections, which run on the process's other
// threads.
func cpuPerOp(b *testing.B) func() {
	var t cpuclock.Timer
	t.Start()
	return func() {
		t.Stop()
		if d, ok := t.Total(); ok {
			b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}

// BenchmarkPhoneCall times the four phones side by side, one op being one
// event of the call callCycle repeats, with a Handler that does nothing.
// Each sub-benchmark converts the events to its machine's form first and
// calls the machine directly.
func BenchmarkPhoneCall(b *testing.B) {
	evs := callCycle()
	b.Run("impl=generated", func(b *testing.B) {
		m, err := newGenerated(discard{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for i, j := 0, 0; i < b.N; i++ {
			if err := m.HandleEvent(evs[j]); err != nil {
				b.Fatal(err)
			}
			if j++; j == len(evs) {
				j = 0
			}
		}
	})
	b.Run("impl=handwritten", func(b *testing.B) {
		m := phonecalls.NewSwitch(discard{})
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for i, j := 0, 0; i < b.N; i++ {
			if err := m.HandleEvent(evs[j]); err != nil {
				b.Fatal(err)
			}
			if j++; j == len(evs) {
				j = 0
			}
		}
	})
	type fired struct {
		name string
		args []any
	}
	lib := make([]fired, len(evs))
	for i, ev := range evs {
		lib[i].name, lib[i].args = phonecalls.Trigger(ev)
	}
	b.Run("impl=stateless", func(b *testing.B) {
		m := phonecalls.NewStateless(discard{})
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for i, j := 0, 0; i < b.N; i++ {
			if err := m.Fire(lib[j].name, lib[j].args...); err != nil {
				b.Fatal(err)
			}
			if j++; j == len(lib) {
				j = 0
			}
		}
	})
	b.Run("impl=looplab", func(b *testing.B) {
		m := phonecalls.NewLooplab(discard{})
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for i, j := 0, 0; i < b.N; i++ {
			if err := m.Event(lib[j].name, lib[j].args...); err != nil {
				b.Fatal(err)
			}
			if j++; j == len(lib) {
				j = 0
			}
		}
	})
}
