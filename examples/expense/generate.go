package expense

//go:generate go run github.com/fsmgen/fsmgen/cmd/fsmgen generate expense.yaml
