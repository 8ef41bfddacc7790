package job

//go:generate go run github.com/fsmgen/fsmgen/cmd/fsmgen generate ../../spec/job.yaml
