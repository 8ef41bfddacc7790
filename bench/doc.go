// Package bench measures the generated agent machine (gen/agent with the
// guards and effects of agent/behavior) against the same machine written by
// hand for speed (package floor), written by hand to the generated
// machine's safe contract (package safefloor), and written on two Go FSM
// libraries, github.com/looplab/fsm (package looplabagent) and
// github.com/qmuntal/stateless (package statelessagent).
//
// It is a module of its own so that the libraries stay out of fsmgen's
// go.mod. Its tests check that the five contenders take the same steps
// (state, action, refusal, and what the action carries) over scenarios
// with tool rounds, the post-tools hook, retries up to the limit, giving
// up, messages typed during a turn (held, deferred, until it ends), the
// user stopping a turn in every state, /undo, compaction at the
// threshold and by /compact, replies cut at their token limit and
// continued, and queries with their limit, and over every event in every
// state a machine rests in; and that together they take every rule of the
// spec's table. Its benchmarks time a standard turn of eleven events on
// conversations of 10, 1,000 and 100,000 messages. Package phonecalls
// does the same for the phone call of examples/phonecall (the generated
// machine, a hand-written switch, stateless and looplab), one event at a
// time. Package cpuclock reads the processor time both report beside the
// wall clock. docs/performance.md gives the results and how to reproduce
// them.
package bench
