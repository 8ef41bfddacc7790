// Package realserver tests package fsmtemporal against a real Temporal
// server started in the test's process (go.temporal.io/server's
// temporaltest, listening on loopback): the order workflow with its
// worker stopped and started again mid-deadline, a rejected update that
// leaves no trace in the history, the history events each machine event
// costs, an expense claim whose pure action writes nothing to the
// history, and the recording of the histories that orderflow's and
// expenseflow's replay tests replay. It is a module of its own because the
// server's dependency tree is far larger than fsmgen's, and it pins the SDK
// at the version the server compiles with.
package realserver
