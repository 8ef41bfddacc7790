// Package fuzzwatch turns a hang inside a fuzz target into a crash that
// names the input and shows every goroutine, so the fuzzer records it.
package fuzzwatch

import (
	"fmt"
	"runtime"
	"time"
)

// Limit is how long one input may take before it counts as a hang. An
// input takes a second or less on an idle machine; with the machine's two
// cores shared by several builds (load average 20, CI of 2026-12-04) the
// phone call's spec took more than ten seconds in FuzzEmit, which made the
// fuzzing fail on an input that has no fault. A hang never returns, so a
// generous limit catches it as surely, only later.
const Limit = 2 * time.Minute

// Run calls fn and panics, with the input and all goroutine stacks, if it
// has not returned within Limit.
func Run(input []byte, fn func()) {
	done := make(chan struct{})
	timer := time.AfterFunc(Limit, func() {
		select {
		case <-done:
			return
		default:
		}
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		panic(fmt.Sprintf("input %q took more than %s:\n%s", input, Limit, buf[:n]))
	})
	defer timer.Stop()
	defer close(done)
	fn()
}
