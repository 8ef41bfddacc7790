// Package phonecalls is the phone call of examples/phonecall (the running
// example of qmuntal/stateless's README, with its entry and exit actions)
// written three more ways, so that BenchmarkPhoneCall can time four
// contenders side by side, one event at a time:
//
//   - generated: the package fsmgen generates from
//     examples/phonecall/phonecall.yaml, used as its README says;
//   - handwritten ([Switch]): the same behaviour written by hand as a
//     switch over the state, then the event, handing its actions to the
//     same generated phonecall.Handler: the same contract, so the floor a
//     generated machine can be fairly held to;
//   - stateless ([Stateless]): github.com/qmuntal/stateless configured
//     the way its README configures the phone call (Configure, Permit,
//     PermitReentry, SubstateOf, OnEntry, OnEntryFrom, OnExit,
//     InternalTransition, Ignore, SetTriggerParameters, Fire);
//   - looplab ([Looplab]): github.com/looplab/fsm the way its README uses
//     it (an fsm.Events table of named events with source and destination
//     states, and enter_, leave_, before_ and after_ callbacks).
//
// All four take the same steps: they are in the same state after every
// event and hand the same actions, with the same values, in the same
// order, to a phonecall.Handler; they drop the same events and refuse the
// same others with an error for which errors.Is(err, fsmrt.ErrRejected)
// holds. The tests check it over every state and event and over the call
// the benchmark repeats.
//
// What makes the comparison fair:
//
//   - The same Handler interface receives every action, called through
//     the interface as a program calls it; the benchmark's Handler does
//     nothing, so the time measured is the machine's.
//   - Events are converted to each contender's own form (generated
//     events, stateless triggers and arguments, looplab event names and
//     arguments) before the timer starts, and each sub-benchmark calls its
//     machine directly, not through a shared interface.
//   - Each library is used as its README shows, not tuned: the cost of its
//     API (a context, variadic arguments, strings as states and events,
//     reflection on trigger parameters) is part of what is measured.
//   - The action orders are UML's, which fsmgen follows: a step runs every
//     exit (innermost first), then the transition's action, then every
//     entry (outermost first). stateless expresses that order with the
//     constructs of its README, except that the phone is reported destroyed
//     on entering PhoneDestroyed (OnEntryFrom) instead of on leaving OnHold
//     (OnExitWith, which would run before the call timer stops). looplab has
//     no composite states, no re-entry and no entry or exit actions of its
//     own: Connected's entry and exit are written into the callbacks of
//     the states on either side of its border (checking the event's source
//     or destination), and re-entering Ringing into the callbacks of the
//     event, which the library runs without leaving the state.
//   - The machines stay in a state the way each expresses it: stateless
//     enters Connected's initial child Talking and its initial child
//     Handset (InitialTransition), as fsmgen's machine does; looplab, which
//     has no hierarchy, has Handset, Speakerphone and OnHold side by side.
//   - Neither library has history states: taken off hold, the call returns
//     to Handset or Speakerphone, as it was put on hold, through a variable
//     each keeps by hand (stateless: set on entry, read by PermitDynamic;
//     looplab: one event per destination, picked by Event), where fsmgen's
//     spec says `to: Talking.history`.
//
// The hand-written Switch has what the phone call needs and no more: no
// observer hook and no guard against HandleEvent being called from a
// Handler method, both of which the generated machine has, so the ratio
// of the two includes their cost.
package phonecalls
