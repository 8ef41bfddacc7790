// Package conformance holds a corpus of cases that pin the hierarchical
// semantics of the machines fsmgen generates: composite states, entry
// and exit, external, local and internal transitions, "*" rows, transient
// states inside composites, and state timers. It has no code of its own:
// go test runs the corpus (conformance_test.go) and tests the harness
// itself (harness_test.go).
//
// # Cases
//
// Each case is a txtar archive in testdata, named in lower case with
// underscores. Its comment, before the first file, says in our own
// words what the case checks and cites where the behaviour is defined: a
// W3C SCXML IRP test number, a Boost.SML test, or the part of UML 2.5.1
// that treats it (§14.2.3 for StateMachine semantics, clause 13 for time
// events). Nothing is copied from those sources; the
// expected orders are derived by hand from the semantics in
// notes/hierarchy.md, never from what the generator happens to print. A
// case whose expectation the generated code does not meet says so in its
// comment, under KNOWN DISCREPANCY, and fails until the generator (or the
// semantics' wording) is fixed.
//
// The archive holds two files:
//
//   - spec.yaml: a small fsmgen spec, version 2, with "output: {go: .}" and
//     at least one action (the harness watches the machine through its
//     Recorder).
//   - script: what to do with the generated machine and what must come of
//     it, one instruction per line. Blank lines and lines starting with #
//     are skipped.
//
// # Script instructions
//
// Operations, run in order on one machine:
//
//	new [FIELDS]              make the machine with New, FIELDS being the initial leaf's
//	                          fields as a JSON object ({} when left out); New's entry
//	                          actions are recorded like those of any step
//	restore STATE [FIELDS]    make a new machine with Restore, from the state the JSON
//	                          {"kind": ..., FIELDS} decodes to with UnmarshalState
//	send EVENT [FIELDS]       HandleEvent of the event {"kind": ..., FIELDS} decoded with
//	                          UnmarshalEvent
//	fire N                    send TimerFired{Timer: N}
//	guard NAME true|false     the answer of guard NAME from now on (false until set)
//	effect NAME VALUE...      the results of effect NAME from now on, one per value it
//	                          sets, in order (zero values until set)
//
// A script makes its machine with new or restore before it sends or
// checks anything; guard and effect lines may come first, for the entry
// effects and delay functions New calls.
//
// Checks, of what the operations so far did:
//
//	want actions: ITEM...     the actions handed to the Handler since the last want
//	                          actions (or since the last new or restore), exactly, in
//	                          order; nothing after the colon means none
//	want calls: ITEM...       the guards and effects called since the last want calls
//	                          (or since the last new or restore), exactly, in order
//	want state: STATE [FIELDS]  the current leaf; with FIELDS, all its fields too
//	                          (inherited ones included), as a JSON object
//	want timers: N:DELAY...   m.Timers(), exactly: ids and delays, e.g. 1:1m 2:5s;
//	                          nothing after the colon means none
//	want error: rejected      the last operation's error wraps ErrRejected
//	want error: REGEXP        the last operation's error matches REGEXP
//	want build error: REGEXP  the spec must not build; see below
//
// An ITEM is an action or a call as Name or Name(field=value, ...), where
// every field of the action, or every value the guard or effect reads,
// is given once, by its spec name. A value is JSON (3, true, "two
// words"), a bare word for a string (x stands for "x"), or, for a
// time.Duration, a Go duration (90s, 1m30s). StartTimer and CancelTimer
// are actions like the others: StartTimer(timer=1, delay=3s). Actions are
// compared through the JSON the Recorder's values encode to, calls
// through the JSON of the values the guard or effect was given; a
// mismatch shows both lists in this notation.
//
// Nothing goes unchecked by accident: an operation that returns an error
// fails the case unless the next line is a want error; every action must
// be checked by a want actions line before the next new or restore and
// by the end of the script. Calls are checked only where a script asks.
//
// A case that must not build has only want build error lines. Each
// pattern must match one of the errors the generator reports, written
// "LINE:COL: MESSAGE" with LINE and COL in spec.yaml, and every error the
// generator reports must be matched by a pattern. These cases are
// checked in-process, without compiling anything.
//
// # What every step must do
//
// Besides a script's checks, the harness checks on every operation of
// every case that each rule's guards and effects all run before the first
// action of that rule: the generated Observer marks where each rule
// fires, and no action may come before the first mark, nor between a
// call and the next mark. New, which has no observer, calls everything
// before it hands out anything.
//
// # How the cases run
//
// The machines run as generated code. The test builds one temporary
// module: for each case, the package fsmgen generates from its spec
// (in-process, with generate.Load), plus an adapter the harness generates
// from the machine's IR (testdata/adapter.go.tmpl) with a Behavior whose
// guards and effects answer from the script; a driver package
// (testdata/driver) that runs a case's operations and records a trace of
// calls, steps and actions; and one main package that imports every case.
// It builds that program once, runs it once on every case's operations,
// and checks each case's records as a subtest named after the archive. A
// package that does not compile fails its case only. In -short mode the
// specs are generated and the scripts translated, and the cases that must
// not build are checked, but nothing is compiled.
package conformance
