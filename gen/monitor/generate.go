package monitor

//go:generate go run github.com/fsmgen/fsmgen/cmd/fsmgen generate ../../spec/monitor.yaml
