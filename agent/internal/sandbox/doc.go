// Package sandbox runs the coding agent's shell commands confined, with
// bubblewrap (bwrap) on Linux, so that a command the LLM wrote can change
// nothing but the workspace, read no credentials, reach no network, touch
// no other process and leave nothing running.
//
// # Modes
//
// [Auto], the default, confines commands with bubblewrap when it works
// here, and otherwise refuses to run them ([Sandbox.Disabled] says why,
// and the bash tool fails every call with that reason): it never falls
// back to running them unconfined. [Bwrap] requires bubblewrap: [New]
// fails without it. [Off] runs commands unconfined; it must be chosen.
// [New] proves that bubblewrap works by running it once, confined as a
// command will be.
//
// # Confined (modes auto and bwrap)
//
// Each command runs under bubblewrap in new mount, PID, network, IPC, UTS
// and cgroup namespaces (and a user namespace where one can be made), with
// no capabilities, no_new_privs set (setuid programs gain nothing), nested
// user namespaces disabled (bubblewrap 0.8 and later), no controlling
// terminal (a session of its own: it can neither push keystrokes into the
// user's terminal nor write to it through /dev/tty) and no file
// descriptor of the agent's but standard input, output and error.
// Specifically:
//
//   - Files. The host's file system is mounted read-only, except the
//     workspace and the workspace's cache directory (see [Options.CacheDir]
//     and [Sandbox.CacheDir]), which are writable. /tmp is a private,
//     empty tmpfs that is gone when the command ends; /dev is a minimal
//     one (null, zero, random, tty, ...). Writing anywhere else fails with
//     "Read-only file system". Every mount is nosuid. With
//     [Options.ReadOnlyWorkspace] (the agent's plan mode) the workspace is
//     mounted read-only too, and unconfined (mode off) every command is
//     refused, as nothing would keep it from writing.
//   - Setuid files. A command cannot set the setuid or setgid bit of a
//     file: chmod 4755, install -m 4755, cp -p and tar -p of such a file,
//     and the same through any language fail with "Operation not
//     permitted" (and so does chmod g+s on a directory). Without this, a
//     command of an agent run by root could leave a root-owned setuid
//     shell in the workspace for anyone on the host to run (nosuid only
//     protects the sandbox). A seccomp filter handed to bubblewrap does
//     it, on amd64 (and its i386 ABI) and arm64 (and AArch32); see
//     seccomp.go for exactly which system calls it fails. A filter was
//     chosen over clearing the bits after each command: it costs nothing
//     per call where a sweep would stat every file of the workspace and
//     its cache (55 ms for 20,000 files with a warm page cache, measured
//     on 2 cores, against 7 ms for a whole confined call), and it has no window in which a setuid file exists, nor a
//     process left to race the sweep once the command is killed. On other
//     architectures there is no filter, and a command run by root can
//     make setuid files, and read the keyrings: run the agent as an
//     ordinary user there.
//   - Keyrings. The kernel's keyrings are not namespaced: a command
//     started from a login session could read the keys of the session's
//     keyring. The seccomp filter fails keyctl, add_key and request_key
//     with EPERM (`keyctl` prints "Operation not permitted"), and
//     /proc/keys and /proc/key-users, which list the keys a process may
//     view, cannot be read.
//   - Home directories: deny by default. The home directory, /home and
//     /root appear empty and read-only; what a command may see of them is
//     named ([Options.Expose], the agent's -sandbox-expose, read-only or
//     writable; by default Go's module cache, read-only, so that builds
//     work) and mounted back, with the workspace and its cache when they
//     lie there. [Sandbox.HiddenPATH] names the directories of PATH a
//     command cannot see (a toolchain in the home directory, which must
//     be exposed to be of use).
//   - Programs on the host. Bubblewrap, the shell that sets the limits
//     and, unconfined, a command's program given by name are found by
//     [Options.Programs] (agent/internal/progpath), never in a directory of PATH
//     the model's commands can write ([Options.Writable], the workspace):
//     a bwrap or bash planted in a .venv/bin on PATH is not run.
//   - Secrets. The other paths of [Options.Hidden] ([DefaultHidden]:
//     /etc/shadow, ssh host keys, /run, ... plus what the agent adds: its
//     threads and event log) are hidden: a directory appears empty and
//     read-only, a file cannot be read. The list also names, under the
//     home directory, what is known to hold credentials (~/.ssh, ~/.aws,
//     ~/.gitconfig, ~/.config/environment.d, ...): those stay hidden
//     inside an exposed directory, even the whole home exposed. Where a
//     hidden path and an exposed one are nested, the more specific wins.
//   - Masked files. The files [Command].Masked names (the agent's: the
//     files of the workspace that hold its API key, and its own event
//     logs and thread journals found there, see package mask) read as
//     [MaskNotice] and cannot be changed, moved or removed.
//   - Git. The workspace's .git, a directory or a file (a worktree, a
//     submodule) and a gitdir it names inside the workspace, is mounted
//     read-only: git status, log and diff work, git add and commit fail.
//     When the workspace is a subdirectory of a repository, the
//     repository's .git is outside the workspace and read-only anyway. The
//     agent's own auto-commit runs outside the sandbox.
//   - Network. Only a loopback interface of its own, unless
//     [Options.Network]: nothing of the host's network, including
//     services listening on the host's 127.0.0.1 and abstract unix
//     sockets, is reachable.
//   - Processes. A PID namespace with its own /proc: the agent, its
//     /proc/PID/environ and every other process of the machine are out of
//     sight, and cannot be signalled or traced.
//   - Lifetime. Every process the command starts dies when it exits, when
//     it is killed (timeout, cancellation) and when the agent dies, even
//     one started with setsid, set -m or nohup: bubblewrap runs with
//     --die-with-parent, and when the namespace's init dies the kernel
//     kills the rest of the namespace.
//   - Cache. Each workspace has a cache directory of its own under
//     Options.CacheDir, named after the workspace's path; a command can
//     write to its workspace's and no other, so that one project's
//     session cannot plant build outputs in another project's builds
//     (GOCACHE does not check what it hands back).
//   - Environment: the curated one below, with TMPDIR=/tmp,
//     XDG_CACHE_HOME set to the workspace's cache directory and GOCACHE to
//     its go-build subdirectory (without a cache directory, both are in
//     the private /tmp), and GOTMPDIR unset. GOROOT and the module cache
//     stay readable (exposed, when in the home directory), so go build
//     and go test work on modules already downloaded.
//   - Limits: see below.
//
// Not confined, even so: the total memory of a command's processes, what
// a command writes to the disk in the last 50 ms before the disk watcher
// stops it (see Limits), and, when the agent runs as root without a
// cgroup v1 pids hierarchy (cgroup v2), the number of its processes (see
// Limits); every file the agent's user can read outside the home
// directories and the hidden paths is readable (when the agent runs as
// root, that is every root-owned file there, /etc and /var included: run
// it as an ordinary user), and so is a home directory elsewhere than
// $HOME, /home and /root (another user's, or a service's); unix sockets
// outside /run and /tmp can be connected to;
// with Options.Network, whatever the machine can reach is reachable;
// system calls are filtered only as described above (openat2, io_uring and
// calls newer than the filter fail with ENOSYS too), so a kernel bug
// reachable by an unprivileged process remains a way out; the workspace is
// the command's to change as it likes (the agent's auto-commit records
// what it did), and a workspace's cache directory is shared by all of its
// commands, from one session to the next.
//
// # Limits
//
// [Options.Limits] ([DefaultLimits], the agent's -sandbox-* flags) bounds
// what a confined command uses:
//
//   - Memory, per process: RLIMIT_DATA (heap, anonymous and private
//     writable mappings), 1 GiB by default. Not RLIMIT_AS, which counts
//     the address space programs reserve without using it: under an
//     RLIMIT_AS of 1 GiB a `go test -race` binary dies at once
//     (ThreadSanitizer cannot reserve its memory) and one fresh `go
//     build` in five crashed (the runtime could not start its garbage
//     collector's workers), where under an RLIMIT_DATA of 1 GiB both run,
//     and so do the build of this repository's tests (`go test -run XXX
//     ./...`: 34 processes and threads and 159 MiB of /tmp at most),
//     Node.js and Perl;
//     both limits refuse an allocation of 2 GiB (measured on Linux 6.18,
//     Go 1.26, Node.js 20). An allocation over the limit fails (ENOMEM:
//     "out of memory", "Cannot allocate memory").
//   - Processes and threads, all of the command's at once (bubblewrap's
//     two included), 1024 by default. When the agent runs as an ordinary
//     user, RLIMIT_NPROC, set inside the sandbox, where its user
//     namespace counts the sandbox's processes alone (without a user
//     namespace, with a setuid bubblewrap, it would count all of the
//     user's, and is not set: the number is then not limited).
//     Root is exempt from RLIMIT_NPROC, in every user namespace (the
//     kernel exempts uid 0, which bubblewrap's --uid does not change), so
//     for root the limit is a pids cgroup of the command's own in the
//     cgroup v1 pids hierarchy (cgroup.go: the agent's thread that starts
//     the command joins it for the fork, so that no process starts
//     outside it; the command cannot leave it, /sys being read-only). On
//     cgroup v2 the agent makes no cgroup (that needs a delegated subtree
//     and the agent moved into a leaf of it): root's commands are then
//     not limited in number, and [Sandbox.LimitsString] says so. A fork
//     past the limit fails with EAGAIN ("Resource temporarily
//     unavailable"; bash retries it for a while first).
//   - CPU time, per process: RLIMIT_CPU, 10 minutes by default: SIGXCPU
//     ("CPU time limit exceeded") at the limit, SIGKILL a second later.
//     The tool's timeout bounds the command's time in all.
//   - File size, per file: RLIMIT_FSIZE, 1 GiB by default: a write past it
//     fails and the process gets SIGXFSZ ("File size limit exceeded").
//     Core dumps are off (RLIMIT_CORE 0).
//   - /tmp: the tmpfs's size, 512 MiB by default (bubblewrap 0.7 and
//     later; an older one leaves /tmp unlimited and the sandbox says so):
//     writes past it fail with ENOSPC ("No space left on device"). /tmp
//     is in memory.
//   - Disk: what the command writes, all its files together, 1 GiB by
//     default. While it runs, a watcher reads every 50 ms the used space
//     of the file systems it may write (the workspace, its cache, the
//     writable exposures: statfs, which counts data not yet written
//     back); once that grew past the limit since the command started, it
//     adds up the space of the files there changed since then (others
//     may write to the same disk) and, past the limit too, kills the
//     command with everything it started: a fast writer passes the limit
//     by what it writes in 50 ms. RLIMIT_FSIZE bounds one file, not their
//     number; a quota needs the file system's support and root. The
//     limit holds per command (a long-lived one, an MCP server, is given
//     none by the agent).
//
// The per-process limits are set by a bash that runs first inside the
// sandbox and runs the command in its place, both soft and hard: the
// command cannot raise them. [Process.LimitNote] tells which limit a
// command reached, naming the flag that raises it: for sure from the
// pids cgroup, from the disk watcher, from a process killed by SIGXCPU
// or SIGXFSZ and from a shell's message of it; as "may have" from the messages of a failed
// allocation, fork or write in its output. The bash tool puts it first in
// the result, which is what the agent shows the user of a result.
//
// # Environment (every mode)
//
// A command never inherits the agent's environment wholesale. It gets the
// variables of [DefaultEnv] (PATH, HOME, USER, LANG, LC_*, TERM, TZ, Go's
// variables, the CA bundle variables, ...; the proxy variables when the
// network is allowed) and of [Options.Env], except any whose name looks
// secret ([SecretName]: *_KEY, *_TOKEN, *SECRET*, *PASSWORD*,
// *CREDENTIAL*, ANTHROPIC_*, OPENAI_*, ...), whose value holds a secret
// the [Options.Redactor] knows, or whose value holds a URL with a
// password. GIT_TERMINAL_PROMPT=0, GIT_PAGER=cat and PAGER=cat are set.
//
// # Off
//
// The command runs unconfined, as the agent's user, with the curated
// environment, in a session of its own (no controlling terminal, no file
// descriptor of the agent's but 0, 1 and 2) whose process group is killed
// when it ends or is stopped. It can read, write and reach everything the
// agent's user can, make setuid files, signal the agent, and read the
// agent's /proc/PID/environ; a process that leaves the group (setsid,
// set -m) survives the call.
//
// # Requirements and cost
//
// Linux and bubblewrap (the Debian and Ubuntu package bubblewrap), run
// either as root or by an ordinary user where unprivileged user namespaces
// are allowed (the default on current Debian and Fedora; on Ubuntu 24.04
// and later, AppArmor allows them to bwrap through its profile), and a
// kernel with seccomp filters (every distribution's). A confined command
// costs one bubblewrap start, a few milliseconds (see BenchmarkBash in
// package tools), plus a mount or two for each hidden path, exposure and
// masked file that shows (about 0.3 ms each, measured on 2 cores: a
// hidden path inside the hidden home costs nothing, there being nothing
// to hide); the seccomp filter, the file descriptor check and the
// workspace's cache directory add about 20 microseconds
// (BenchmarkPerCall). The limits add the bash that sets them (about a
// millisecond) and, for root, the pids cgroup: making it and moving the
// starting thread in and out takes about 0.2 ms, but the move waits for
// an RCU grace period now and then (up to 10 ms, measured), and the
// cgroup can be removed only a millisecond or so after the command's end
// (which does not wait for it). In all, a confined call of `true` went
// from 7.9 ms to 11.6 ms with the limits and the empty home (medians of
// 10 interleaved runs on 2 shared cores; docs/performance.md).
//
// Start marks every file descriptor of the agent's process from 3 up
// close-on-exec before each command (process-wide), so that one the agent
// inherited without the flag, such as `exec 7</home/user` in the shell
// that starts it, cannot reach a command: through /proc/self/fd/7 it would
// read and write outside every mount of the sandbox.
package sandbox
