// Package mediaplayer is a media player written as an fsmgen spec with a
// parallel state: mediaplayer.yaml. See docs/spec.md, "Parallel states".
package mediaplayer

//go:generate go run github.com/fsmgen/fsmgen/cmd/fsmgen generate mediaplayer.yaml
