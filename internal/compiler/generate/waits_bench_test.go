package generate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/compiler/testspecs"
)

// BenchmarkGenerateWaiting times fsmgen's pipeline on parallel states of
// 4, 6 and 8 regions that each wait on a guard (see
// testspecs.WaitingRegions), and reports the size of the generated test
// file.
func BenchmarkGenerateWaiting(b *testing.B) {
	for _, n := range []int{4, 6, 8} {
		src := testspecs.WaitingRegions(n)
		b.Run(fmt.Sprintf("regions=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			size := 0
			for b.Loop() {
				size = 0
				for _, file := range pipeline(b, "probes.yaml", src) {
					if strings.HasSuffix(file.Path, "_test.go") {
						size += len(file.Content)
					}
				}
			}
			b.ReportMetric(float64(size), "test-bytes")
		})
	}
}
