#!/bin/sh
# run.sh runs fsmgen's benchmark suite and prints benchstat tables; `make
# bench` calls it. See docs/performance.md for what it measures.
#
# It first runs the suite's tests (the five agent machines must take the
# same steps, and so must the four phone calls). It then builds three test
# binaries once, the agent machines' (this module), the phone calls'
# (./phonecalls) and fsmgen's own (internal/compiler/generate), and runs every
# benchmark ROUNDS times in rounds: each round runs each benchmark once,
# so that the contenders are interleaved in time and a slow spell of a
# shared machine hits them all alike, which -count would not do (it
# repeats one benchmark before the next). benchstat then summarises the
# rounds: medians with 95% confidence intervals.
#
# The agent machines and the phone calls run with GOMAXPROCS=1
# (-test.cpu): each is one goroutine, and on a two-vCPU virtual machine
# whose vCPUs share a core, whatever the runtime wakes on the second vCPU
# (the collections that rewind the benchmark's conversation) slows the
# first one's tight loops up to threefold; docs/performance.md measures
# it. CPUS=1,2 runs them at both.
#
# Beside the wall clock (ns/event, ns/op) the agent machines and the phone
# calls report their processor time (cpu-ns/event, cpu-ns/op; package
# cpuclock): on a shared machine the wall clock also counts the time the
# benchmark waits for a CPU, which with the load at ten on two CPUs is
# most of it. The load average at the start of each round is kept in
# load.txt and summed up at the end.
#
# Environment: ROUNDS (default 10), BENCHTIME (default 1s, for the agent
# and phone call benchmarks), CPUS (default 1: their GOMAXPROCS values),
# OUT (default bench/out: the raw results, kept for benchstat comparisons
# between runs).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
ROUNDS=${ROUNDS:-10}
BENCHTIME=${BENCHTIME:-1s}
CPUS=${CPUS:-1}
OUT=${OUT:-$here/out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

cd "$here"
go test -count=1 ./...
go test -c -o "$OUT/agent.test" .
go test -c -o "$OUT/phonecall.test" ./phonecalls
(cd "$root" && go test -c -o "$OUT/generate.test" ./internal/compiler/generate)

{
	echo "# $(go version)"
	echo "# $(nproc 2>/dev/null || echo '?') CPUs: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //')"
	echo "# rounds=$ROUNDS benchtime=$BENCHTIME cpus=$CPUS started $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$OUT/machine.txt"
: >"$OUT/agent.txt"
: >"$OUT/phonecall.txt"
: >"$OUT/generate.txt"
: >"$OUT/load.txt"
i=1
while [ "$i" -le "$ROUNDS" ]; do
	echo "round $i of $ROUNDS" >&2
	cut -d' ' -f1 /proc/loadavg >>"$OUT/load.txt" 2>/dev/null || true
	"$OUT/agent.test" -test.run='^$' -test.bench=. -test.benchmem -test.count=1 \
		-test.benchtime="$BENCHTIME" -test.cpu="$CPUS" >>"$OUT/agent.txt"
	"$OUT/phonecall.test" -test.run='^$' -test.bench=. -test.benchmem -test.count=1 \
		-test.benchtime="$BENCHTIME" -test.cpu="$CPUS" >>"$OUT/phonecall.txt"
	# From its package's directory, as go test runs it: BenchmarkGoBuild
	# finds the repository by a relative path.
	(cd "$root/internal/compiler/generate" && "$OUT/generate.test" -test.run='^$' -test.bench=. -test.benchmem -test.count=1) >>"$OUT/generate.txt"
	i=$((i + 1))
done

cat "$OUT/machine.txt"
echo "# load average (1 min) at the start of each round: $(sort -n "$OUT/load.txt" | sed -n '1p;$p' | paste -sd- -)"
echo
echo "## The agent machines, side by side (one op = one turn of 11 events)"
go tool benchstat -row /conv,/gomaxprocs -col '/impl@(handwritten safe-handwritten generated looplab stateless)' "$OUT/agent.txt"
echo
echo "## Each machine as the conversation grows"
go tool benchstat -row /impl,/gomaxprocs -col /conv "$OUT/agent.txt"
echo
echo "## The phone call, four ways (one op = one event of the call BenchmarkPhoneCall repeats)"
go tool benchstat -row /gomaxprocs -col '/impl@(handwritten generated stateless looplab)' "$OUT/phonecall.txt"
echo
echo "## fsmgen on synthetic specs, and go build of the 1,000-state package"
go tool benchstat "$OUT/generate.txt"
