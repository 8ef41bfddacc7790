package generate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/compiler/emit"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// waitingSpec writes a machine whose parallel state Run has n regions,
// each starting in a state that waits on a guard of its own (a probe's
// health check, say): the step that enters Run asks every guard in each
// of its microsteps.
func waitingSpec(n int) []byte {
	var sb strings.Builder
	sb.WriteString("version: 2\nmachine: Probes\npackage: probes\noutput:\n  go: out\nstates:\n  Off: {initial: true}\n  Run:\n    parallel: true\n    states:\n")
	for i := range n {
		fmt.Fprintf(&sb, "      R%d:\n        states:\n          Checking%d: {initial: true, ignore: [Go]}\n          Healthy%d: {}\n", i, i, i)
	}
	sb.WriteString("events: {Go: {}, Stop: {}}\nguards:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  healthy%d: {}\n", i)
	}
	sb.WriteString("transitions:\n  - {from: Off, on: Go, to: Run}\n  - {from: Off, on: Stop, ignore: true}\n  - {from: Run, on: Stop, to: Off}\n")
	for i := range n {
		fmt.Fprintf(&sb, "  - {from: Healthy%d, on: Go, to: Checking%d}\n  - from: Checking%d\n    guards: [{if: healthy%d, to: Healthy%d}]\n", i, i, i, i, i)
	}
	return []byte(sb.String())
}

// BenchmarkGenerateWaiting times fsmgen's pipeline on parallel states of
// 4, 6 and 8 regions that each wait on a guard (see waitingSpec), and
// reports the size of the generated test file.
func BenchmarkGenerateWaiting(b *testing.B) {
	for _, n := range []int{4, 6, 8} {
		src := waitingSpec(n)
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
