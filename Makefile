# fsmgen: the two commands a fresh machine needs are `make generate` and `make test`.
GO ?= go
SPECS := $(wildcard spec/*.yaml examples/*/*.yaml)
# FUZZTIME is how long `make fuzz` runs each fuzz target; `make test` runs
# them for CI_FUZZTIME.
FUZZTIME ?= 1m
CI_FUZZTIME ?= 5s

.PHONY: generate test fuzz bench

# generate regenerates every output of every spec (go generate runs fsmgen
# in each generated package) and the JSON Schema copy for editors.
generate:
	$(GO) generate ./...
	$(GO) run ./cmd/fsmgen schema > docs/fsmgen.schema.json

# test vets the code, checks that every generated file is up to date, runs
# all tests (with those of the bench/ module, which check that the four
# benchmarked machines take the same steps), and fuzzes the spec pipeline
# briefly.
test:
	$(GO) vet ./...
	$(GO) run ./cmd/fsmgen check $(SPECS)
	$(GO) test ./...
	cd bench && $(GO) vet ./... && $(GO) test ./...
	$(MAKE) fuzz FUZZTIME=$(CI_FUZZTIME)

# fuzz runs each fuzz target for FUZZTIME: parse + check, and emit with
# verification of the generated Go and docs. Go spends up to a minute
# minimising each new interesting input by default, which leaves a short
# run with nothing but minimisation; FUZZMINIMIZE caps it.
FUZZMINIMIZE ?= 2s
fuzz:
	$(GO) test ./internal/fsm -run '^$$' -fuzz '^FuzzCheck$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./internal/emit -run '^$$' -fuzz '^FuzzEmit$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)

# bench runs the benchmark suite (the bench/ module: the generated agent
# machine against a hand-written floor, looplab/fsm and qmuntal/stateless;
# fsmgen itself on synthetic specs) and prints benchstat tables, the agent
# machines at GOMAXPROCS=1. About twelve minutes; see docs/performance.md.
# ROUNDS, BENCHTIME and CPUS (e.g. CPUS=1,2) tune it.
bench:
	./bench/run.sh
