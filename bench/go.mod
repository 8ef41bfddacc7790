module github.com/fsmgen/fsmgen/bench

go 1.26.0

require (
	github.com/fsmgen/fsmgen v0.0.0
	github.com/looplab/fsm v1.0.3
	github.com/qmuntal/stateless v1.7.2
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da // indirect
)

replace github.com/fsmgen/fsmgen => ../

tool golang.org/x/perf/cmd/benchstat
