# fsmgen: the two commands a fresh machine needs are `make generate` and `make test`.
GO ?= go
SPECS := $(wildcard spec/*.yaml examples/*/*.yaml)
# FUZZTIME is how long `make fuzz` runs each fuzz target; `make test` runs
# each for a count of inputs instead (FUZZ_CI_*), for a few seconds each:
# a timed run can fail spuriously with "context deadline exceeded" when its
# time runs out (a race in Go's fuzzing coordinator, golang/go#75804, not
# fixed in Go 1.26), and a count never does.
FUZZTIME ?= 1m
FUZZ_CI_CHECK ?= 40000x
FUZZ_CI_EMIT ?= 300x
FUZZ_CI_EVENTLOG ?= 40000x
FUZZ_CI_SANITIZE ?= 20000x
FUZZ_CI_CRON ?= 40000x
FUZZ_CI_API ?= 5000x
FUZZ_CI_STRICT ?= 10000x

.PHONY: generate test fuzz bench bench-server diff

# generate regenerates every output of every spec (go generate runs fsmgen
# in each generated package) and the JSON Schema copy for editors.
generate:
	$(GO) generate ./...
	$(GO) run ./cmd/fsmgen schema > docs/fsmgen.schema.json

# test vets the code, checks that every generated file is up to date,
# compares every spec with the previous commit's (make diff), runs all tests (with those of the bench/ module, which check that the four
# benchmarked machines take the same steps, and those of the temporal/
# modules and of agent/temporal's: the Temporal adapter and the agent's
# session on the SDK's test environment and on a real server), and fuzzes
# the spec pipeline
# briefly. It first downloads the temporal module's dependencies, which
# internal/compiler/generate's TestTemporalGlueBuilds vets a temporary
# module against offline (tests reach no network): on a machine whose
# module cache is cold it ran before the temporal module's own tests had
# downloaded them, and failed. TEST_TIMEOUT bounds each package's tests: go test's default of
# 10 minutes is near what the slowest packages take on two busy cores
# (docs/performance.md, "What make test costs"), and a package that runs
# out of it fails with every goroutine's stack, not a result.
TEST_TIMEOUT ?= 30m
# TEST runs a module's tests after `go vet ./...` has vetted it, tests
# included, with every check: go test's own vet (a few of those checks,
# another entry in the build cache) would only repeat it.
TEST = $(GO) test -vet=off -timeout $(TEST_TIMEOUT)
# GOGC is the collector's setting for make test's go commands and every
# Go process they start (the compiler, the linker, vet, the test binaries
# and the programs they run): these allocate much and live briefly, and a
# collector that runs a quarter as often saves 10 to 14% of the user time
# of the compiles and tests measured side by side (7% of a whole cold
# run's, on a loaded machine), for about 1.6 times the memory (1.2 GB for
# the largest compile, modernc.org/sqlite's; docs/performance.md, "What
# make test costs"). No test depends on it: those that measure
# memory count the bytes allocated, which it does not change.
TEST_GOGC ?= 400
test: export GOGC := $(TEST_GOGC)
# After the checks, the root module's tests (test-root) run beside the
# other modules' and the fuzzing (test-modules), each target's output
# printed whole when it ends: the root module's tests wait on the
# processes they start (the agent, servers, bubblewrap, node) more than
# they compute, and on two cores the other modules' builds (the Temporal
# server's, from a cold cache) fill that time (docs/performance.md, "What
# make test costs").
test:
	cd temporal && $(GO) mod download
	$(GO) vet ./...
	$(GO) run ./cmd/fsmgen check $(SPECS)
	$(MAKE) diff
	$(MAKE) --no-print-directory --output-sync=target -j2 test-root test-modules

.PHONY: test-root test-modules
test-root:
	$(TEST) ./...
test-modules:
	cd bench && $(GO) vet ./... && $(TEST) ./...
	cd server/internal/bench/river && $(GO) vet ./...
	cd temporal && $(GO) vet ./... && $(TEST) ./...
	cd temporal/realserver && $(GO) vet ./... && $(TEST) ./...
	cd agent/temporal && $(GO) vet ./... && $(TEST) ./...
	cd agent/temporal/realserver && $(GO) vet ./... && $(TEST) ./...
	$(MAKE) fuzz FUZZ_CHECK=$(FUZZ_CI_CHECK) FUZZ_EMIT=$(FUZZ_CI_EMIT) FUZZ_EVENTLOG=$(FUZZ_CI_EVENTLOG) FUZZ_SANITIZE=$(FUZZ_CI_SANITIZE) FUZZ_CRON=$(FUZZ_CI_CRON) FUZZ_API=$(FUZZ_CI_API) FUZZ_STRICT=$(FUZZ_CI_STRICT)

# diff runs fsmgen diff of every spec against its revision at commit BASE
# (the previous commit by default): it fails on a change that breaks saved
# data, the hand-written code or the machine's behaviour unless the spec
# declares it under breaks:. A checkout without BASE (no git, a shallow
# clone, the first commit) has nothing to compare with, and says so.
BASE ?= HEAD~1
diff:
	@if ! git rev-parse --verify --quiet '$(BASE)^{commit}' >/dev/null 2>&1; then \
		echo "make: no commit $(BASE) to compare the specs with: fsmgen diff skipped" >&2; exit 0; \
	fi; \
	bin=$$(mktemp -d) && trap 'rm -rf "$$bin"' EXIT && \
	$(GO) build -o "$$bin/fsmgen" ./cmd/fsmgen && \
	for spec in $(SPECS); do "$$bin/fsmgen" diff "git:$(BASE):$$spec" "$$spec" || exit $$?; done

# The bash tool's sandbox needs bubblewrap (bwrap). FSMGEN_REQUIRE_SANDBOX=1,
# the default on Linux, makes the tests that need it fail where it cannot
# run, instead of skipping them, so that CI cannot pass without testing the
# sandbox; `make test FSMGEN_REQUIRE_SANDBOX=0` skips them.
FSMGEN_REQUIRE_SANDBOX ?= $(if $(filter Linux,$(shell uname -s)),1,0)
test: export FSMGEN_REQUIRE_SANDBOX := $(FSMGEN_REQUIRE_SANDBOX)
test: sandbox-deps
.PHONY: sandbox-deps

# sandbox-deps installs bubblewrap when bwrap is missing and the sandbox's
# tests are required: with apt-get, as root (CI runs Debian as root),
# updating the package lists if the first try fails. Elsewhere it says what
# to install.
sandbox-deps:
	@command -v bwrap >/dev/null 2>&1 && exit 0; \
	if [ "$(FSMGEN_REQUIRE_SANDBOX)" != 1 ]; then \
		echo "make: bwrap is missing: the sandbox's tests will be skipped" >&2; exit 0; \
	fi; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
		echo "make: bubblewrap (bwrap) is missing, and only root with apt-get can install it here." >&2; \
		echo "make: install it (sudo apt-get install bubblewrap, or your system's package), or run make test FSMGEN_REQUIRE_SANDBOX=0 to skip the sandbox's tests" >&2; \
		exit 1; \
	fi; \
	echo "make: installing bubblewrap (bwrap) for the bash tool's sandbox" >&2; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get install -y bubblewrap || { apt-get update && apt-get install -y bubblewrap; }

# The web page's test (server/internal/web) drives a headless Chromium; it fails,
# rather than skips, where chromium is missing. browser-deps installs it
# when it is missing: with apt-get, as root (CI runs Debian as root),
# updating the package lists if the first try fails. Elsewhere it says what
# to install.
test: browser-deps
.PHONY: browser-deps
browser-deps:
	@command -v chromium >/dev/null 2>&1 && exit 0; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
		echo "make: chromium is missing, and only root with apt-get can install it here." >&2; \
		echo "make: install it (sudo apt-get install chromium, or your system's package, as the command chromium on PATH): the web page's test (server/internal/web) needs it" >&2; \
		exit 1; \
	fi; \
	echo "make: installing chromium for the web page's test" >&2; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get install -y chromium || { apt-get update && apt-get install -y chromium; }

# The Postgres store's tests (server/internal/pgtest starts a server of their
# own) need Debian's postgresql; they fail, rather than skip, where it is
# missing. postgres-deps installs it when it is missing: with apt-get, as
# root (CI runs Debian as root), updating the package lists if the first
# try fails. Elsewhere it says what to install.
test: postgres-deps
bench-server: postgres-deps
.PHONY: postgres-deps
postgres-deps:
	@ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 && exit 0; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
		echo "make: Postgres is missing, and only root with apt-get can install it here." >&2; \
		echo "make: install it (sudo apt-get install postgresql, or your system's package): the Postgres store's tests need it" >&2; \
		exit 1; \
	fi; \
	echo "make: installing postgresql for the Postgres store's tests" >&2; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get install -y postgresql || { apt-get update && apt-get install -y postgresql; }

# fuzz runs each fuzz target for FUZZTIME: parse + check, and emit with
# verification of the generated Go and docs; the event log's reduction of
# actions and its chain check; the runtime's strict reading of saved data
# (its JSON scanner against json.Valid, its decoders against
# json.Unmarshal, its encoders against json.Marshal, its reading of a saved machine as Save writes it against
# the general one); the agent's terminal sanitiser (agent/internal/termtext); the cron
# expression parser; the server's HTTP handlers (on the in-memory store:
# package server/internal/api's tests do not link SQLite). Go spends up
# to a minute minimising each new interesting input by default, which
# leaves a short run with nothing but minimisation; FUZZMINIMIZE caps it.
# A fuzzing run vets nothing: make test has, and fuzzing finds inputs.
FUZZMINIMIZE ?= 2s
FUZZ_CHECK ?= $(FUZZTIME)
FUZZ_EMIT ?= $(FUZZTIME)
FUZZ_EVENTLOG ?= $(FUZZTIME)
FUZZ_SANITIZE ?= $(FUZZTIME)
FUZZ_CRON ?= $(FUZZTIME)
FUZZ_API ?= $(FUZZTIME)
FUZZ_STRICT ?= $(FUZZTIME)
FUZZ = $(GO) test -vet=off -run '^$$' -fuzzminimizetime $(FUZZMINIMIZE)
fuzz:
	$(FUZZ) ./internal/compiler/fsm -fuzz '^FuzzCheck$$' -fuzztime $(FUZZ_CHECK)
	$(FUZZ) ./internal/compiler/emit -fuzz '^FuzzEmit$$' -fuzztime $(FUZZ_EMIT)
	$(FUZZ) ./agent/internal/eventlog -fuzz '^FuzzReduce$$' -fuzztime $(FUZZ_EVENTLOG)
	$(FUZZ) ./agent/internal/eventlog -fuzz '^FuzzVerify$$' -fuzztime $(FUZZ_EVENTLOG)
	$(FUZZ) ./runtime/fsmrt -fuzz '^FuzzScan$$' -fuzztime $(FUZZ_STRICT)
	$(FUZZ) ./runtime/fsmrt -fuzz '^FuzzDecode$$' -fuzztime $(FUZZ_STRICT)
	$(FUZZ) ./runtime/fsmrt -fuzz '^FuzzEncode$$' -fuzztime $(FUZZ_STRICT)
	$(FUZZ) ./runtime/fsmrt -fuzz '^FuzzLoad$$' -fuzztime $(FUZZ_STRICT)
	$(FUZZ) ./agent/internal/termtext -fuzz '^FuzzSanitize$$' -fuzztime $(FUZZ_SANITIZE)
	$(FUZZ) ./server/schedule -fuzz '^FuzzParseCron$$' -fuzztime $(FUZZ_CRON)
	$(FUZZ) ./server/internal/api -fuzz '^FuzzAPI$$' -fuzztime $(FUZZ_API)

# bench runs the benchmark suite (the bench/ module: the generated agent
# machine against a hand-written floor, looplab/fsm and qmuntal/stateless;
# fsmgen itself on synthetic specs) and prints benchstat tables, the agent
# machines at GOMAXPROCS=1. About twelve minutes; see docs/performance.md.
# ROUNDS, BENCHTIME and CPUS (e.g. CPUS=1,2) tune it.
bench:
	./bench/run.sh

# bench-server measures the cron monitoring server (server/internal/bench): durable
# pings a second and their latency (run pings with the event stream
# read, too), the start-up and memory of 100,000
# monitors, how late their misses are recorded, a background job's overhead
# per run (trigger to start); on SQLite, and on a durable Postgres the
# benchmarks start, with two instances. Then the jobs at scale, side by side
# with riverqueue/river on the same databases (server/internal/bench/river, a module
# of its own so that river stays out of go.mod): the start-up with 10,000
# and 100,000 idle jobs, first start and restart, and a burst of 2,000
# triggers; benchstat prints the two side by side. About forty minutes;
# see docs/performance.md. COUNT sets the runs of each scenario.
COUNT ?= 5
bench-server:
	$(GO) test -run '^$$' -bench . -benchtime 1x -count $(COUNT) -timeout 60m ./server/internal/bench
	@out=$$(mktemp) && trap 'rm -f "$$out" "$$out.rc"' EXIT && \
	{ (cd server/internal/bench/river && $(GO) test -run '^$$' -bench . -benchtime 1x -benchmem -count $(COUNT) -timeout 120m .); echo $$? > "$$out.rc"; } | tee "$$out" && \
	[ "$$(cat "$$out.rc")" = 0 ] && cd bench && $(GO) tool benchstat -col /impl "$$out"
