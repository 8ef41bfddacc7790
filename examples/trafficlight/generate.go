package trafficlight

//go:generate go run github.com/fsmgen/fsmgen/cmd/fsmgen generate trafficlight.yaml
