package phonecalls

import (
	"context"
	"errors"
	"fmt"

	"github.com/looplab/fsm"

	"github.com/fsmgen/fsmgen/examples/phonecall"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// Looplab is the phone call on looplab/fsm.
type Looplab struct {
	f   *fsm.FSM
	ctx context.Context
	// talking stands in for Talking's history, which looplab does not
	// have: the state of Talking last entered, Handset or Speakerphone.
	talking string
}

// takenOffHoldTo names the event that takes the call off hold to state:
// a looplab event has one destination per source, so the history's two
// destinations are two events, and Event picks the one talking names.
func takenOffHoldTo(state string) string { return TakenOffHold + "To" + state }

// NewLooplab returns a phone whose receiver is down (OffHook), handing its
// actions to h.
//
// looplab/fsm has flat states, so Connected is written as its leaves,
// Handset, Speakerphone and OnHold: the call timer starts on entering one
// of them from elsewhere and stops on leaving one for elsewhere. An event
// whose source is its destination leaves and enters nothing (the library
// runs its before_ and after_ callbacks only): the internal transitions
// and ignored events are such events, and so is dialling again while it
// rings, whose re-entry of Ringing is written into the event's callbacks.
func NewLooplab(h phonecall.Handler) *Looplab {
	connected := func(state string) bool { return state == Handset || state == Speakerphone || state == OnHold }
	calls := []string{Handset, Speakerphone, OnHold}
	m := &Looplab{ctx: context.Background(), talking: Handset}
	events := fsm.Events{
		{Name: CallDialed, Src: []string{OffHook, Ringing}, Dst: Ringing},
		{Name: CallConnected, Src: []string{Ringing}, Dst: Handset},
		{Name: LeftMessage, Src: calls, Dst: OffHook},
		{Name: PlacedOnHold, Src: calls, Dst: OnHold},
		{Name: takenOffHoldTo(Handset), Src: []string{OnHold}, Dst: Handset},
		{Name: takenOffHoldTo(Speakerphone), Src: []string{OnHold}, Dst: Speakerphone},
		{Name: PhoneHurledAgainstWall, Src: []string{OnHold}, Dst: PhoneDestroyed},
		{Name: SpeakerOn, Src: []string{Handset, Speakerphone}, Dst: Speakerphone},
		{Name: SpeakerOff, Src: []string{Handset, Speakerphone}, Dst: Handset},
	}
	// The events that leave a connected call where it is.
	for _, state := range calls {
		for _, name := range []string{CallDialed, MuteMicrophone, UnmuteMicrophone, SetVolume} {
			events = append(events, fsm.EventDesc{Name: name, Src: []string{state}, Dst: state})
		}
	}
	m.f = fsm.NewFSM(OffHook, events,
		fsm.Callbacks{
			"before_" + CallDialed: func(_ context.Context, e *fsm.Event) {
				switch e.Src {
				case Handset, Speakerphone, OnHold:
					return // ignored
				case Ringing:
					h.StopRingingTone() // re-entry: Ringing's exit
				}
				h.Dial(e.Args[0].(string))
			},
			"after_" + CallDialed: func(_ context.Context, e *fsm.Event) {
				if e.Src == Ringing {
					h.StartRingingTone() // re-entry: Ringing's entry
				}
			},
			"enter_" + Ringing: func(_ context.Context, _ *fsm.Event) { h.StartRingingTone() },
			"leave_" + Ringing: func(_ context.Context, _ *fsm.Event) { h.StopRingingTone() },
			"enter_state": func(_ context.Context, e *fsm.Event) {
				if connected(e.Dst) && !connected(e.Src) {
					h.StartCallTimer()
				}
				if e.Dst == Handset || e.Dst == Speakerphone {
					m.talking = e.Dst
				}
			},
			"enter_" + OnHold: func(_ context.Context, _ *fsm.Event) { h.PlayHoldMusic() },
			"leave_" + OnHold: func(_ context.Context, _ *fsm.Event) { h.StopHoldMusic() },
			"leave_state": func(_ context.Context, e *fsm.Event) {
				if connected(e.Src) && !connected(e.Dst) {
					h.StopCallTimer()
				}
			},
			"after_" + MuteMicrophone:         func(_ context.Context, _ *fsm.Event) { h.Mute() },
			"after_" + UnmuteMicrophone:       func(_ context.Context, _ *fsm.Event) { h.Unmute() },
			"after_" + SetVolume:              func(_ context.Context, e *fsm.Event) { h.ChangeVolume(e.Args[0].(int)) },
			"after_" + PhoneHurledAgainstWall: func(_ context.Context, _ *fsm.Event) { h.ReportDestroyed() },
			"after_" + SpeakerOn: func(_ context.Context, e *fsm.Event) {
				if e.Src == Handset {
					h.RouteToSpeaker()
				}
			},
			"after_" + SpeakerOff: func(_ context.Context, e *fsm.Event) {
				if e.Src == Speakerphone {
					h.RouteToHandset()
				}
			},
		},
	)
	return m
}

// Event sends a library event with its arguments. An event that leaves
// the state as it is (fsm.NoTransitionError) is not an error; one the
// state refuses (fsm.InvalidEventError) returns an error wrapping
// fsmrt.ErrRejected.
func (m *Looplab) Event(name string, args ...any) error {
	if name == TakenOffHold {
		if state := m.f.Current(); state != OnHold {
			return fmt.Errorf("%w: %w", fsmrt.ErrRejected, fsm.InvalidEventError{Event: name, State: state})
		}
		name = takenOffHoldTo(m.talking)
	}
	err := m.f.Event(m.ctx, name, args...)
	var same fsm.NoTransitionError
	var invalid fsm.InvalidEventError
	switch {
	case err == nil, errors.As(err, &same):
		return nil
	case errors.As(err, &invalid):
		return fmt.Errorf("%w: %w", fsmrt.ErrRejected, err)
	}
	return err
}

// Kind returns the current state as the generated machine's kind.
func (m *Looplab) Kind() phonecall.StateKind {
	return kinds[m.f.Current()]
}
