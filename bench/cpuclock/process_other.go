//go:build !linux

package cpuclock

import "time"

// Process reports false: the benchmarks read the processor time on Linux
// only, and report none elsewhere.
func Process() (time.Duration, bool) { return 0, false }
