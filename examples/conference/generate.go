// Package conference is a participant's video call, written as an fsmgen
// spec whose parallel state Call has a parallel state nested as a region,
// Media (audio and video), beside the region Link: conference.yaml. See
// docs/spec.md, "Parallel states nested in parallel states".
package conference

//go:generate go run github.com/fsmgen/fsmgen/cmd/fsmgen generate conference.yaml
