package phonecalls

import (
	"errors"

	"github.com/fsmgen/fsmgen/examples/phonecall"
)

// Switch is the phone call written by hand: a switch over the state, then
// the event, handing the actions to a phonecall.Handler in the order the
// generated machine does. The zero Switch is not ready: use NewSwitch.
type Switch struct {
	h     phonecall.Handler
	state phonecall.StateKind
	// talking is Talking's history: the leaf of Talking the call was in
	// when it last left it, to which TakenOffHold returns.
	talking phonecall.StateKind
}

// NewSwitch returns a phone whose receiver is down (OffHook), handing its
// actions to h.
func NewSwitch(h phonecall.Handler) *Switch {
	return &Switch{h: h, state: phonecall.StateOffHook, talking: phonecall.StateHandset}
}

// Kind returns the current state.
func (m *Switch) Kind() phonecall.StateKind { return m.state }

// errNilEvent is returned for a nil event.
var errNilEvent = errors.New("phonecalls: nil event")

// HandleEvent feeds ev to the machine. It moves to the next state, then
// hands the step's actions to the Handler: the exits' innermost first, the
// transition's, then the entries' outermost first. An event the state
// refuses returns a *phonecall.RejectedError and changes nothing; an
// ignored one returns nil.
func (m *Switch) HandleEvent(ev phonecall.Event) error {
	h := m.h
	switch m.state {
	case phonecall.StateOffHook:
		if e, ok := ev.(*phonecall.CallDialed); ok {
			m.state = phonecall.StateRinging
			h.Dial(e.Callee)
			h.StartRingingTone()
			return nil
		}
	case phonecall.StateRinging:
		switch e := ev.(type) {
		case *phonecall.CallDialed:
			// Dialling again re-enters Ringing: its exit and entry run.
			h.StopRingingTone()
			h.Dial(e.Callee)
			h.StartRingingTone()
			return nil
		case *phonecall.CallConnected:
			m.state = phonecall.StateHandset
			h.StopRingingTone()
			h.StartCallTimer()
			return nil
		}
	case phonecall.StateHandset, phonecall.StateSpeakerphone, phonecall.StateOnHold:
		return m.connected(ev)
	}
	return m.reject(ev)
}

// connected handles the events of the states of a connected call, Handset
// and Speakerphone (in Talking) and OnHold: their own rules, then the rules
// they share.
func (m *Switch) connected(ev phonecall.Event) error {
	h := m.h
	onHold := m.state == phonecall.StateOnHold
	switch e := ev.(type) {
	case *phonecall.CallDialed:
		return nil
	case *phonecall.MuteMicrophone:
		h.Mute()
		return nil
	case *phonecall.UnmuteMicrophone:
		h.Unmute()
		return nil
	case *phonecall.SetVolume:
		h.ChangeVolume(e.Volume)
		return nil
	case *phonecall.SpeakerOn:
		switch m.state {
		case phonecall.StateHandset:
			m.state = phonecall.StateSpeakerphone
			h.RouteToSpeaker()
			return nil
		case phonecall.StateSpeakerphone:
			return nil
		}
	case *phonecall.SpeakerOff:
		switch m.state {
		case phonecall.StateSpeakerphone:
			m.state = phonecall.StateHandset
			h.RouteToHandset()
			return nil
		case phonecall.StateHandset:
			return nil
		}
	case *phonecall.PlacedOnHold:
		if onHold {
			return nil
		}
		// The call stays connected: the call timer runs on. Talking
		// remembers where the call was.
		m.talking = m.state
		m.state = phonecall.StateOnHold
		h.PlayHoldMusic()
		return nil
	case *phonecall.TakenOffHold:
		if onHold {
			m.state = m.talking
			h.StopHoldMusic()
			return nil
		}
	case *phonecall.LeftMessage:
		m.state = phonecall.StateOffHook
		if onHold {
			h.StopHoldMusic()
		}
		h.StopCallTimer()
		return nil
	case *phonecall.PhoneHurledAgainstWall:
		if onHold {
			m.state = phonecall.StatePhoneDestroyed
			h.StopHoldMusic()
			h.StopCallTimer()
			h.ReportDestroyed()
			return nil
		}
	}
	return m.reject(ev)
}

// reject refuses ev in the current state.
func (m *Switch) reject(ev phonecall.Event) error {
	if ev == nil {
		return errNilEvent
	}
	return &phonecall.RejectedError{State: m.state, Event: ev.Kind(), Reason: "not accepted in this state"}
}
