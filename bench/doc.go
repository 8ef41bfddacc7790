// Package bench measures the generated agent machine (gen/agent with the
// guards and effects of gen/agent/behavior.go) against the same machine written
// by hand for speed (package floor) and written on two Go FSM libraries,
// github.com/looplab/fsm (package looplabagent) and
// github.com/qmuntal/stateless (package statelessagent).
//
// It is a module of its own so that the libraries stay out of fsmgen's
// go.mod. Its tests check that the four contenders take the same steps
// (state, action, refusal, and what the action carries) over scenarios
// with tool rounds, the post-tools hook, retries up to the limit, giving
// up and shutdown; its benchmarks time a standard turn of eleven events on
// conversations of 10, 1,000 and 100,000 messages. Package phonecalls
// does the same for the phone call of examples/phonecall (the generated
// machine, a hand-written switch, stateless and looplab), one event at a
// time. docs/performance.md gives the results and how to reproduce them.
package bench
