// Package phoneflow runs the phone call of package examples/phonecall as a
// Temporal workflow, through package fsmtemporal: a machine without
// timers, whose glue (phone_call_temporal_gen.go) fsmgen generates from the
// spec's output.temporal. Its tests run it on the SDK's test environment.
package phoneflow
