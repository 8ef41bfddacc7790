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
}

// NewLooplab returns a phone whose receiver is down (OffHook), handing its
// actions to h.
//
// looplab/fsm has flat states, so Connected is the call not on hold and
// OnHold its neighbour: the call timer starts on entering Connected from
// anywhere but OnHold and stops on leaving either for anywhere but the
// other. An event whose source is its destination leaves and enters
// nothing (the library runs its before_ and after_ callbacks only): the
// internal transitions and ignored events are such events, and so is
// dialling again while it rings, whose re-entry of Ringing is written
// into the event's callbacks.
func NewLooplab(h phonecall.Handler) *Looplab {
	connected := func(state string) bool { return state == Connected || state == OnHold }
	m := &Looplab{ctx: context.Background()}
	m.f = fsm.NewFSM(OffHook,
		fsm.Events{
			{Name: CallDialed, Src: []string{OffHook, Ringing}, Dst: Ringing},
			{Name: CallDialed, Src: []string{Connected}, Dst: Connected},
			{Name: CallDialed, Src: []string{OnHold}, Dst: OnHold},
			{Name: CallConnected, Src: []string{Ringing}, Dst: Connected},
			{Name: MuteMicrophone, Src: []string{Connected}, Dst: Connected},
			{Name: MuteMicrophone, Src: []string{OnHold}, Dst: OnHold},
			{Name: UnmuteMicrophone, Src: []string{Connected}, Dst: Connected},
			{Name: UnmuteMicrophone, Src: []string{OnHold}, Dst: OnHold},
			{Name: SetVolume, Src: []string{Connected}, Dst: Connected},
			{Name: SetVolume, Src: []string{OnHold}, Dst: OnHold},
			{Name: LeftMessage, Src: []string{Connected, OnHold}, Dst: OffHook},
			{Name: PlacedOnHold, Src: []string{Connected, OnHold}, Dst: OnHold},
			{Name: TakenOffHold, Src: []string{OnHold}, Dst: Connected},
			{Name: PhoneHurledAgainstWall, Src: []string{OnHold}, Dst: PhoneDestroyed},
		},
		fsm.Callbacks{
			"before_" + CallDialed: func(_ context.Context, e *fsm.Event) {
				switch e.Src {
				case Connected, OnHold:
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
			"enter_" + Connected: func(_ context.Context, e *fsm.Event) {
				if !connected(e.Src) {
					h.StartCallTimer()
				}
			},
			"leave_" + Connected: func(_ context.Context, e *fsm.Event) {
				if !connected(e.Dst) {
					h.StopCallTimer()
				}
			},
			"enter_" + OnHold: func(_ context.Context, _ *fsm.Event) { h.PlayHoldMusic() },
			"leave_" + OnHold: func(_ context.Context, e *fsm.Event) {
				h.StopHoldMusic()
				if !connected(e.Dst) {
					h.StopCallTimer()
				}
			},
			"after_" + MuteMicrophone:         func(_ context.Context, _ *fsm.Event) { h.Mute() },
			"after_" + UnmuteMicrophone:       func(_ context.Context, _ *fsm.Event) { h.Unmute() },
			"after_" + SetVolume:              func(_ context.Context, e *fsm.Event) { h.ChangeVolume(e.Args[0].(int)) },
			"after_" + PhoneHurledAgainstWall: func(_ context.Context, _ *fsm.Event) { h.ReportDestroyed() },
		},
	)
	return m
}

// Event sends a library event with its arguments. An event that leaves
// the state as it is (fsm.NoTransitionError) is not an error; one the
// state refuses (fsm.InvalidEventError) returns an error wrapping
// fsmrt.ErrRejected.
func (m *Looplab) Event(name string, args ...any) error {
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
