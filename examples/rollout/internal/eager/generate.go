// Package eager is examples/rollout written with a transient state where
// the rollout waits, for BenchmarkProbe.
package eager

//go:generate go run github.com/fsmgen/fsmgen/cmd/fsmgen generate eager.yaml
