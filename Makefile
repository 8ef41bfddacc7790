# fsmgen: the two commands a fresh machine needs are `make generate` and `make test`.
GO ?= go
SPECS := $(wildcard spec/*.yaml)

.PHONY: generate test

# generate regenerates every output of every spec (go generate runs fsmgen
# in each generated package) and the JSON Schema copy for editors.
generate:
	$(GO) generate ./...
	$(GO) run ./cmd/fsmgen schema > docs/fsmgen.schema.json

# test vets the code, checks that every generated file is up to date, and
# runs all tests.
test:
	$(GO) vet ./...
	$(GO) run ./cmd/fsmgen check $(SPECS)
	$(GO) test ./...
