// Package flat is the flat machine the benchmarks of examples/mediaplayer
// compare the parallel one with: flat.yaml.
package flat

//go:generate go run github.com/fsmgen/fsmgen/cmd/fsmgen generate flat.yaml
