// Command server runs Loom's cron monitoring and background jobs on fsmgen
// machines: a monitor per watched job, each an fsmgen machine
// (spec/monitor.yaml) whose own timers catch missed runs and runs that
// take too long, and the background jobs of a configuration file, each an
// fsmgen machine (spec/job.yaml) that runs, times out and retries them;
// all kept in SQLite, or in Postgres shared by several instances.
//
// Usage:
//
//	server [-addr 127.0.0.1:8080] [-db server.db | -postgres URL [-lease 15s] [-advertise URL]]
//	       [-jobs jobs.yaml] [-jobs-max-running N] [-retention 720h] [-alert-webhook URL]
//	       [-webhook-allow LIST] [-ping-rate N] [-max-thread-bytes N]
//
// With -postgres, several servers share the database: each runs the
// monitors of the shards whose leases it holds, forwards the requests
// about the others' monitors to them (at the URL each advertises), and
// takes over the monitors of an instance that dies within -lease. The
// jobs are run by one instance, the holder of one shard's lease (with
// their monitors); the others forward triggers and cancels to it, and
// one of them takes the jobs over within -lease when it dies.
//
// On its first start the server makes the API key "admin" and prints its
// token once, on a line "token: …"; it keeps only its SHA-256. The API
// (under /api/crons/, /api/jobs, /api/threads and /api/keys) needs a key
// as a bearer token: read-only keys read, read-write keys also change
// things, admin keys also make and revoke keys (/api/keys). Pings
// (/ping/KEY…) need none: a monitor's ping key is their secret. The web
// page is at /.
//
//	server [-db server.db | -postgres URL] -reset-token
//
// makes the admin key anew, prints its token and exits, also while servers
// run on the database: they refuse the old token within a second.
//
// Only one server runs on a SQLite file: it holds a lock on a file beside
// it (server.db.lock for server.db), which ends with the process, even on
// kill -9; a second is refused with the holder's PID.
//
// Alerts are posted to webhooks on the Internet only: a webhook URL, or an
// address it resolves to or redirects to, that is loopback, private,
// link-local (the cloud's metadata endpoint), unspecified or otherwise
// internal is refused, unless -webhook-allow lists it (networks such as
// 10.1.2.0/24, addresses, host:port pairs, separated by commas).
//
// The coding agent (cmd/agent) syncs its threads here when run with
// -sync URL and a key's token in FSMGEN_SERVER_TOKEN: PUT
// /api/threads/{id} stores a thread's revision unless a newer one is
// stored (the same revision again changes nothing; an older one is
// answered 409), at most -max-thread-bytes of JSON (32 MiB; 413 beyond);
// GET /api/threads lists them, the most recently updated first, and GET
// /api/threads/{id} returns one whole. A thread belongs to the key that
// pushed it: no other key lists, reads or changes it. Threads are plain
// rows of the database: with -postgres, every instance serves them, none
// forwards them.
//
// Every request the server acknowledges is stored first, durably: it
// survives a kill -9; a job's run left running by a kill -9 is closed as
// failed at the next start, and retried. SIGINT or SIGTERM stop it
// gracefully: it finishes the requests in flight, cancels the runs in
// progress (recorded cancelled), then exits. The HTTP API is described in
// docs/server.md.
package main

import (
	"os"

	"github.com/fsmgen/fsmgen/server/app"
)

func main() { os.Exit(app.Main()) }
