#!/bin/sh
# instructions.sh counts the instructions each agent machine executes per
# event of the standard turn, under valgrind's callgrind: unlike times,
# the counts do not depend on what else the machine runs, so two builds
# (or two contenders) compare exactly on a shared machine. They are not
# times: a copy of a large value or a cache miss costs more than its
# instructions. docs/performance.md uses both.
#
# Usage: bench/instructions.sh [IMPL...] (default: every contender). The
# test binary is built without cgo, and Go's asynchronous preemption is
# off while it runs: callgrind stops on the signal that preemption sends.
# The libraries' counts leave out the collections their allocations cause,
# which run in goroutines of their own.
#
# Environment: TURNS (default 4000: the turns timed at conv=1000, besides
# the benchmark's first run of one turn), CONV (default 1000), BIN (a test
# binary of this module built with CGO_ENABLED=0, to count another build's).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
TURNS=${TURNS:-4000}
CONV=${CONV:-1000}
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=${BIN:-}
if [ -z "$bin" ]; then
	bin=$tmp/agent.test
	(cd "$here" && CGO_ENABLED=0 go test -c -o "$bin" .)
fi
[ $# -gt 0 ] || set -- generated safe-handwritten handwritten looplab stateless
for impl in "$@"; do
	case $impl in
	generated) fn='(*generated).turn' ;;
	safe-handwritten) fn='(*safeFloor).turn' ;;
	handwritten) fn='(*floorRunner).turn' ;;
	looplab) fn='(*core[*github.com/fsmgen/fsmgen/bench/looplabagent.Machine]).turn' ;;
	stateless) fn='(*core[*github.com/fsmgen/fsmgen/bench/statelessagent.Machine]).turn' ;;
	*) echo "instructions.sh: unknown contender $impl" >&2; exit 2 ;;
	esac
	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$bin" -test.run '^$' \
		-test.bench "BenchmarkTurn/conv=$CONV\$/impl=$impl\$" -test.cpu 1 -test.benchtime "${TURNS}x" >/dev/null 2>&1
	ir=$(callgrind_annotate --inclusive=yes "$tmp/out" | grep -F "bench_test.$fn [" | head -1 | awk '{gsub(",", "", $1); print $1}')
	echo "$impl conv=$CONV: $ir instructions in $((TURNS + 1)) turns, $(awk -v ir="$ir" -v t="$((TURNS + 1))" 'BEGIN { printf "%.1f", ir / t / 11 }') per event"
done
