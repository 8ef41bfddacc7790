// Package link is a client's connection written as an fsmgen spec with
// deferred events: link.yaml. See docs/spec.md, "Deferred events".
package link

//go:generate go run github.com/fsmgen/fsmgen/cmd/fsmgen generate link.yaml
