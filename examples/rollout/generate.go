package rollout

//go:generate go run github.com/fsmgen/fsmgen/cmd/fsmgen generate rollout.yaml
