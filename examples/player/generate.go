// Package player is a media player written as an fsmgen spec with history
// states: player.yaml. See docs/spec.md, "History".
package player

//go:generate go run github.com/fsmgen/fsmgen/cmd/fsmgen generate player.yaml
