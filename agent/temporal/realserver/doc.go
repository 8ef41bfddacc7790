// Package realserver runs a coding agent session (package agentflow) on a
// real Temporal server started in the test's process (temporaltest, on
// loopback): the LLM calls answered by the agent's fake LLM server, the
// tools on the task queue of a second worker, the workspace's, and the
// history recorded for agentflow's replay test. A module of its own for
// the reasons temporal/realserver is one: the server's dependency tree,
// and the SDK pinned at the version the server compiles with.
package realserver
