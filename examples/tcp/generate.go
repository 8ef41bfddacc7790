package tcp

//go:generate go run github.com/fsmgen/fsmgen/cmd/fsmgen generate tcp.yaml
