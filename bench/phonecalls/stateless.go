package phonecalls

import (
	"context"
	"fmt"
	"reflect"

	"github.com/qmuntal/stateless"

	"github.com/fsmgen/fsmgen/examples/phonecall"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// The triggers and states of the stateless and looplab machines, strings
// as the libraries' READMEs write them.
const (
	CallDialed             = "CallDialed"
	CallConnected          = "CallConnected"
	LeftMessage            = "LeftMessage"
	PlacedOnHold           = "PlacedOnHold"
	TakenOffHold           = "TakenOffHold"
	PhoneHurledAgainstWall = "PhoneHurledAgainstWall"
	MuteMicrophone         = "MuteMicrophone"
	UnmuteMicrophone       = "UnmuteMicrophone"
	SetVolume              = "SetVolume"
	SpeakerOn              = "SpeakerOn"
	SpeakerOff             = "SpeakerOff"

	OffHook        = "OffHook"
	Ringing        = "Ringing"
	Connected      = "Connected"
	Talking        = "Talking"
	Handset        = "Handset"
	Speakerphone   = "Speakerphone"
	OnHold         = "OnHold"
	PhoneDestroyed = "PhoneDestroyed"
)

// Trigger returns ev as a trigger (or looplab event name) and its
// arguments, which carry the event's fields.
func Trigger(ev phonecall.Event) (string, []any) {
	switch e := ev.(type) {
	case *phonecall.CallDialed:
		return CallDialed, []any{e.Callee}
	case *phonecall.CallConnected:
		return CallConnected, nil
	case *phonecall.LeftMessage:
		return LeftMessage, nil
	case *phonecall.PlacedOnHold:
		return PlacedOnHold, nil
	case *phonecall.TakenOffHold:
		return TakenOffHold, nil
	case *phonecall.PhoneHurledAgainstWall:
		return PhoneHurledAgainstWall, nil
	case *phonecall.MuteMicrophone:
		return MuteMicrophone, nil
	case *phonecall.UnmuteMicrophone:
		return UnmuteMicrophone, nil
	case *phonecall.SetVolume:
		return SetVolume, []any{e.Volume}
	case *phonecall.SpeakerOn:
		return SpeakerOn, nil
	case *phonecall.SpeakerOff:
		return SpeakerOff, nil
	}
	panic(fmt.Sprintf("phonecalls: %T is not an event of the phone call", ev))
}

// kinds are the generated machine's state kinds of the libraries' states.
var kinds = map[string]phonecall.StateKind{
	OffHook:        phonecall.StateOffHook,
	Ringing:        phonecall.StateRinging,
	Handset:        phonecall.StateHandset,
	Speakerphone:   phonecall.StateSpeakerphone,
	OnHold:         phonecall.StateOnHold,
	PhoneDestroyed: phonecall.StatePhoneDestroyed,
}

// Stateless is the phone call on qmuntal/stateless.
type Stateless struct {
	sm *stateless.StateMachine
}

// NewStateless returns a phone whose receiver is down (OffHook), handing
// its actions to h.
func NewStateless(h phonecall.Handler) *Stateless {
	do := func(action func()) stateless.ActionFunc {
		return func(_ context.Context, _ ...any) error {
			action()
			return nil
		}
	}
	// talking stands in for Talking's history, which stateless does not
	// have: the leaf of Talking last entered, to which TakenOffHold returns.
	talking := Handset
	sm := stateless.NewStateMachine(OffHook)
	sm.SetTriggerParameters(CallDialed, reflect.TypeOf(""))
	sm.SetTriggerParameters(SetVolume, reflect.TypeOf(0))

	sm.Configure(OffHook).
		Permit(CallDialed, Ringing)

	// Entry actions run in the order they are configured: the number is
	// dialled, then the tone starts.
	sm.Configure(Ringing).
		OnEntryFrom(CallDialed, func(_ context.Context, args ...any) error {
			h.Dial(args[0].(string))
			return nil
		}).
		OnEntry(do(h.StartRingingTone)).
		OnExit(do(h.StopRingingTone)).
		PermitReentry(CallDialed).
		Permit(CallConnected, Connected)

	sm.Configure(Connected).
		OnEntry(do(h.StartCallTimer)).
		OnExit(do(h.StopCallTimer)).
		InternalTransition(MuteMicrophone, do(h.Mute)).
		InternalTransition(UnmuteMicrophone, do(h.Unmute)).
		InternalTransition(SetVolume, func(_ context.Context, args ...any) error {
			h.ChangeVolume(args[0].(int))
			return nil
		}).
		Ignore(CallDialed).
		Permit(LeftMessage, OffHook).
		Permit(PlacedOnHold, OnHold).
		InitialTransition(Talking)

	sm.Configure(Talking).
		SubstateOf(Connected).
		InitialTransition(Handset)

	sm.Configure(Handset).
		SubstateOf(Talking).
		OnEntry(func(context.Context, ...any) error { talking = Handset; return nil }).
		OnEntryFrom(SpeakerOff, do(h.RouteToHandset)).
		Ignore(SpeakerOff).
		Permit(SpeakerOn, Speakerphone)

	sm.Configure(Speakerphone).
		SubstateOf(Talking).
		OnEntry(func(context.Context, ...any) error { talking = Speakerphone; return nil }).
		OnEntryFrom(SpeakerOn, do(h.RouteToSpeaker)).
		Ignore(SpeakerOn).
		Permit(SpeakerOff, Handset)

	sm.Configure(OnHold).
		SubstateOf(Connected).
		OnEntry(do(h.PlayHoldMusic)).
		OnExit(do(h.StopHoldMusic)).
		Ignore(PlacedOnHold).
		PermitDynamic(TakenOffHold, func(context.Context, ...any) (stateless.State, error) { return talking, nil }).
		Permit(PhoneHurledAgainstWall, PhoneDestroyed)

	sm.Configure(PhoneDestroyed).
		OnEntryFrom(PhoneHurledAgainstWall, do(h.ReportDestroyed))

	sm.OnUnhandledTrigger(func(_ context.Context, state stateless.State, trigger stateless.Trigger, _ []string) error {
		return fmt.Errorf("%w: %v in %v", fsmrt.ErrRejected, trigger, state)
	})
	return &Stateless{sm: sm}
}

// Fire sends a trigger with its arguments; a trigger the state refuses
// returns an error wrapping fsmrt.ErrRejected.
func (m *Stateless) Fire(trigger string, args ...any) error {
	return m.sm.Fire(trigger, args...)
}

// Kind returns the current state as the generated machine's kind.
func (m *Stateless) Kind() phonecall.StateKind {
	return kinds[m.sm.MustState().(string)]
}
