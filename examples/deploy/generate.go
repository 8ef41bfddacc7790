package deploy

//go:generate go run github.com/fsmgen/fsmgen/cmd/fsmgen generate deploy.yaml
