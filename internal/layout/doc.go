// Package layout holds the rules of this repository's layout, and the test
// that keeps the code to them: which part of the repository may import
// which. Go's internal/ directories already keep each product's private
// packages to itself; these rules add what Go cannot say.
//
// The parts, by import path under the module:
//
//   - the generator: cmd/fsmgen, internal/compiler/..., templates;
//   - the runtime generated code links: runtime/... (public, small,
//     versioned: it imports no product);
//   - the agent: cmd/agent, agent/... and its machine, gen/agent;
//   - the server: cmd/server, server/... and its machines, gen/monitor and
//     gen/job;
//   - the examples: examples/...;
//   - what the products share: internal/threadwire (the thread's format,
//     between the agent and the server) and small utilities
//     (internal/atomicfile, internal/backoff, internal/proclock,
//     internal/suggest; internal/gittest and internal/proctest for
//     tests).
//
// The rules, checked by TestLayout on every package's imports (a test's
// too) with go list:
//
//   - the runtime imports only itself and internal/suggest;
//   - the generator imports no machine (gen/...), product or example: a
//     broken gen/ must still regenerate;
//   - the agent and the server import nothing of each other but through
//     internal/threadwire (the server's tests may also write the agent's
//     messages with agent/chat, the format of a thread's messages);
//   - a generated package imports the runtime and the packages its spec
//     names: its own product's;
//   - examples import the runtime and the shared utilities only, as a
//     user's module would (their tests internal/proctest too);
//   - the shared packages import no product (internal/threadwire the
//     agent's chat alone, whose messages a thread holds).
package layout
