package phonecall

//go:generate go run github.com/fsmgen/fsmgen/cmd/fsmgen generate phonecall.yaml
