package order

//go:generate go run github.com/fsmgen/fsmgen/cmd/fsmgen generate order.yaml
