package generate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/compiler/emit"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
	"github.com/fsmgen/fsmgen/internal/compiler/testspecs"
)

// BenchmarkGenerateWaiting times fsmgen's pipeline on parallel states of
// 4, 6 and 8 regions that each wait on a guard (see waitingSpec), and
// reports the size of the generated test file (see testspecs.WaitingRegions).
func BenchmarkGenerateWaiting(b *testing.B) {
	for _, n := range []int{4, 6, 8} {
		src := testspecs.WaitingRegions(n)
		b.Run(fmt.Sprintf("regions=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			size := 0
			for b.Loop() {
				f, diags := spec.Parse("probes.yaml", src)
				if diags.HasErrors() {
					b.Fatal(diags)
				}
				m, diags := fsm.Build(f, fsm.Env{})
				if m == nil {
					b.Fatal(diags)
				}
				files, err := emit.All(m)
				if err != nil {
					b.Fatal(err)
				}
				size = 0
				for _, file := range files {
					if strings.HasSuffix(file.Path, "_test.go") {
						size += len(file.Content)
					}
				}
			}
			b.ReportMetric(float64(size), "test-bytes")
		})
	}
}
