// Package checkout is a shop's order after checkout, written as an fsmgen
// spec whose parallel state completes when every region is final:
// checkout.yaml. See docs/spec.md, "Parallel states".
package checkout

//go:generate go run github.com/fsmgen/fsmgen/cmd/fsmgen generate checkout.yaml
