package agent

//go:generate go run github.com/fsmgen/fsmgen/cmd/fsmgen generate ../../spec/agent.yaml
